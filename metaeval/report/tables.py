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
from metaeval.study.records import LEVELS, CellSummary

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
def usage(cells: Sequence[CellSummary]) -> list[dict[str, Any]]:
    rows = []
    for c in cells:
        if c.skipped:
            rows.append({"cell": c.cell, "judge": c.judge, "prompt": c.prompt, "strategy": c.strategy,
                         "skipped": c.skipped})
            continue
        st = c.usage
        rows.append({"cell": c.cell, "judge": c.judge, "prompt": c.prompt, "strategy": c.strategy,
                     "judge_calls": st.judge_calls, "model_requests": st.calls,
                     "input_tokens": st.input_tokens, "output_tokens": st.output_tokens,
                     "cost_usd": st.cost_usd, "cache_hits": st.cache_hits,
                     "retries": st.retries, "reasks": st.reasks, "jobs": st.jobs,
                     "reused_jobs": st.reused, "failed_jobs": st.failed_jobs,
                     "labels": c.labels, "failed_labels": c.failed_labels,
                     "failure_rate": c.failure_rate})
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
def tau(cells: Sequence[CellSummary], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """One record per (cell, metric, level): tau, ci, n_topics (topic_avg: topics where tau is defined)."""
    rows = []
    for c in cells:
        for m in metrics:
            for lv in LEVELS:
                b = c.tau(m, lv)
                rows.append({"cell": c.cell, "metric": m, "level": lv, "tau": b.tau, "ci_low": b.low,
                             "ci_high": b.high, "n_topics": b.n_topics, "n_topics_skipped": b.n_topics_skipped})
    return rows


def tau_lookup(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["cell"], r["metric"], r["level"]): r for r in rows}


# ------------------------------------------------------------------ descriptive (Table 4)
def descriptive(frame) -> list[dict[str, Any]]:
    """Records from ``analysis/descriptive.csv`` (reference first, then the cells)."""
    if frame is None:
        return []
    import math

    recs = frame.to_dict(orient="records")
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in recs]


# ------------------------------------------------------------------ strictness
def strictness(cells: Sequence[CellSummary]) -> list[dict[str, Any]]:
    """Support-label agreement and strictness per cell that labels the reference's nuggets (the analysis' label
    agreement block, ``metaeval.analysis.agreement.label_agreement``)."""
    rows = []
    for c in cells:
        lab = c.label_agreement
        if lab is None:
            continue
        # the topic-clustered interval where the analysis has it (pairs of one topic are not independent)
        ci = list(lab.strictness_interval or (None, None))
        shifts = [s for s in lab.shifts if s.get("changed") and s.get("count")]
        shifts.sort(key=lambda s: -s["count"])
        rows.append({"cell": c.cell, "n": lab.n, "exact_agreement": lab.exact_agreement,
                     "cohen_kappa": lab.cohen_kappa, "weighted_kappa": lab.weighted_kappa,
                     "krippendorff_alpha": lab.krippendorff_alpha,
                     "strictness_index": lab.strictness_index, "strictness_ci": ci,
                     "p_lower": lab.p_lower, "p_higher": lab.p_higher,
                     "stuart_maxwell_stat": lab.stuart_maxwell_stat, "stuart_maxwell_df": lab.stuart_maxwell_df,
                     "stuart_maxwell_p": lab.stuart_maxwell_p,
                     **lab.clustered_stuart_maxwell(),
                     "reference_mix": lab.reference_mix,
                     "candidate_mix": lab.candidate_mix, "shifts": shifts, "failed": lab.failed,
                     "order": None if lab.order is None else list(lab.order), "confusion": lab.confusion})
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
