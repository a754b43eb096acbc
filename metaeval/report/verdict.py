"""The verdict: configurable pass/fail thresholds per grid cell, for CI pipelines (``metaeval report --strict``).

A thresholds file (YAML or JSON; see ``metaeval/report/thresholds.yaml`` in the package) is a mapping::

    metric: v_strict            # the metric the tau checks use (default: the study's primary metric)
    min_run_tau_low: 0.8        # lower 95% CI bound of the run-level tau
    max_failure_rate: 0.01      # FAILED support labels / all labels

``metric`` is any alias of :func:`metaeval.measures.measure` (``V_strict``, ``strict_vital_score``); left out, the
tau checks use the primary metric the study recorded (``analysis.primary_metric``, the first of ``analysis.metrics``).

Every key of ``CHECKS`` may be given; ``null`` switches a check off.  A cell passes when every active check
passes; a check whose value is undefined (e.g. tau-b when the judge gives every run the same score) fails with
that reason.  Skipped cells are listed but not judged; a verdict with no judged cell at all does not pass.  Unknown keys are a ``ConfigError`` naming the file.
"""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from metaeval.errors import ConfigError, FormatError
from metaeval.formatting import interval
from metaeval.measures import DEFAULT_PRIMARY, display_name, measure
from metaeval.study.records import CellSummary, LabelAgreement, Stratum, StudyCell, TauEstimate

#: the built-in thresholds; ``metric`` None: the study's primary metric (``build_report`` fills it in)
DEFAULTS: dict[str, Any] = {"metric": None, "min_run_tau_low": 0.8, "max_failure_rate": 0.01}


def _tau(level: str, part: str) -> Callable[[CellSummary, str], Any]:
    def get(cell: CellSummary, metric: str) -> Any:
        b = cell.tau(metric, level)
        return b.tau if part == "tau" else b.low
    return get


def _labels(key: str) -> Callable[[CellSummary, str], Any]:
    def get(cell: CellSummary, metric: str) -> Any:
        lab = cell.label_agreement  # the analysis' label agreement block
        return None if lab is None else getattr(lab, key)
    return get


def _abs_strictness(cell: CellSummary, metric: str) -> Any:
    v = _labels("strictness_index")(cell, metric)
    return None if v is None else abs(v)


#: key -> (description, value getter, comparison, unit)
CHECKS: dict[str, tuple[str, Callable[[CellSummary, str], Any], Callable[[float, float], bool], str]] = {
    "min_run_tau_low": ("lower CI of run-level tau", _tau("run", "low"), operator.ge, ">="),
    "min_run_tau": ("run-level tau", _tau("run", "tau"), operator.ge, ">="),
    "min_topic_tau_low": ("lower CI of per-topic (mean) tau", _tau("topic_avg", "low"), operator.ge, ">="),
    "min_pooled_tau_low": ("lower CI of pooled tau", _tau("pooled", "low"), operator.ge, ">="),
    "max_failure_rate": ("failure rate", lambda c, m: c.failure_rate, operator.le, "<="),
    "min_cohen_kappa": ("Cohen kappa on support labels", _labels("cohen_kappa"), operator.ge, ">="),
    "max_abs_strictness": ("|net strictness index|", _abs_strictness, operator.le, "<="),
    "max_cost_usd": ("cost (USD)", lambda c, m: None if c.stats is None else c.stats.cost_usd, operator.le, "<="),
}


def load_thresholds(path: str | Path | None) -> dict[str, Any]:
    """Defaults, updated by the file at ``path`` (YAML by extension .yaml/.yml, else JSON)."""
    th = dict(DEFAULTS)
    if path is None:
        return th
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read thresholds file ({exc.strerror})") from exc
    if p.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            obj = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            line = getattr(getattr(exc, "problem_mark", None), "line", -1) + 1
            raise FormatError(str(p), line, "", f"not valid YAML: {exc}") from exc
    else:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(str(p), exc.lineno, "", f"not valid JSON: {exc.msg}") from exc
    if obj is None:
        obj = {}
    if not isinstance(obj, dict):
        raise FormatError(str(p), 1, "", "expected a mapping of threshold names to values")
    for k, v in obj.items():
        if k == "metric":  # checked against the metrics the study computed when the report is built
            if v is None:
                continue  # the study's primary metric
            if not isinstance(v, str) or not v.strip():
                raise FormatError(str(p), 0, "metric", f"expected a metric name, got {v!r}")
            try:
                th["metric"] = measure(v).name
            except ConfigError as exc:
                raise FormatError(str(p), 0, "metric", str(exc)) from None
            continue
        if k not in CHECKS:
            raise FormatError(str(p), 0, k, f"unknown threshold; expected one of metric, {', '.join(CHECKS)}")
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise FormatError(str(p), 0, k, f"expected a number or null, got {v!r}")
        th[k] = None if v is None else float(v)
    return th


def evaluate(cells: Sequence[CellSummary], thresholds: dict[str, Any]) -> dict[str, Any]:
    """``{"thresholds", "passed": bool, "n_failed", "cells": [{cell, status, checks: [...]}, ...]}``; the tau checks
    use ``thresholds["metric"]`` (any alias; None: V_strict, the default primary metric)."""
    metric = measure(thresholds.get("metric") or DEFAULT_PRIMARY).name
    active = {k: v for k, v in thresholds.items() if k in CHECKS and v is not None}
    out = []
    for c in cells:
        if c.skipped:
            out.append({"cell": c.cell, "status": "skipped", "reason": c.skipped, "checks": []})
            continue
        if c.withheld:  # too many FAILED labels: the study computed no figures to check (study.run)
            out.append({"cell": c.cell, "status": "withheld", "reason": c.withheld, "checks": []})
            continue
        checks = []
        for key, limit in active.items():
            desc, get, cmp, sign = CHECKS[key]
            value = get(c, metric)
            ok = value is not None and value == value and bool(cmp(float(value), float(limit)))
            checks.append({"check": key, "description": desc + (f" ({display_name(metric)})" if "tau" in key else ""),
                           "value": value, "limit": limit, "op": sign, "passed": ok,
                           "reason": None if ok else ("undefined" if value is None or value != value else "outside limit")})
        out.append({"cell": c.cell, "status": "pass" if all(x["passed"] for x in checks) else "fail", "checks": checks})
    n_failed = sum(r["status"] == "fail" for r in out)
    n_passed = sum(r["status"] == "pass" for r in out)
    return {"thresholds": {"metric": metric, **active}, "passed": n_failed == 0 and n_passed > 0, "n_failed": n_failed,
            "n_passed": n_passed, "cells": out}


def reasons(v: dict[str, Any]) -> list[str]:
    """One plain line per failing cell naming the checks it fails, e.g. ``"x fails: lower CI of run-level tau
    (v_strict) 0.53 < 0.8"`` (an undefined value says so)."""
    out = []
    for c in v["cells"]:
        if c["status"] != "fail":
            continue
        bad = []
        for x in c["checks"]:
            if x["passed"]:
                continue
            val = "undefined" if x["value"] is None or x["value"] != x["value"] else f"{float(x['value']):.3g}"
            want = {">=": "needs >=", "<=": "needs <="}.get(x["op"], x["op"])
            bad.append(f"{x['description']} is {val} ({want} {x['limit']:g})")
        out.append(f"{c['cell']} fails: " + "; ".join(bad))
    return out


def headline(v: dict[str, Any]) -> str:
    """``PASS``/``FAIL`` with the counts, and the reasons of the failing cells (the verdict and why, in one place)."""
    judged = v["n_passed"] + v["n_failed"]
    on = display_name(str(v["thresholds"].get("metric")))
    head = (f"Verdict: PASS - all {judged} judged cell(s) meet the thresholds on {on}."
            if v["passed"] else
            f"Verdict: FAIL - {v['n_failed']} of {judged} judged cell(s) miss a threshold on {on}."
            if judged else "Verdict: FAIL - no cell could be judged.")
    why = reasons(v) + [f"{c['cell']} not judged: {c['reason']}" for c in v["cells"] if c["status"] == "withheld"]
    return head + (" " + " ".join(r.rstrip(".") + "." for r in why) if why else "")


def _labels_strictness(lab: LabelAgreement | None) -> dict[str, Any] | None:
    """The same figures from the analysis' label agreement (for a study written before ``strictness_by_importance``):
    the strictness index with its topic-bootstrap CI and the support -> partial / not shares of the label shifts."""
    if lab is None or lab.strictness_index is None:
        return None
    ci = lab.strictness_interval
    ci = None if ci is None else list(ci)
    share = {s.get("candidate"): s.get("pct_of_reference_label") for s in lab.shifts
             if s.get("reference") == "support"}
    pct = share.get("partial_support")
    raised = [s.get("pct_of_reference_label") or 0.0 for s in lab.shifts
              if s.get("reference") == "not_support" and s.get("candidate") in ("partial_support", "support")]
    return {"index": lab.strictness_index, "ci": ci, "support_to_partial": None if pct is None else pct / 100,
            "support_to_not": None if share.get("not_support") is None else share["not_support"] / 100,
            "not_raised": sum(raised) / 100 if raised else None}


def _stratum_strictness(s: Stratum) -> dict[str, Any]:
    """The figures of the sentence from the study's strictness on all nuggets (``strictness_by_importance``)."""
    return {"index": s.index, "ci": list(s.ci), "support_to_partial": s.support_to_partial,
            "support_to_not": s.support_to_not, "not_raised": s.not_raised}


def plain_summary(cells: Sequence[CellSummary], study_cells: Mapping[str, StudyCell], metric: str,
                  bar: float = 0.8) -> list[str]:
    """One plain-language sentence per judged cell, from what the study computed (nothing recomputed):

    strictness (share of the assessors' ``support`` labels the judge made ``partial_support``, and the net
    strictness index with the agreement table's topic-bootstrap CI where the analysis has one), the run-ranking tau with its CI and whether it is fine for
    leaderboards (lower CI bound >= ``bar``), the per-topic (mean) tau and whether it is fine for per-topic
    decisions (same rule), and the mean per-run bias (judge minus reference) with its CI."""
    out = []
    for c in cells:
        if c.skipped:
            continue
        cid = c.cell
        sc = study_cells.get(cid)
        parts = []
        lab = _labels_strictness(c.label_agreement)
        by_imp = sc.strictness_by_importance if sc is not None else None
        stratum = by_imp.strata.get("all") if by_imp is not None else None
        st = _stratum_strictness(stratum) if stratum is not None else lab
        if st is not lab and lab and lab.get("ci"):  # the interval of the agreement table (topic bootstrap), so the
            st = {**st, "ci": lab["ci"]}              # sentence and the table's "reading" column agree
        if st and st.get("index") is not None:
            lo, hi = (st.get("ci") or [None, None])
            kind = ("stricter than the assessors" if lo is not None and lo > 0 else
                    "more lenient than the assessors" if hi is not None and hi < 0 else
                    "about as strict as the assessors (no significant net strictness)")
            s = f"judge {kind}"
            if st.get("support_to_partial") is not None:
                s += (f": {100 * st['support_to_partial']:.0f}% of the assessors' supports became partial and "
                      f"{100 * (st.get('support_to_not') or 0):.0f}% not support")
            if st.get("not_raised") is not None:
                s += f"; {100 * st['not_raised']:.0f}% of their not-supports were raised"
            s += f"; net strictness {st['index']:+.2f}{interval(st.get('ci'), lead=' ')}"
            parts.append(s)
        elif sc is not None and not sc.shares_reference_nuggets:
            parts.append("judge made its own nuggets (no label-level comparison)")
        run, top = c.tau(metric, "run"), c.tau(metric, "topic_avg")
        parts.append(_tau_clause(run, bar, "run ranking tau", "run ranking tau undefined (a side gives every run the "
                                 "same score)", "fine for leaderboards",
                                 f"not reliable for leaderboards (lower bound below {bar:g})"))
        parts.append(_tau_clause(top, bar, "per-topic tau", "per-topic tau undefined", "fine for per-topic decisions",
                                 "not for per-topic decisions"))
        mb = sc.bias.metrics.get(metric) if sc is not None and sc.bias is not None else None
        if mb is not None and mb.mean.bias is not None:
            b, ci = mb.mean.bias, mb.mean.ci
            sig = ci[0] is not None and (ci[0] > 0 or ci[1] < 0)
            parts.append(f"run scores {'higher' if b > 0 else 'lower'} than the assessors' by "
                         f"{abs(b):.3f} on average{interval(ci, lead=' ')}" + ("" if sig else " (not significant)"))
        out.append(f"{cid}: " + "; ".join(parts) + ".")
    return out


def _tau_clause(est: TauEstimate, bar: float, name: str, undefined: str, fine: str, not_fine: str) -> str:
    """``name 0.85 [0.70, 0.95], fine`` when the CI's lower bound reaches ``bar``, else ``..., not_fine``;
    ``undefined`` when the study found tau undefined."""
    if est.tau is None:
        return undefined
    lo = est.low
    return f"{name} {est.tau:.2f}{interval(est.ci, lead=' ')}, " + (fine if lo is not None and lo >= bar else not_fine)
