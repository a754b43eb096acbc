"""The report's numeric tables as JSON-ready records (one dict per row), from ``summary.json`` and ``analysis/``.

* ``usage``: per cell judge calls, model requests, tokens, cost, cache hits, retries, failure rate;
* ``tau``: Kendall's tau at the run / topic-average / pooled levels with the analysis' topic-bootstrap CIs;
* ``descriptive``: the paper's Table 4 per label source (reference first);
* ``strictness``: net strictness index ``p_lower - p_higher`` (share of pairs the judge labels lower minus
  higher on not < partial < support) with CI, the Stuart-Maxwell test of marginal homogeneity and the label shifts;

Calibration is rendered by ``metaeval.report.calibration_section`` from each cell's ``calibration.json``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from metaeval.formatting import p_value, percent, text
from metaeval.report.model import Table, fmt, p_text

LEVELS = ("run", "topic_avg", "pooled")
LEVEL_NAMES = {"run": "run-level", "topic_avg": "per-topic (mean)", "pooled": "pooled"}
Column = tuple[str, str, Callable[[Any], str], bool]  # key, header, formatter, numeric


def to_table(records: Sequence[dict[str, Any]], columns: Sequence[Column], caption: str = "") -> Table:
    return Table([c[1] for c in columns], [[c[2](r.get(c[0])) for c in columns] for r in records], caption,
                 [c[3] for c in columns])


def _s(x: Any) -> str:
    return text(x)


def _pct(x: Any) -> str:
    return percent(x, missing="-")


# ------------------------------------------------------------------ usage
def usage(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for c in cells:
        if c.get("skipped"):
            rows.append({"cell": c["cell"], "judge": c.get("judge"), "prompt": c.get("prompt"), "strategy": c.get("strategy"),
                         "skipped": c["skipped"]})
            continue
        st = c.get("stats") or {}
        rows.append({"cell": c["cell"], "judge": c.get("judge"), "prompt": c.get("prompt"), "strategy": c.get("strategy"),
                     "judge_calls": st.get("judge_calls", 0), "model_requests": st.get("calls", 0),
                     "input_tokens": st.get("input_tokens", 0), "output_tokens": st.get("output_tokens", 0),
                     "cost_usd": st.get("cost_usd", 0.0), "cache_hits": st.get("cache_hits", 0),
                     "retries": st.get("retries", 0), "reasks": st.get("reasks", 0), "jobs": st.get("jobs", 0),
                     "reused_jobs": st.get("reused", 0), "failed_jobs": st.get("failed_jobs", 0),
                     "labels": c.get("labels"), "failed_labels": c.get("failed_labels"),
                     "failure_rate": c.get("failure_rate")})
    return rows


USAGE_COLUMNS: list[Column] = [
    ("cell", "cell", _s, False), ("jobs", "jobs", _s, True), ("reused_jobs", "reused", _s, True),
    ("judge_calls", "judge calls", _s, True), ("model_requests", "model requests", _s, True),
    ("input_tokens", "input tokens", _s, True), ("output_tokens", "output tokens", _s, True),
    ("cost_usd", "cost (USD)", lambda x: fmt(x, 4), True), ("cache_hits", "cache hits", _s, True),
    ("retries", "retries", _s, True), ("reasks", "re-asks", _s, True), ("failed_labels", "failed labels", _s, True),
    ("failure_rate", "failure rate", _pct, True),
]


# ------------------------------------------------------------------ tau
def tau(cells: list[dict[str, Any]], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """One record per (cell, metric, level): tau, ci, n_topics (topic_avg: topics where tau is defined)."""
    rows = []
    for c in cells:
        a = c.get("analysis") or {}
        for m in metrics:
            blk = (a.get("metrics") or {}).get(m) or {}
            for lv in LEVELS:
                b = blk.get(lv) or {}
                ci = b.get("ci") or [None, None]
                rows.append({"cell": c["cell"], "metric": m, "level": lv, "tau": b.get("tau"), "ci_low": ci[0],
                             "ci_high": ci[1], "n_topics": b.get("n_topics"), "n_topics_skipped": b.get("n_topics_skipped")})
    return rows


def tau_lookup(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["cell"], r["metric"], r["level"]): r for r in rows}


# ------------------------------------------------------------------ descriptive (Table 4)
DESCRIPTIVE_COLUMNS: list[Column] = [
    ("name", "label source", _s, False), ("role", "role", _s, False), ("topics", "topics", _s, True),
    ("nuggets_per_topic", "nuggets / topic", lambda x: fmt(x, 1), True),
    ("nugget_len_tokens", "nugget length (tokens)", lambda x: fmt(x, 1), True),
    ("pct_vital", "% vital", lambda x: fmt(x, 1), True), ("pct_okay", "% okay", lambda x: fmt(x, 1), True),
    ("pct_not_support", "% not support", lambda x: fmt(x, 1), True),
    ("pct_partial_support", "% partial", lambda x: fmt(x, 1), True),
    ("pct_support", "% support", lambda x: fmt(x, 1), True), ("pct_failed", "% failed", lambda x: fmt(x, 1), True),
]


def descriptive(frame) -> list[dict[str, Any]]:
    """Records from ``analysis/descriptive.csv`` (reference first, then the cells)."""
    if frame is None:
        return []
    import math

    recs = frame.to_dict(orient="records")
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in recs]


# ------------------------------------------------------------------ strictness
def strictness(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Support-label agreement and strictness per cell that labels the reference's nuggets."""
    rows = []
    for c in cells:
        lab = (c.get("analysis") or {}).get("labels")
        if not lab:
            continue
        # the topic-clustered interval where the analysis has it (pairs of one topic are not independent)
        ci = (lab.get("clustered") or {}).get("strictness_ci_topic") or lab.get("strictness_ci") or [None, None]
        shifts = [s for s in lab.get("shifts", []) if s.get("changed") and s.get("count")]
        shifts.sort(key=lambda s: -s["count"])
        rows.append({"cell": c["cell"], "n": lab.get("n"), "exact_agreement": lab.get("exact_agreement"),
                     "cohen_kappa": lab.get("cohen_kappa"), "weighted_kappa": lab.get("weighted_kappa"),
                     "krippendorff_alpha": lab.get("krippendorff_alpha"),
                     "strictness_index": lab.get("strictness_index"), "strictness_ci": ci,
                     "p_lower": lab.get("p_lower"), "p_higher": lab.get("p_higher"),
                     "stuart_maxwell_stat": lab.get("stuart_maxwell_stat"), "stuart_maxwell_df": lab.get("stuart_maxwell_df"),
                     "stuart_maxwell_p": lab.get("stuart_maxwell_p"),
                     **{k: v for k, v in lab.items() if k.startswith("stuart_maxwell_clustered")},
                     "reference_mix": lab.get("reference_mix"),
                     "candidate_mix": lab.get("candidate_mix"), "shifts": shifts, "failed": lab.get("failed"),
                     "order": lab.get("order"), "confusion": lab.get("confusion")})
    return rows


def strictness_reading(r: dict[str, Any]) -> str:
    """Plain words for a strictness row."""
    lo, hi = (r.get("strictness_ci") or [None, None])
    idx = r.get("strictness_index")
    if idx is None:
        return "undefined"
    if lo is not None and lo > 0:
        return "stricter than the reference"
    if hi is not None and hi < 0:
        return "more lenient than the reference"
    return "no significant net strictness"


STRICTNESS_COLUMNS: list[Column] = [
    ("cell", "cell", _s, False), ("n", "pairs", _s, True), ("exact_agreement", "exact agreement", lambda x: fmt(x), True),
    ("cohen_kappa", "Cohen kappa", lambda x: fmt(x), True), ("weighted_kappa", "weighted kappa", lambda x: fmt(x), True),
    ("net", "net strictness [95% CI, topic bootstrap]", _s, True), ("p_lower", "judge lower", _pct, True), ("p_higher", "judge higher", _pct, True),
    ("sm", "Stuart-Maxwell Wald (df), p", _s, True), ("reading", "reading", _s, False),
]


def strictness_table_records(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        ci = r.get("strictness_ci") or [None, None]
        net = "-" if r.get("strictness_index") is None else f"{r['strictness_index']:+.3f} [{fmt(ci[0])}, {fmt(ci[1])}]"
        sm = "-" if r.get("stuart_maxwell_stat") is None else (
            f"{r['stuart_maxwell_stat']:.2f} ({r.get('stuart_maxwell_df')}), p={_p(r.get('stuart_maxwell_p'))}")
        if r.get("stuart_maxwell_clustered_stat") is not None:  # labels of one topic are not independent
            sm = (f"{r['stuart_maxwell_clustered_stat']:.1f} ({r['stuart_maxwell_clustered_df']}), topic-clustered over "
                  f"{r['stuart_maxwell_clustered_topics']} topics, F {p_text(r.get('stuart_maxwell_clustered_p'))}")
        out.append({**r, "net": net, "sm": sm, "reading": strictness_reading(r)})
    return out


def _p(p: Any) -> str:
    return p_value(p)
