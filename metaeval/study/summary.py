"""``summary.md``: one table per study, readable in a terminal and on GitHub (the report has every figure).

The table reports the study's primary metric (``summary["primary_metric"]``, the first of ``analysis.metrics``);
:func:`missing_figures` says which judged cells lack the figures the study was asked for (the sweep then does not
exit 0).
"""

from __future__ import annotations

from typing import Any, Callable

from metaeval.formatting import fixed, interval
from metaeval.measures import DEFAULT_PRIMARY, display_name, normalize_metric


def primary_metric(summary: dict[str, Any]) -> str:
    """The metric the study reports first: the one it recorded (``analysis.primary_metric``); for a summary written
    before the field existed, the first of the ``analysis.metrics`` it echoes (else V_strict, the default)."""
    if summary.get("primary_metric"):
        return str(summary["primary_metric"])
    echoed = ((summary.get("config") or {}).get("analysis") or {}).get("metrics") or [DEFAULT_PRIMARY]
    return normalize_metric(str(echoed[0]))


def missing_figures(summary: dict[str, Any]) -> list[str]:
    """One line per judged cell (not skipped, not withheld) without the primary metric's run-level tau although the
    study compared cells with a reference (some cell has an analysis): the study was asked for figures it did not
    produce.  A sweep without a reference (no cell analysed) asks for none."""
    metric = primary_metric(summary)
    judged = [c for c in summary.get("cells", []) if not c.get("skipped") and not c.get("withheld")]
    if not any(c.get("analysis") for c in judged):
        return []
    out = []
    for c in judged:
        block = ((c.get("analysis") or {}).get("metrics") or {}).get(metric) or {}
        if not block.get("run"):
            why = "its analysis has no such metric" if c.get("analysis") else "it has no analysis"
            out.append(f"{c.get('cell')}: no {display_name(metric)} tau ({why})")
    return out


def _tau(block: dict[str, Any] | None, metric: str, level: str) -> str:
    try:
        m = block["metrics"][metric][level]
    except (KeyError, TypeError):
        return "-"
    tau, ci = m.get("tau"), m.get("ci")
    if tau is None:
        return "n/a"
    return fixed(tau, 3) + interval(ci, lead=" ")  # 0.912 [0.85, 0.97]


#: the columns of the sweep's table (summary.md and the terminal); the tau columns are numbers with their interval
SUMMARY_COLUMNS = ("cell", "judge calls", "model requests", "cache hits", "failed labels", "cost (USD)",
                   "run-level tau", "per-topic tau", "pooled tau", "calibration (held-out run MAE)")
#: right-aligned (numbers) in the terminal; in summary.md the tau and calibration columns stay left-aligned
SUMMARY_NUMERIC = (False, True, True, True, True, True, True, True, True, False)


def summary_table(summary: dict[str, Any], metric: str | None = None) -> tuple[list[str], list[list[str]], list[bool]]:
    """Header, rows and alignment of the sweep's table on ``metric`` (default: the study's primary metric), one row
    per cell (a skipped or withheld cell: its reason in the second column, the others empty)."""
    metric = metric or primary_metric(summary)
    rows = []
    for c in summary.get("cells", []):
        if c.get("skipped") or c.get("withheld"):  # withheld: no figures were computed (study.run.withheld_cells)
            why = f"skipped: {c['skipped']}" if c.get("skipped") else f"withheld: {c['withheld']}"
            rows.append([c["cell"], why] + [""] * (len(SUMMARY_COLUMNS) - 2))
            continue
        st = c.get("stats", {})
        a = c.get("analysis")
        fr = c.get("failure_rate")
        rows.append([c["cell"], str(st.get("judge_calls", 0)), str(st.get("calls", 0)), str(st.get("cache_hits", 0)),
                     f"{c.get('failed_labels', 0)} ({(fr or 0) * 100:.1f}%)", f"{st.get('cost_usd', 0.0):.4f}",
                     _tau(a, metric, "run"), _tau(a, metric, "topic_avg"), _tau(a, metric, "pooled"),
                     _best_calibration(c.get("calibration"), metric)])
    return list(SUMMARY_COLUMNS), rows, list(SUMMARY_NUMERIC)


def summary_markdown(summary: dict[str, Any], metric: str | None = None,
                     table: Callable[[list[str], list[list[str]], list[bool]], str] | None = None) -> str:
    """``summary.md``, the summary table on ``metric`` (default: the study's primary metric); ``table`` renders the
    table from (header, rows, right-aligned) instead of Markdown (the terminal:
    :func:`metaeval.report.render_text.fit_table`)."""
    metric = metric or primary_metric(summary)
    ds = summary.get("dataset", {})
    lines = [
        f"# Sweep `{summary.get('experiment')}`",
        "",
        f"Dataset **{ds.get('name')}**: {ds.get('topics')} topics, {ds.get('runs')} runs, {ds.get('answers')} answers. "
        f"Reference: the dataset's human labels. Wall time {summary.get('elapsed_s', 0):.1f} s "
        f"(judging {summary.get('judging_s', 0):.1f} s)."
        + (f" Start-up {summary['runtime_start_s']:.1f} s ({summary.get('runtime_start') or 'the executor'}; "
           "in the wall time, not in judging)." if (summary.get("runtime_start_s") or 0) >= 0.05 else ""),
        "",
    ]
    if (ds.get("provenance") or {}).get("synthetic"):  # the demo: its registry description says what it is
        lines += [f"**Synthetic data:** {ds['provenance'].get('description') or 'not real assessments.'}", ""]
    cells = [c for c in summary.get("cells", []) if "this_run" in c]
    if cells:
        executed = sum(c["this_run"]["executed"] for c in cells)
        reused = sum(c["this_run"]["reused"] for c in cells)
        sent = sum(c["this_run"]["calls"] for c in cells)
        lines += [f"This run executed {executed} job(s) ({sent} model request(s)) and reused {reused} from the results "
                  f"store{'; the evaluation was unchanged and reused' if summary.get('evaluation_reused') else ''}. "
                  "Call, token and cost columns are totals for the stored results.", ""]
    if summary.get("stopped"):
        lines += [f"**Stopped early:** {summary['stopped']}", ""]
    for note in summary.get("grid_notes") or ():  # judges left out of the grid (study.run: grid_notes), once each
        lines += [f"Grid: {note}", ""]
    interrupted = max((int(c.get("stats", {}).get("interrupted_runs", 0)) for c in cells), default=0)
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
    sampled = [c for c in summary.get("cells", []) if c.get("consistency")]
    if sampled:
        lines += ["Judge self-consistency (sweep.samples: k draws of every assignment call; draw 0 is the cell's labels "
                  "above; tau over draws beside the topic-bootstrap sd):", ""]
        for c in sampled:
            cons = c["consistency"]
            lines.append(f"- {c['cell']}: {cons.get('line') or cons.get('error')}")
            cal = cons.get("calibration") or {}
            if cal.get("line"):
                lines.append(f"  - soft vs hard score-level calibration, {cal['line']}")
        lines.append("")
    return "\n".join(lines)


def _best_calibration(cal: dict[str, Any] | None, metric: str) -> str:
    """The selected method and its outer-fold error vs raw (``calibrate_study``'s ``selection``); for a result
    without a selection, the lowest held-out MAE of its cross-validation."""
    if not cal:
        return "-"
    if "error" in cal:
        return "error"
    sel = cal.get("selection")
    if isinstance(sel, dict) and sel.get("method"):
        err, raw = (sel.get("held_out_mae") or {}).get("mean"), (sel.get("raw_mae") or {}).get("mean")
        shown = f"leaderboard by {sel['method']}, intervals by {sel.get('intervals_by') or sel['method']}"
        if not sel.get("splits") and sel.get("verdict") == "cannot decide":
            return f"{shown} ({sel.get('why')})"
        if isinstance(err, (int, float)) and isinstance(raw, (int, float)):
            return f"{shown}: held-out MAE raw {raw:.3f} -> {sel['method']} {err:.3f}"
        return shown
    cal = cal.get("validation") or cal
    if "methods" not in cal:
        return "-"
    best = None
    for name, m in cal["methods"].items():
        fig = (m or {}).get(metric) or {}
        mae_after, mae_before = fig.get("mae_after"), fig.get("mae_before")
        if mae_after is None:
            continue
        if best is None or mae_after < best[1]:
            best = (name, mae_after, mae_before)
    if best is None:
        return "-"
    return f"{best[0]}: {best[2]:.3f} -> {best[1]:.3f}" if best[2] is not None else f"{best[0]}: {best[1]:.3f}"
