"""Every threshold of the verdict (``metaeval.report.verdict.CHECKS``): which figure of a cell it reads, its
direction, its boundary (a value equal to the limit passes), and undefined values (None or NaN fail as
"undefined"); the metric the tau checks use; and the lines that say why a cell fails."""

from __future__ import annotations

import math

import pytest

from metaeval.report import verdict as V
from tests.helpers import results as R


def evaluate(cells: list[dict], th: dict) -> dict:
    """The verdict of cells given as short dicts, read through the results schema (as the report reads them)."""
    return V.evaluate(R.cells(*cells), th)


def _cell(key: str, value, metric: str = "v_strict", name: str = "c") -> dict:
    """A cell holding ``value`` exactly where check ``key`` reads it."""
    tau = {"min_run_tau_low": ("run", "low"), "min_run_tau": ("run", "tau"), "min_topic_tau_low": ("topic_avg", "low"),
           "min_pooled_tau_low": ("pooled", "low")}
    if key in tau:
        level, part = tau[key]
        block = {"tau": value, "ci": [None, None]} if part == "tau" else {"tau": 0.0, "ci": [value, 1.0]}
        return {"cell": name, "analysis": {"metrics": {metric: {level: block}}}}
    if key == "max_failure_rate":
        return {"cell": name, "failure_rate": value}
    if key == "min_cohen_kappa":
        return {"cell": name, "analysis": {"labels": {"cohen_kappa": value}}}
    if key == "max_abs_strictness":
        return {"cell": name, "analysis": {"labels": {"strictness_index": value}}}
    if key == "max_cost_usd":  # the schema's cost is a number: an unknown cost is a cell without usage stats
        return {"cell": name} if value is None else {"cell": name, "stats": {"cost_usd": value}}
    raise AssertionError(key)


def test_every_check_is_covered_here():
    assert set(V.CHECKS) == {"min_run_tau_low", "min_run_tau", "min_topic_tau_low", "min_pooled_tau_low",
                             "max_failure_rate", "min_cohen_kappa", "max_abs_strictness", "max_cost_usd"}


@pytest.mark.parametrize("key", sorted(V.CHECKS))
def test_check_reads_its_figure_with_its_direction_and_boundary(key):
    limit = 0.3
    lower_is_better = key.startswith("max_")
    worse, better = (limit + 0.001, limit - 0.001) if lower_is_better else (limit - 0.001, limit + 0.001)
    th = {"metric": "v_strict", key: limit}
    got = {}
    for label, value in (("at", limit), ("worse", worse), ("better", better), ("none", None), ("nan", math.nan)):
        (c,) = evaluate([_cell(key, value)], th)["cells"]
        (chk,) = c["checks"]
        assert chk["check"] == key and chk["limit"] == limit and chk["op"] == ("<=" if lower_is_better else ">=")
        got[label] = (c["status"], chk["reason"])
    assert got == {"at": ("pass", None), "worse": ("fail", "outside limit"), "better": ("pass", None),
                   "none": ("fail", "undefined"), "nan": ("fail", "undefined")}


def test_strictness_limit_holds_both_ways():
    th = {"metric": "v_strict", "max_abs_strictness": 0.1}
    st = [evaluate([_cell("max_abs_strictness", v)], th)["cells"][0]["status"] for v in (-0.1, -0.1001, 0.1, 0.1001)]
    assert st == ["pass", "fail", "pass", "fail"]


@pytest.mark.parametrize("key", ["min_run_tau_low", "min_run_tau", "min_topic_tau_low", "min_pooled_tau_low"])
def test_tau_checks_read_the_thresholds_metric_and_name_it(key):
    cell = _cell(key, 0.9, metric="v_strict")
    cell["analysis"]["metrics"].update(_cell(key, 0.1, metric="a_strict")["analysis"]["metrics"])
    assert evaluate([cell], {"metric": "v_strict", key: 0.5})["passed"]
    v = evaluate([cell], {"metric": "a_strict", key: 0.5})
    assert not v["passed"] and v["cells"][0]["checks"][0]["description"].endswith("(A_strict)")
    assert evaluate([cell], {"metric": "w", key: 0.5})["cells"][0]["checks"][0]["reason"] == "undefined"


def test_a_cell_fails_when_any_check_fails_and_the_verdict_needs_one_judged_pass():
    good = {**_cell("max_failure_rate", 0.0, name="good"), "stats": {"cost_usd": 1.0}}
    costly = {**_cell("max_failure_rate", 0.0, name="costly"), "stats": {"cost_usd": 11.0}}
    th = {"metric": "v_strict", "max_failure_rate": 0.01, "max_cost_usd": 10.0}
    v = evaluate([good, costly, {"cell": "w", "withheld": "too many FAILED"}], th)
    assert [c["status"] for c in v["cells"]] == ["pass", "fail", "withheld"]
    assert (v["passed"], v["n_passed"], v["n_failed"]) == (False, 1, 1)
    assert evaluate([good, {"cell": "w", "withheld": "too many FAILED"}], th)["passed"] is True
    assert evaluate([{"cell": "w", "withheld": "x"}], th)["passed"] is False


def test_reasons_and_headline_say_which_check_and_by_how_much():
    th = {"metric": "v_strict", "min_run_tau_low": 0.8, "max_failure_rate": 0.01}
    low = _cell("min_run_tau_low", 0.53, name="low")
    low["failure_rate"] = 0.02
    undef = {**_cell("min_run_tau_low", None, name="undef"), "failure_rate": 0.0}
    v = evaluate([low, undef], th)
    assert V.reasons(v) == [
        "low fails: lower CI of run-level tau (V_strict) is 0.53 (needs >= 0.8); failure rate is 0.02 (needs <= 0.01)",
        "undef fails: lower CI of run-level tau (V_strict) is undefined (needs >= 0.8)"]
    assert V.headline(v).startswith("Verdict: FAIL - 2 of 2 judged cell(s) miss a threshold on V_strict. low fails:")
    ok = evaluate([{**_cell("min_run_tau_low", 0.9, name="ok"), "failure_rate": 0.0}], th)
    assert V.headline(ok) == "Verdict: PASS - all 1 judged cell(s) meet the thresholds on V_strict."
    assert V.headline(evaluate([], th)) == "Verdict: FAIL - no cell could be judged."
