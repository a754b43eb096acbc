"""plan_study: pilot/track bookkeeping, the strategy fallback for judges with their own nuggets, and errors."""

import pytest

from metaeval.errors import ConfigError
from metaeval.simulation import simulate_judge
from metaeval.study.assessor_plan import plan_study

FAST = {"metrics": ["v_strict"], "reps": 20, "replay_reps": 0, "bootstrap": 20}


@pytest.fixture(scope="module")
def small(nist_labels):
    return nist_labels.subset(qids=nist_labels.qids[:9])


def test_pilot_is_the_shared_topics_and_the_rest_is_ranked(small):
    judge = simulate_judge(small, seed=3, name="j")
    plan = plan_study(small.subset(qids=small.qids[:5]), judge, FAST, seed=0)
    assert plan["pilot"]["topics"] == 5 and plan["pilot"]["judge_topics"] == 9 and plan["pilot"]["total_topics"] == 9
    assert plan["next_topics"]["strategy"] == "confusion" and plan["pilot"]["pairing_coverage"] == pytest.approx(1.0)
    assert sorted(r["qid"] for r in plan["next_topics"]["list"]) == small.qids[5:]
    assert [r["rank"] for r in plan["next_topics"]["list"]] == [1, 2, 3, 4]


def test_judge_with_its_own_nuggets_falls_back_to_run_spread(small):
    judge = simulate_judge(small, seed=3, name="own")
    judge.labels["nugget"] = "rewritten: " + judge.labels["nugget"].astype(str)
    plan = plan_study(small.subset(qids=small.qids[:5]), judge, FAST, seed=0)
    assert plan["pilot"]["pairing_coverage"] == 0.0 and plan["next_topics"]["strategy"] == "runs"
    with pytest.raises(ConfigError, match="paired by text"):
        plan_study(small.subset(qids=small.qids[:5]), judge, {**FAST, "strategy": "confusion"}, seed=0)


def test_plan_errors(small):
    judge = simulate_judge(small, seed=1)
    with pytest.raises(ConfigError, match="pilot needs at least 3"):
        plan_study(small.subset(qids=small.qids[:2]), judge, FAST, seed=0)
    with pytest.raises(ConfigError, match="smaller than"):
        plan_study(small, judge, {**FAST, "total_topics": 4}, seed=0)
