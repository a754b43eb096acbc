"""Pair arrays reproduce metaeval.scoring exactly, so expected-credit scores are on the same scale."""

import numpy as np

from metaeval.calibration.pairing import align_pairs
from metaeval.calibration.pairs import METRICS, pairs_from_labelset
from metaeval.scoring import run_scores, score_answers


def test_observed_scores_equal_score_answers(nist_labels):
    p = pairs_from_labelset(nist_labels)
    ours = p.observed_scores()
    ref = score_answers(nist_labels)
    frame = p.answers_frame()
    assert (frame["run_id"].to_numpy() == ref["run_id"].to_numpy()).all()
    for m in METRICS:
        assert np.abs(ours[m] - ref[m].to_numpy()).max() < 1e-12


def test_run_weights_give_run_means(nist_labels):
    p = pairs_from_labelset(nist_labels)
    credit = (p.sup == 2).astype(float)
    ref = run_scores(score_answers(nist_labels)).set_index("run_id")
    for m, fam in (("v_strict", "vital"), ("a_strict", "all"), ("w_strict", "weighted")):
        via_w = np.bincount(p.pair_run(), weights=p.run_weights(fam) * credit, minlength=len(p.run_ids))
        assert np.abs(via_w - ref.loc[list(p.run_ids), m].to_numpy()).max() < 1e-12
    top = ref.loc["ldilab_gpt_4o", "v_strict"]
    assert abs(top - 0.6666) < 1e-4  # data README check value


def test_select_topics_and_align(nist_labels):
    p = pairs_from_labelset(nist_labels)
    sub = p.select_topics([0, 3])
    assert set(np.unique(sub.ans_topic)) == {0, 3}
    assert sub.ans.max() == sub.n_answers - 1
    small = nist_labels.subset(qids=[p.qids[0], p.qids[3]])
    assert len(sub.sup) == len(small.labels)
    jp, h = align_pairs(small, nist_labels)
    assert (h >= 0).sum() == len(small.labels)
    assert (h[h >= 0] == jp.sup[h >= 0]).all()
