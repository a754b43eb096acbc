"""The one raw leaderboard (metaeval.study.leaderboard.raw_leaderboards): run means and ranks by hand, intervals
from the one topic bootstrap on the analysis stream, moved by the analysis seed."""

import numpy as np
import pytest

from metaeval.analysis.resample import bootstrap_run_means
from metaeval.scoring import run_scores, score_answers
from metaeval.study.leaderboard import raw_leaderboards


@pytest.fixture(scope="module")
def small(nist_labels):
    return nist_labels.subset(qids=nist_labels.qids[:8], run_ids=nist_labels.run_ids[:6])


def test_raw_leaderboard_is_the_topic_bootstrap_of_run_means(small):
    sc = score_answers(small)
    lb = raw_leaderboards(small, run_scores(sc), ["v_strict"], n_boot=300, seed=5)
    rows = {r["run_id"]: r for r in lb["metrics"]["v_strict"]}
    qids, runs = sorted(sc["qid"].unique()), sorted(sc["run_id"].unique())
    X = sc.pivot(index="qid", columns="run_id", values="v_strict").reindex(index=qids, columns=runs).to_numpy(float)
    b = bootstrap_run_means(X, 300, seed=5)
    for k, run in enumerate(runs):
        assert rows[run]["raw"] == pytest.approx(np.nanmean(X[:, k]))
        assert rows[run]["raw_ci"] == pytest.approx([b.ci_low[k], b.ci_high[k]])
        assert 0.0 <= rows[run]["raw_ci"][0] <= rows[run]["raw_ci"][1] <= 1.0  # inside the scores' range
        assert rows[run]["reference"] == pytest.approx(rows[run]["raw"]) and rows[run]["rank_shift"] == 0  # judge = ref
    ranks = sorted((r["raw_rank"], -r["raw"]) for r in rows.values())
    assert [x[0] for x in ranks][0] == 1 and ranks == sorted(ranks, key=lambda x: x[1])  # rank 1 = highest


def test_analysis_seed_moves_the_raw_intervals_and_reproduces_them(small):
    a = raw_leaderboards(small, None, ["a"], n_boot=200, seed=0)["metrics"]["a"]
    b = raw_leaderboards(small, None, ["a"], n_boot=200, seed=7)["metrics"]["a"]
    again = raw_leaderboards(small, None, ["a"], n_boot=200, seed=0)["metrics"]["a"]
    assert [r["raw_ci"] for r in a] == [r["raw_ci"] for r in again]
    assert [r["raw"] for r in a] == [r["raw"] for r in b]  # estimates do not depend on the seed
    assert [r["raw_ci"] for r in a] != [r["raw_ci"] for r in b]
