"""The verdict: configurable pass/fail thresholds per grid cell, for CI pipelines (``metaeval report --strict``).

A thresholds file (YAML or JSON; see ``conf/report/thresholds.yaml``) is a mapping::

    metric: v_strict            # the metric the tau checks use
    min_run_tau_low: 0.8        # lower 95% CI bound of the run-level tau
    max_failure_rate: 0.01      # FAILED support labels / all labels

Every key of ``CHECKS`` may be given; ``null`` switches a check off.  A cell passes when every active check
passes; a check whose value is undefined (e.g. tau-b when the judge gives every run the same score) fails with
that reason.  Skipped cells are listed but not judged; a verdict with no judged cell at all does not pass.  Unknown keys are a ``ConfigError`` naming the file.
"""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Any, Callable

from metaeval.errors import ConfigError, FormatError

DEFAULTS: dict[str, Any] = {"metric": "v_strict", "min_run_tau_low": 0.8, "max_failure_rate": 0.01}


def _tau(level: str, part: str) -> Callable[[dict[str, Any], str], Any]:
    def get(cell: dict[str, Any], metric: str) -> Any:
        b = (((cell.get("analysis") or {}).get("metrics") or {}).get(metric) or {}).get(level) or {}
        if part == "tau":
            return b.get("tau")
        return (b.get("ci") or [None, None])[0]
    return get


def _labels(key: str) -> Callable[[dict[str, Any], str], Any]:
    def get(cell: dict[str, Any], metric: str) -> Any:
        lab = (cell.get("analysis") or {}).get("labels") or {}
        return lab.get(key)
    return get


def _abs_strictness(cell: dict[str, Any], metric: str) -> Any:
    v = _labels("strictness_index")(cell, metric)
    return None if v is None else abs(v)


#: key -> (description, value getter, comparison, unit)
CHECKS: dict[str, tuple[str, Callable[[dict[str, Any], str], Any], Callable[[float, float], bool], str]] = {
    "min_run_tau_low": ("lower CI of run-level tau", _tau("run", "low"), operator.ge, ">="),
    "min_run_tau": ("run-level tau", _tau("run", "tau"), operator.ge, ">="),
    "min_topic_tau_low": ("lower CI of per-topic (mean) tau", _tau("topic_avg", "low"), operator.ge, ">="),
    "min_pooled_tau_low": ("lower CI of pooled tau", _tau("pooled", "low"), operator.ge, ">="),
    "max_failure_rate": ("failure rate", lambda c, m: c.get("failure_rate"), operator.le, "<="),
    "min_cohen_kappa": ("Cohen kappa on support labels", _labels("cohen_kappa"), operator.ge, ">="),
    "max_abs_strictness": ("|net strictness index|", _abs_strictness, operator.le, "<="),
    "max_cost_usd": ("cost (USD)", lambda c, m: (c.get("stats") or {}).get("cost_usd"), operator.le, "<="),
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
            if not isinstance(v, str) or not v.strip():
                raise FormatError(str(p), 0, "metric", f"expected a metric name, got {v!r}")
            th["metric"] = v.strip().lower()
            continue
        if k not in CHECKS:
            raise FormatError(str(p), 0, k, f"unknown threshold; expected one of metric, {', '.join(CHECKS)}")
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise FormatError(str(p), 0, k, f"expected a number or null, got {v!r}")
        th[k] = None if v is None else float(v)
    return th


def evaluate(cells: list[dict[str, Any]], thresholds: dict[str, Any]) -> dict[str, Any]:
    """``{"thresholds", "passed": bool, "n_failed", "cells": [{cell, status, checks: [...]}, ...]}``."""
    metric = thresholds.get("metric", DEFAULTS["metric"])
    active = {k: v for k, v in thresholds.items() if k in CHECKS and v is not None}
    out = []
    for c in cells:
        if c.get("skipped"):
            out.append({"cell": c["cell"], "status": "skipped", "reason": c["skipped"], "checks": []})
            continue
        checks = []
        for key, limit in active.items():
            desc, get, cmp, sign = CHECKS[key]
            value = get(c, metric)
            ok = value is not None and value == value and bool(cmp(float(value), float(limit)))
            checks.append({"check": key, "description": desc + (f" ({metric})" if "tau" in key else ""),
                           "value": value, "limit": limit, "op": sign, "passed": ok,
                           "reason": None if ok else ("undefined" if value is None or value != value else "outside limit")})
        out.append({"cell": c["cell"], "status": "pass" if all(x["passed"] for x in checks) else "fail", "checks": checks})
    n_failed = sum(r["status"] == "fail" for r in out)
    n_passed = sum(r["status"] == "pass" for r in out)
    return {"thresholds": {"metric": metric, **active}, "passed": n_failed == 0 and n_passed > 0, "n_failed": n_failed,
            "n_passed": n_passed, "cells": out}
