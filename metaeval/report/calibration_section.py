"""The report's calibration section, rendered from the ``calibration.json`` dicts the study wrote
(:func:`metaeval.study.calibration_workflow.calibrate_study`).  Nothing here fits or resamples: it formats.

* :func:`calibration_section` - one :class:`~metaeval.report.model.Section` for all cells;
* :func:`cell_blocks` - the blocks of one cell (pairing line, held-out table with raw first, refusals, the
  recommendation, the estimated human leaderboard);
* :func:`summary_row` - the one-line overview of a cell (for the summary table: chosen method or the unstable
  verdict, nested error vs raw with SEs, beats raw or not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from metaeval.formatting import fixed, interval, mean_se
from metaeval.measures import display_name
from metaeval.report.model import Block, Detail, Section, Table, Text

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.report.context import Context


def summary_row(cal: Mapping[str, Any] | None) -> dict[str, str]:
    """Overview cells for one calibration dict (``-`` where there is none)."""
    if not cal or "selection" not in cal:
        return {"calibration": "-", "held_out_mae": "-", "raw_mae": "-", "beats_raw": "-"}
    sel = cal["selection"]
    name = f"leaderboard by {sel['method']}" + (f" ({sel['verdict']})" if sel.get("verdict") else "")
    return {"calibration": name, "held_out_mae": mean_se(sel.get("nested_mae") or sel["held_out_mae"]),
            "raw_mae": mean_se(sel["raw_mae"]),
            "beats_raw": "yes" if sel["beats_raw"] else "no"}


def cell_blocks(cal: Mapping[str, Any], top: int = 15) -> list[Block]:
    pr, st = cal["pairing"], cal["settings"]
    metric = display_name(cal["metric"])
    n_lab, n_only = len(cal["topics"]["human_labelled"]), len(cal["topics"]["judge_only"])
    blocks: list[Block] = [
        Text(f"Labels paired by {pr['key']}: {pr['matched']} of {max(pr['judge_pairs'], pr['reference_pairs'])} "
             f"pairs match ({100 * pr['coverage']:.1f}%). {n_lab} human-labelled topics, {n_only} judge-only. "
             + (f"Held-out figures: {st.get('splits', st.get('repeats'))} random splits of the human-labelled topics, "
                f"fitted on {st.get('fit_topics')} and scored on {st.get('held_out_topics')} (the sizes mimic "
                "human-labelled : judge-only), whole-track scores; raw and composite are candidates; the nested error "
                "re-runs the same procedure inside each split's fit topics."
                if st.get("fit_topics") else "Nothing evaluated (no choice can be made on this cell).")),
        Text(f"Recommendation: {cal['recommendation']}", kind="note"),
    ]
    rows, refused = [], []
    cands = cal["candidates"]
    order = ["raw"] + [k for k in cands if k != "raw"]
    for name in order:
        c = cands.get(name)
        if c is None:
            continue
        if c["status"] == "not evaluated":
            continue
        if c["status"] != "ok":
            refused.append((name, str(c["reason"])))
            continue
        h = c["held_out"]
        chosen = name == cal["selection"]["method"]
        wins = (cal["selection"].get("wins") or {}).get(name, 0)
        rows.append([name + (" (shown)" if chosen else ""), c["level"], str(wins),
                     mean_se(h["mae"]), "-" if name == "raw" else mean_se(h["diff_vs_raw"], signed=True), fixed(h["bias"], 4, signed=True),
                     fixed(h["coverage"], 2), fixed(h["coverage_worst_run"], 2), fixed(h["mean_ci_width"], 3),
                     "/".join(fixed((h.get("tau") or {}).get(k), 3) for k in ("run", "topic_avg", "pooled"))])
    blocks.append(Table(["method", "level", "wins", "held-out MAE ± SE", "vs raw ± SE", "bias", "coverage", "worst run",
                         "mean CI width", "held-out tau run/topic/pooled"], rows,
                        caption=f"{metric}: held-out errors (± = standard error over the splits); coverage of "
                                f"{int(100 * st['level'])}% intervals for the human run score beside their width ('-': "
                                "point estimates only); held-out tau = Kendall's tau with the human run scores on each "
                                "split's held-out topics, averaged over the splits (lower than the headline tau over "
                                f"all {n_lab} topics)",
                        numeric=[False, False] + [True] * 8))
    by_reason: dict[str, list[str]] = {}  # one note per reason: the label-level methods share theirs
    for name, reason in refused:
        by_reason.setdefault(reason, []).append(name)
    for reason, names in by_reason.items():
        blocks.append(Text(f"{', '.join(names)}: {reason}", kind="note"))
    lb = cal["leaderboard"]
    lrows = []
    for r in lb["rows"][:top]:
        ci = r.get("human_estimate_ci")
        lrows.append([str(r["human_estimate_rank"]), r["run_id"], fixed(r["human_estimate"], 4),
                      interval(ci, 4, point_missing="-") if ci else "(all labelled)", fixed(r["human_labelled"], 4),
                      fixed(r["judge_score"], 4)])
    cap = (f"{metric}: estimated human run score over all {lb['human_labelled_topics'] + lb['judge_only_topics']} topics "
           f"(human labels on {lb['human_labelled_topics']}, {lb['estimated_by']} on {lb['judge_only_topics']} judge-only); "
           f"{lb['intervals_why']}; judge score = the judge's own run score")
    blocks.append(Detail("Estimated human leaderboard", [
        Table(["rank", "run", "human estimate", "interval", "human (labelled topics)", "judge score"], lrows, caption=cap,
              numeric=[True, False, True, False, True, True])], open=False))
    return blocks


def calibration_section(cals: Mapping[str, Mapping[str, Any] | None]) -> Section:
    """One section: a detail block per cell, or a note for cells without calibration."""
    blocks: list[Block] = []
    for cid, cal in cals.items():
        if not cal or "selection" not in cal:
            reason = (cal or {}).get("error") if isinstance(cal, Mapping) else None
            blocks.append(Text(f"{cid}: no calibration" + (f" ({reason})" if reason else ""), kind="note"))
            continue
        blocks.append(Detail(cid, cell_blocks(cal)))
    if not blocks:
        blocks.append(Text("No calibration was run.", kind="note"))
    return Section("calibration", "Calibration (held-out, raw as a candidate)", blocks)


def section(ctx: "Context") -> Section:
    """The report's calibration section from each cell's ``calibration.json`` as the study stored it in the
    summary; one closed block per cell (the page stays short)."""
    cals = {c["cell"]: c.get("calibration") for c in ctx.active if c.get("calibration") is not None}
    ctx.data["calibration"] = cals
    if not cals:
        return Section("calibration", "Calibration on held-out topics",
                       [Text("No calibration: it needs cells whose judge labels the reference's nuggets (human_* "
                             "strategies), and calibration.enabled.", "note")])
    sec = calibration_section(cals)
    for b in sec.blocks:
        if isinstance(b, Detail):
            b.open = False
    return sec
