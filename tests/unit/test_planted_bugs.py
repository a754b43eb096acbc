"""Issue 35: one test per bug that an audit planted and the default tier let through.  Each test fails with its
one-line bug planted (checked by planting it, running the test, reverting: see docs/development.md, "Planted bugs and
the tests that catch them"); its name says what broke.

The calibration decision (``procedure.decide`` on every branch, the split sizes and streams, and the analogues of the
two bugs only ``experiments/paper_rag24``'s golden table caught: "each split / nested re-run from its own stream" and
"by more than one SE, not exactly one") is tested in ``test_calibration_decision.py``; the verdict's thresholds in
``test_verdict_thresholds.py``.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from metaeval.errors import ConfigError


# ------------------------------------------------------------------ analysis/resample.py: BCa's p0 with ties
def test_bca_counts_replicates_tied_with_the_estimate_as_half():
    """Tau replicates are discrete, so many equal the estimate: Efron's z0 = Phi^-1((#{t* < theta} + #{t* = theta}/2)
    / B).  Here #{<} = 20, #{=} = 50 of B = 100: p0 = 0.45 (without the ties term p0 = 0.20)."""
    from metaeval.analysis.resample import bca_ci

    reps = np.array([0.4] * 20 + [0.5] * 50 + [0.6] * 30)
    z0 = norm.ppf(0.45)
    z = norm.ppf([0.025, 0.975])
    q = norm.cdf(z0 + (z0 + z))  # a = 0 without jackknife replicates
    want = tuple(np.quantile(reps, q))
    assert want == (0.4, 0.6)  # q = 0.0135, 0.956 (p0 = 0.20 gives q_high = 0.61: 0.5)
    assert bca_ci(reps, 0.05, theta=0.5) == pytest.approx(want, abs=1e-12)


# ------------------------------------------------------------------ analysis/agreement.py: one count per nugget
def test_importance_agreement_counts_each_nugget_once_not_once_per_run():
    from metaeval.analysis.agreement import importance_agreement

    rows = []
    for run in ("r1", "r2"):  # two runs, each labelled the same two nuggets: importance is per nugget, not per answer
        rows.append(("q1", run, 0, "vital", "vital"))
        rows.append(("q1", run, 1, "vital", "okay"))  # the one disagreement
    joined = pd.DataFrame(rows, columns=["qid", "run_id", "nugget_id", "importance_ref", "importance_cand"])
    got = importance_agreement(joined)
    assert got["n_nuggets"] == 2
    conf = np.asarray(got["confusion"])
    assert conf.sum() == 2 and np.trace(conf) == 1
    assert got["exact_agreement"] == pytest.approx(0.5)


# ------------------------------------------------------------------ study/calibration_workflow/model.py, calibration/pairing.py
@pytest.fixture(scope="module")
def one_answer(nist_labels):
    """The labels of one NIST answer with at least 10 nuggets, cut to its first 10."""
    lab = nist_labels.labels
    counts = lab.groupby(["qid", "run_id"], observed=True).size()
    qid, run = counts[counts >= 10].index[0]
    ls = nist_labels.subset(qids=[qid], run_ids=[run], name="ref10")
    ls.labels = ls.labels.sort_values("nugget_id").head(10).reset_index(drop=True)
    return ls


def test_a_model_fitted_on_prompt_v1_refuses_labels_from_prompt_v2(one_answer):
    from metaeval.study.calibration_workflow.model import apply_model, check_fingerprints, fingerprints
    from metaeval.study.calibration_workflow.defaults import MODEL_FORMAT

    model = {"format": MODEL_FORMAT, "fingerprints": fingerprints(one_answer, {"prompt_version": "assign@v1"}),
             "models": {}, "chosen": {"v_strict": "ppi_pp"}}
    assert check_fingerprints(model, one_answer, {"prompt_version": "assign@v1"}) == []
    assert check_fingerprints(model, one_answer, {"prompt_version": "assign@v2"}) == ["prompt_version"]
    with pytest.raises(ConfigError, match=r"fitted on different judge labels: prompt_version differ"):
        apply_model(model, one_answer, settings={"prompt_version": "assign@v2"})


def test_a_vital_okay_flip_changes_the_nugget_set_fingerprint_and_apply_refuses(one_answer):
    from metaeval.calibration.pairing import nugget_set_hashes
    from metaeval.study.calibration_workflow.model import apply_model, fingerprints
    from metaeval.study.calibration_workflow.defaults import MODEL_FORMAT

    flipped = one_answer.subset(name="flipped")
    lab = flipped.labels.copy()
    first = lab["nugget_id"] == lab["nugget_id"].min()
    lab.loc[first, "importance"] = np.where(lab.loc[first, "importance"].astype(str) == "vital", "okay", "vital")
    flipped.labels = lab
    (q,) = nugget_set_hashes(one_answer)
    assert nugget_set_hashes(one_answer)[q] != nugget_set_hashes(flipped)[q]
    model = {"format": MODEL_FORMAT, "fingerprints": fingerprints(one_answer), "models": {}, "chosen": {"v_strict": "ppi_pp"}}
    with pytest.raises(ConfigError, match=r"nugget_set \(1 of 1 shared topics"):
        apply_model(model, flipped)


def test_pairing_coverage_divides_by_the_larger_side(one_answer):
    """Reference 10 label pairs on the answer, judge 5 of them: coverage 5 / max(5, 10) = 0.5, label level refused."""
    from metaeval.calibration.pairing import pair_by_text

    judge = one_answer.subset(name="half")
    judge.labels = judge.labels.head(5).reset_index(drop=True)
    p = pair_by_text(one_answer, judge)
    assert (p.matched, p.judge_pairs, p.reference_pairs) == (5, 5, 10)
    assert p.coverage == 0.5
    s = p.summary(0.95)
    assert s["label_level"] == "refused" and "5 of 10 label pairs" in s["refusal"]


# ------------------------------------------------------------------ pipeline/stages.py: importance job key
def test_importance_job_key_depends_on_importance_batch():
    from metaeval.pipeline.settings import SweepSettings
    from metaeval.pipeline.stages import importance_job
    from metaeval.types import Document, Topic

    topic, docs, nuggets = Topic("q1", "why"), [Document("d1", "text")], ["n1", "n2", "n3"]
    a, pa = importance_job("j", "p", topic, nuggets, docs, SweepSettings(importance_batch=10))
    b, pb = importance_job("j", "p", topic, nuggets, docs, SweepSettings(importance_batch=5))
    assert pa["batch"] == 10 and pb["batch"] == 5
    assert a.inputs != b.inputs and a.key != b.key
    c, _ = importance_job("j", "p", topic, nuggets, docs, SweepSettings(importance_batch=10))
    assert c.key == a.key  # and the key is a function of the inputs


# ------------------------------------------------------------------ pipeline/sweep.py: budget with the next job's cost
def test_budget_cap_counts_the_next_jobs_cost_before_sending_it():
    """budget 1.0, jobs estimated at 0.6 each: the first is sent (0.6), the second would reach 1.2: not sent."""
    from metaeval.pipeline.sweep import Sweep

    state = SimpleNamespace(budget=1.0, spent=0.0, stopped=None)
    cell = SimpleNamespace(worker_id="w")
    todo = {f"k{i}": (cell, f"spec{i}", {"i": i}, 0.6) for i in range(3)}
    jobs = Sweep._within_budget(state, "assign", todo)
    assert [j.key for j in jobs] == ["k0"]
    assert state.spent == pytest.approx(0.6) and state.spent <= 1.0
    assert state.stopped.startswith("budget cap of $1.00 reached before stage 'assign': 2 job(s) not dispatched")
    exact = SimpleNamespace(budget=1.2, spent=0.0, stopped=None)  # reaching the cap exactly is within it
    assert len(Sweep._within_budget(exact, "assign", todo)) == 2 and exact.stopped is not None


# ------------------------------------------------------------------ judges/limits.py: settle gives back est - used
def test_settle_gives_back_the_unused_part_of_the_estimate():
    from metaeval.judges.limits import RateLimiter

    async def go():
        lim = RateLimiter(concurrency=1, tpm=600)
        async with lim.slot(100):
            pass
        after_take = lim.tokens.tokens
        lim.settle(est_tokens=100, used_tokens=40)
        return after_take, lim.tokens.tokens

    after_take, after_settle = asyncio.run(go())
    assert after_take == pytest.approx(500, abs=1)  # refill is 10 tokens/s: well under one in this time
    assert after_settle == pytest.approx(560, abs=1)  # 60 unused tokens come back (used - est would take 60 more)


# ------------------------------------------------------------------ judges/batch.py: custom_id includes params
def test_batch_custom_id_differs_when_only_the_params_differ():
    from metaeval.judges.backends.base import ChatRequest
    from metaeval.judges.batch import custom_id

    msgs = ({"role": "user", "content": "label these nuggets"},)
    t0 = custom_id(ChatRequest("m", msgs, {"temperature": 0}))
    t1 = custom_id(ChatRequest("m", msgs, {"temperature": 1}))
    assert t0 != t1
    assert t0 == custom_id(ChatRequest("m", msgs, {"temperature": 0})) and len(t0) == 41 and t0.startswith("r")


# ------------------------------------------------------------------ report/verdict.py: |strictness|
def test_verdict_strictness_check_uses_the_absolute_index():
    from metaeval.report.verdict import evaluate

    cells = [{"cell": f"c{i}", "analysis": {"labels": {"strictness_index": v}}} for i, v in enumerate((-0.5, 0.05, 0.5))]
    v = evaluate(cells, {"metric": "v_strict", "max_abs_strictness": 0.1})
    assert [c["status"] for c in v["cells"]] == ["fail", "pass", "fail"]
    assert v["cells"][0]["checks"][0]["value"] == 0.5 and v["cells"][0]["checks"][0]["reason"] == "outside limit"


# ------------------------------------------------------------------ report/latex.py: minus sign in numbers
def test_latex_numbers_typeset_the_minus_sign():
    from metaeval.report.latex import _ci, _n

    assert _n(-0.5) == "$-$0.500"
    assert _n(0.25, signed=True) == "+0.250" and _n(-0.25, signed=True) == "$-$0.250"
    assert _ci([-0.1, 0.2]) == "[$-$0.10, 0.20]"
