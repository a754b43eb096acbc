"""Leave-topics-out validation: folds, no evaluation on fitted topics, tau against the analysis package."""

import numpy as np
import pytest

from metaeval.calibration import validate as V
from metaeval.calibration.pairs import pairs_from_labelset
from metaeval.simulation import simulate_judge
from metaeval.calibration.tau import tau3_matrix
from metaeval.errors import ConfigError


def test_folds_partition_topics():
    folds = V.topic_folds(21, 5, np.random.default_rng(0))
    allt = np.concatenate(folds)
    assert sorted(allt.tolist()) == list(range(21))
    assert {len(f) for f in folds} == {4, 5}
    with pytest.raises(ConfigError):
        V.topic_folds(3, 5, np.random.default_rng(0))


def test_check_disjoint_refuses_overlap():
    V.check_disjoint([0, 1, 2], [3, 4])
    with pytest.raises(AssertionError):
        V.check_disjoint([0, 1, 2], [2, 4])


def test_methods_never_see_held_out_topics(nist_labels, monkeypatch):
    sim = simulate_judge(nist_labels, seed=1)
    jp = pairs_from_labelset(sim)
    h = pairs_from_labelset(nist_labels).sup
    seen = []
    real = V.fit_apply

    def spy(method, train_j, train_h, test_j, *a, **k):
        seen.append((set(np.unique(train_j.ans_topic)), set(np.unique(test_j.ans_topic))))
        return real(method, train_j, train_h, test_j, *a, **k)

    monkeypatch.setattr(V, "fit_apply", spy)
    recs = V.cross_validate_pairs(jp, h, ["ppi", "matrix"], folds=4, rng=np.random.default_rng(2), metrics=["v_strict"])
    assert len(seen) == 8 and len(recs) == 8
    held_union = set()
    for train, test in seen:
        assert not train & test and train | test == set(range(21))
        held_union |= test
    assert held_union == set(range(21))


def test_fast_tau_equals_analysis_tau_levels(nist_labels):
    from metaeval.analysis.levels import tau_levels
    from metaeval.scoring import score_answers

    sim = simulate_judge(nist_labels, seed=9)
    ref, cand = score_answers(nist_labels), score_answers(sim)
    lv = tau_levels(ref, cand, metric="v_strict", variant="b")
    r = ref.pivot(index="qid", columns="run_id", values="v_strict")
    c = cand.pivot(index="qid", columns="run_id", values="v_strict").reindex(index=r.index, columns=r.columns)
    ours = tau3_matrix(r.to_numpy(float), c.to_numpy(float), r.mean().to_numpy(), c.mean().to_numpy())
    assert abs(ours["topic_avg"] - lv.topic_avg) < 1e-9
    assert abs(ours["pooled"] - lv.pooled) < 1e-9
    assert abs(ours["run"] - lv.run) < 1e-9


def test_cross_validate_labelsets_reports_before_after(nist_labels):
    sim = simulate_judge(nist_labels, seed=4)
    res = V.cross_validate(nist_labels, sim, ["ppi", "posterior"], folds=3, seed=0, metrics=["v_strict"])
    f = res["methods"]["ppi"]["v_strict"]
    assert f["bias_before"] < -0.05                    # Figure-6 judge is stricter on V_strict
    assert abs(f["bias_after"]) < abs(f["bias_before"]) / 3
    assert 0 <= f["coverage"] <= 1 and f["mae_after"] < f["mae_before"]
    assert set(f["tau_before"]) == {"run", "topic_avg", "pooled"}
    with pytest.raises(ConfigError):
        V.cross_validate(nist_labels.subset(qids=nist_labels.qids[:2]), sim, ["ppi"], folds=3)
