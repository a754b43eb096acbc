"""``summary.md``: one table per study, readable in a terminal and on GitHub (the report has every figure).

The table reports the study's primary metric (``Summary.primary_metric``, the first of ``analysis.metrics``);
:func:`missing_figures` says which judged cells lack the figures the study was asked for (the sweep then does not
exit 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from metaeval.formatting import fixed, interval
from metaeval.measures import display_name
from metaeval.study.records.blocks import ConsistencyFailure
from metaeval.study.records.calibration import CalibrationFailure

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.study.records import Calibration, Summary, TauEstimate


def missing_figures(summary: "Summary") -> list[str]:
    """One line per judged cell (not skipped, not withheld) without the primary metric's run-level tau although the
    study compared cells with a reference (some cell has an analysis): the study was asked for figures it did not
    produce.  A sweep without a reference (no cell analysed) asks for none."""
    metric = summary.primary_metric
    judged = summary.active
    if not any(c.analysis for c in judged):
        return []
    out = []
    for c in judged:
        if c.analysis is None or metric not in c.analysis.metrics:
            why = "its analysis has no such metric" if c.analysis else "it has no analysis"
            out.append(f"{c.cell}: no {display_name(metric)} tau ({why})")
    return out


def _tau(est: "TauEstimate | None") -> str:
    if est is None:
        return "-"
    if est.tau is None:
        return "n/a"
    return fixed(est.tau, 3) + interval(est.ci, lead=" ")  # 0.912 [0.85, 0.97]


#: the columns of the sweep's table (summary.md and the terminal); the tau columns are numbers with their interval
SUMMARY_COLUMNS = ("cell", "judge calls", "model requests", "cache hits", "failed labels", "cost (USD)",
                   "run-level tau", "per-topic tau", "pooled tau", "calibration (held-out run MAE)")
#: right-aligned (numbers) in the terminal; in summary.md the tau and calibration columns stay left-aligned
SUMMARY_NUMERIC = (False, True, True, True, True, True, True, True, True, False)


def summary_table(summary: "Summary", metric: str | None = None) -> tuple[list[str], list[list[str]], list[bool]]:
    """Header, rows and alignment of the sweep's table on ``metric`` (default: the study's primary metric), one row
    per cell (a skipped or withheld cell: its reason in the second column, the others empty)."""
    metric = metric or summary.primary_metric
    rows = []
    for c in summary.cells:
        if c.skipped or c.withheld:  # withheld: no figures were computed (study.run.withheld_cells)
            why = f"skipped: {c.skipped}" if c.skipped else f"withheld: {c.withheld}"
            rows.append([c.cell, why] + [""] * (len(SUMMARY_COLUMNS) - 2))
            continue
        st = c.usage
        m = c.analysis.metrics.get(metric) if c.analysis is not None else None
        rows.append([c.cell, str(st.judge_calls), str(st.calls), str(st.cache_hits),
                     f"{c.failed_labels or 0} ({(c.failure_rate or 0) * 100:.1f}%)", f"{st.cost_usd:.4f}",
                     *(_tau(None if m is None else m.level(lv)) for lv in ("run", "topic_avg", "pooled")),
                     _best_calibration(c.calibration, metric)])
    return list(SUMMARY_COLUMNS), rows, list(SUMMARY_NUMERIC)


def summary_markdown(summary: "Summary", metric: str | None = None,
                     table: Callable[[list[str], list[list[str]], list[bool]], str] | None = None) -> str:
    """``summary.md``, the summary table on ``metric`` (default: the study's primary metric); ``table`` renders the
    table from (header, rows, right-aligned) instead of Markdown (the terminal:
    :func:`metaeval.report.render_text.fit_table`)."""
    metric = metric or summary.primary_metric
    ds = summary.dataset
    lines = [
        f"# Sweep `{summary.experiment}`",
        "",
        f"Dataset **{ds.name}**: {ds.topics} topics, {ds.runs} runs, {ds.answers} answers. "
        f"Reference: the dataset's human labels. Wall time {summary.elapsed_s:.1f} s "
        f"(judging {summary.judging_s:.1f} s)."
        + (f" Start-up {summary.runtime_start_s:.1f} s ({_start_up(summary)}; in the wall time, not in judging)."
           if summary.runtime_start_s >= 0.05 else ""),
        "",
    ]
    if ds.synthetic:  # the demo: its registry description says what it is
        lines += [f"**Synthetic data:** {ds.provenance.description or 'not real assessments.'}", ""]
    cells = [c for c in summary.cells if c.this_run is not None]
    if cells:
        executed = sum(c.this_run.executed for c in cells)
        reused = sum(c.this_run.reused for c in cells)
        sent = sum(c.this_run.calls for c in cells)
        lines += [f"This run executed {executed} job(s) ({sent} model request(s)) and reused {reused} from the results "
                  f"store{'; the evaluation was unchanged and reused' if summary.evaluation_reused else ''}. "
                  "Call, token and cost columns are totals for the stored results.", ""]
    if summary.stopped:
        lines += [f"**Stopped early:** {summary.stopped}", ""]
    for note in summary.grid_notes:  # judges left out of the grid (study.run: grid_notes), once each
        lines += [f"Grid: {note}", ""]
    interrupted = max((c.usage.interrupted_runs for c in cells), default=0)
    if interrupted:
        lines += [f"Model requests, tokens and cost are lower bounds: {interrupted} earlier run(s) of this folder were "
                  "killed or interrupted, and the requests they had in flight are not counted.", ""]
    lines += [
        f"Kendall's tau (tau-b) on {display_name(metric)} with 95% topic-bootstrap CIs:",
        "",
    ]
    head, rows, numeric = summary_table(summary, metric)
    if table is None:
        lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * 5 + "---|" * (len(head) - 6)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        lines.append(table(head, rows, numeric))
    lines.append("")
    sampled = [c for c in summary.cells if c.consistency]
    if sampled:
        lines += ["Judge self-consistency (sweep.samples: k draws of every assignment call; draw 0 is the cell's labels "
                  "above; tau over draws beside the topic-bootstrap sd):", ""]
        for c in sampled:
            cons = c.consistency
            failed = isinstance(cons, ConsistencyFailure)
            lines.append(f"- {c.cell}: {cons.error if failed else cons.line}")
            cal = None if failed else cons.calibration
            if cal is not None and cal.line:
                lines.append(f"  - soft vs hard score-level calibration, {cal.line}")
        lines.append("")
    return "\n".join(lines)


def _start_up(summary: "Summary") -> str:
    """What the start-up held: e.g. "Ray's start 4.2 s, its actors' 0.9 s" (the actors' share,
    ``actors_start_s``, said apart where there is one), or the executor's own words."""
    what = summary.runtime_start or "the executor"
    if summary.actors_start_s < 0.05:
        return what
    return (f"Ray's start {summary.runtime_start_s - summary.actors_start_s:.1f} s, its actors' "
            f"{summary.actors_start_s:.1f} s: processes, judges, SDK imports")


def _best_calibration(cal: "Calibration | None", metric: str) -> str:
    """The selected method and its held-out error vs raw (``calibrate_study``'s ``selection``, on the primary
    metric it calibrated); ``error`` when the calibration failed, ``-`` without one."""
    if cal is None:
        return "-"
    if isinstance(cal, CalibrationFailure):
        return "error"
    sel = cal.selection
    err, raw = sel.held_out_mae.mean, sel.raw_mae.mean
    shown = f"leaderboard by {sel.method}, intervals by {sel.intervals_by or sel.method}"
    if not sel.splits and sel.verdict == "cannot decide":
        return f"{shown} ({sel.why})"
    if isinstance(err, (int, float)) and isinstance(raw, (int, float)):
        return f"{shown}: held-out MAE raw {raw:.3f} -> {sel.method} {err:.3f}"
    return shown
