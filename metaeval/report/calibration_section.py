"""The report's calibration section, rendered from each cell's calibration as the study wrote it
(:func:`metaeval.study.calibration_workflow.calibrate_study`), read as the results schema's records
(:class:`~metaeval.study.records.CellCalibration`).  Nothing here fits or resamples: it formats.

* :func:`calibration_section` - one :class:`~metaeval.report.model.Section` for all cells;
* :func:`cell_blocks` - the blocks of one cell (pairing line, held-out table with raw first, refusals, the
  recommendation, the estimated human leaderboard);
* :func:`summary_row` - the one-line overview of a cell (for the summary table: chosen method or the unstable
  verdict, nested error vs raw with SEs, beats raw or not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from metaeval.io.latex import latex_text
from metaeval.measures import display_name
from metaeval.report.model import Block, Cell, Detail, Est, Ident, Method, Num, Paper, PlusMinus, Section, Table, Text
from metaeval.study.records import Calibration, CalibrationFailure, CellCalibration, encode

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.report.context import Context
    from metaeval.report.render_latex import Names


def summary_row(cal: Calibration | None) -> dict[str, str]:
    """Overview cells for one cell's calibration (``-`` where it has none or it failed)."""
    if not isinstance(cal, CellCalibration):
        return {"calibration": "-", "held_out_mae": "-", "raw_mae": "-", "beats_raw": "-"}
    sel = cal.selection
    name = f"leaderboard by {sel.method}" + (f" ({sel.verdict})" if sel.verdict else "")
    return {"calibration": name, "held_out_mae": PlusMinus(sel.nested_mae),  # the procedure's own (nested) error
            "raw_mae": PlusMinus(sel.raw_mae),
            "beats_raw": "yes" if sel.beats_raw else "no"}


def cell_blocks(cal: CellCalibration, top: int = 15) -> list[Block]:
    pr, st = cal.pairing, cal.settings
    n_lab, n_only = len(cal.topics.human_labelled), len(cal.topics.judge_only)
    blocks: list[Block] = [
        Text(f"Labels paired by {pr.key}: {pr.matched} of {max(pr.judge_pairs, pr.reference_pairs)} "
             f"pairs match ({100 * pr.coverage:.1f}%). {n_lab} human-labelled topics, {n_only} judge-only. "
             + (f"Held-out figures: {st.splits} random splits of the human-labelled topics, "
                f"fitted on {st.fit_topics} and scored on {st.held_out_topics} (the sizes mimic "
                "human-labelled : judge-only), whole-track scores; raw and composite are candidates; the nested error "
                "re-runs the same procedure inside each split's fit topics."
                if st.fit_topics else "Nothing evaluated (no choice can be made on this cell).")),
        Text(f"Recommendation: {cal.recommendation}", kind="note"),
    ]
    refused = [(name, str(c.reason)) for name, c in cal.candidates.items()
               if c.status not in ("ok", "not evaluated")]
    blocks.append(candidates_table(cal))
    by_reason: dict[str, list[str]] = {}  # one note per reason: the label-level methods share theirs
    for name, reason in refused:
        by_reason.setdefault(reason, []).append(name)
    for reason, names in by_reason.items():
        blocks.append(Text(f"{', '.join(names)}: {reason}", kind="note"))
    blocks.append(Detail("Estimated human leaderboard", [leaderboard_table(cal, top=top)], open=False))
    return blocks


def calibration_section(cals: Mapping[str, Calibration | None]) -> Section:
    """One section: a detail block per cell, or a note for cells without calibration (the error when it failed)."""
    blocks: list[Block] = []
    for cid, cal in cals.items():
        if not isinstance(cal, CellCalibration):
            reason = cal.error if isinstance(cal, CalibrationFailure) else None
            blocks.append(Text(f"{cid}: no calibration" + (f" ({reason})" if reason else ""), kind="note"))
            continue
        blocks.append(Detail(cid, cell_blocks(cal)))
    if not blocks:
        blocks.append(Text("No calibration was run.", kind="note"))
    return Section("calibration", "Calibration (held-out, raw as a candidate)", blocks)


def section(ctx: "Context") -> Section:
    """The report's calibration section from each cell's ``calibration.json`` as the study stored it in the
    summary; one closed block per cell (the page stays short)."""
    cals = {c.cell: c.calibration for c in ctx.active if c.calibration is not None}
    ctx.data["calibration"] = {cid: encode(cal) for cid, cal in cals.items()}  # report.json: as summary.json has it
    if not cals:
        return Section("calibration", "Calibration on held-out topics",
                       [Text("No calibration: it needs cells whose judge labels the reference's nuggets (human_* "
                             "strategies), and calibration.enabled.", "note")])
    sec = calibration_section(cals)
    for b in sec.blocks:
        if isinstance(b, Detail):
            b.open = False
    return sec


# ------------------------------------------------------------------ the tables, defined once (report and paper)
def candidates_table(cal: CellCalibration, cell: str = "", names: "Names | None" = None) -> Table:
    """Every candidate (raw, composite, the corrections) on the procedure's held-out splits: the report shows the
    evaluated ones (raw first), the paper every one (raw, composite, the corrections; a refused one with its status)
    with the shown point method in bold and the interval method (PPI++) marked when it is another."""
    cands, sel, st = cal.candidates, cal.selection, cal.settings
    shown, ib = sel.method, sel.intervals_by
    order = [k for k in ("raw", "composite") if k in cands] + [k for k in cands if k not in ("raw", "composite")]
    body, ok, refusals = [], {}, []
    for m in order:
        c = cands[m]
        name = Method(cal.method_name(m), m, shown=m == shown, intervals=m == ib and ib != shown,
                      text=m + (" (shown)" if m == shown else ""))
        h = c.held_out
        if c.status != "ok" or h is None:
            if c.status not in ("ok", "not evaluated"):
                refusals.append(str(c.reason or c.status))
            body.append([name, "", "", str(c.status or "n/a")] + [""] * 7)
            continue
        ok[m] = len(body)
        tau = h.tau
        body.append([name, str(c.level), str(sel.wins.get(m, 0)),
                     PlusMinus(h.mae, tex_digits=3),
                     Cell("-", tex="--") if m == "raw" else PlusMinus(h.diff_vs_raw, signed=True, tex_digits=3),
                     Num(h.bias, 4, signed=True), Num(h.coverage, 2), Num(h.coverage_worst_run, 2),
                     Num(h.mean_ci_width, 3, tex_digits=2),
                     "/".join(Num(x) for x in (tau.run, tau.topic_avg, tau.pooled)), Num(tau.run, 2)])
    level = float(st.level)
    n_lab = len(cal.topics.human_labelled)
    paper = _candidates_paper(cal, cell, names, refusals) if names is not None else None
    return Table(["method", "level", "wins", "held-out MAE ± SE", "vs raw ± SE", "bias", "coverage", "worst run",
                  "mean CI width", "held-out tau run/topic/pooled", "held-out run tau"], body,
                 caption=f"{display_name(cal.metric)}: held-out errors (± = standard error over the "
                         f"splits); coverage of {int(100 * level)}% intervals for the human run score beside their width "
                         "('-': point estimates only); held-out tau: run = Kendall's tau of the whole-track run scores "
                         f"with the human ones over all {n_lab} topics, averaged over the splits (raw's is the headline "
                         "run-level tau when every topic is human-labelled), topic/pooled on the held-out topics of the "
                         "first three splits",
                 numeric=[False, False] + [True] * 9,
                 tex_columns=["", "", "", "MAE", "vs raw", "", "cover", "", "width", "", "$\\tau$"],
                 where=["", "report", "report", "", "", "report", "", "report", "", "report", "paper"],
                 report_rows=[ok[m] for m in ["raw"] + [k for k in cands if k != "raw"] if m in ok],
                 paper=paper)


def _candidates_paper(cal: CellCalibration, cell: str, names: "Names", refusals: list[str]) -> Paper:
    """The candidates table's caption and README description."""
    sel, st = cal.selection, cal.settings
    shown, ib = sel.method, sel.intervals_by
    level = 100 * float(st.level)
    splits = sel.splits
    fit, held = sel.fit_topics, sel.held_out_topics
    marks = "bold: shown point" + ("" if ib in (None, shown) else ", $^\\dagger$: interval method")
    cap = (f"Calibration, {names.phrase(cell)}, {names.metric_tex}: held-out MAE $\\pm$ s.e. over "
           f"{splits} splits; {marks}.") if splits else \
        f"Calibration, {names.phrase(cell)}, {names.metric_tex}: nothing evaluated; {marks}."
    why = " Refused: " + "; ".join(dict.fromkeys(refusals)) + "." if refusals else ""
    shown_plain, ib_plain = cal.method_name(shown or ""), cal.method_name(ib or "")
    intervals = (f"the intervals are {ib_plain}'s for the human score (dagger), widened to contain each point"
                 if ib not in (None, shown) else f"points and intervals by {shown_plain}")
    decision = (f"Shown (bold): {shown_plain}, verdict '{sel.verdict}': {sel.why}; {intervals}. "
                "Rule: composite (human labels where they exist, the raw judge elsewhere) replaces raw when its "
                "error is lower and its tau is not below raw's by more than one standard error; a correction "
                "replaces that only when it beats it by more than one corrected standard error, with a tau not "
                "below raw's by more than one standard error.")
    head = f"Calibration candidates for {names.plain(cell)} on {names.data_plain}, metric {names.metric_plain}"
    if not splits:
        det = head + ": nothing evaluated (too few human-labelled topics or runs for a choice). " + decision + why
        return Paper(f"calibration_{cell}", cap, det, order=[0, 3, 4, 10, 6, 8])
    nested, nd = sel.nested_mae, sel.nested_diff_vs_raw
    nested_txt = (f" Nested: the same procedure re-run inside {sel.nested_splits} splits' fit topics and "
                  f"scored on their held-out ones has MAE {Num(nested.mean, missing='n/a')} +- "
                  f"{Num(nested.se, missing='n/a')}, {Num(nd.mean, missing='n/a')} +- {Num(nd.se, missing='n/a')} vs raw "
                  "(chose " + ", ".join(f"{k} {v}" for k, v in sel.nested_choices.items()) + ")."
                  if sel.nested_splits else "")
    det = (head + f", scored on {splits} random splits of the human-labelled topics into {fit} fit and {held} "
           "held-out topics (the sizes mimic human-labelled : judge-only); every figure is on the whole-track run "
           "score (human labels on the fit topics where the method uses them, its estimate on the held-out ones) "
           "against the human one. MAE = mean over splits of the mean absolute error over runs, +- its corrected "
           "resampled standard error (Nadeau and Bengio, 2003); vs raw = the paired difference to raw (negative = "
           "better), +- its corrected standard error; tau = mean held-out run-level Kendall tau-b with the human "
           f"leaderboard; cover = the share of the {level:g}% intervals shown with that point (PPI++'s, widened to "
           "contain it) that hold the human run score; width = their mean width. " + decision + nested_txt + why)
    return Paper(f"calibration_{cell}", cap, det, order=[0, 3, 4, 10, 6, 8])


def leaderboard_table(cal: CellCalibration, cell: str = "", names: "Names | None" = None,
                      top: int | None = None) -> Table:
    """The calibrated leaderboard: per run the estimated human score over every topic with its interval, the human
    score on the human-labelled topics and the judge's; the report shows the ``top`` runs by the estimate, the paper
    every run ordered by the human score, each interval below its estimate, and no estimate column when every topic
    is human-labelled (the estimate is the human score itself)."""
    from metaeval.report.render_latex import CITE_METHOD, STACK_MAX_ROWS

    lb = cal.leaderboard
    rows = list(lb.rows)
    n_lab, n_only = lb.human_labelled_topics, lb.judge_only_topics
    estimate = n_only > 0  # with every topic labelled the estimate is the human score itself
    stacked = len(rows) <= STACK_MAX_ROWS or estimate
    body = []
    for r in rows:
        ci = r.human_estimate_ci
        body.append([str(r.human_estimate_rank), Ident(r.run_id), Num(r.human_estimate, 4),
                     f"[{Num(ci[0], 4)}, {Num(ci[1], 4)}]" if ci else "(all labelled)", Num(r.human_labelled, 4,
                                                                                    tex_digits=3),
                     Num(r.judge_score, 4), Est(r.judge_score, r.judge_score_ci),
                     Est(r.human_estimate, r.human_estimate_ci)])
    paper = None
    if names is not None:
        m = lb.estimated_by or "?"
        by = cal.method_name(m)
        where = "below" if stacked else "beside"
        if estimate:
            cited = f" \\citep{{{CITE_METHOD[m]}}}" if m in CITE_METHOD else ""
            what = f", calibrated: {latex_text(by)}{cited}, all {n_lab + n_only} topics"
            more = (f"calibrated = the estimated human score over all {n_lab + n_only} topics: human labels on the "
                    f"{n_lab} labelled ones, {by} on the {n_only} judge-only ones, with {by}'s 95% interval "
                    f"({lb.intervals_why or ''}).")
        else:
            what = ""
            more = ("Every topic is human-labelled, so the calibrated estimate of the human leaderboard is the "
                    "reference itself (no calibrated column); the calibration table gives each method's error on "
                    "held-out topics.")
        paper = Paper(f"leaderboard_{cell}", f"{names.metric_tex} per run, {names.phrase(cell)}, {names.data_phrase}: "
                                             f"human, judge (95\\% CI {where}){what}.",
                      f"Run leaderboard on {names.metric_plain}, {names.plain(cell)}, on {names.data_plain}, runs "
                      f"ordered by the reference: human = mean human score over the {n_lab} human-labelled topics; "
                      f"judge = the judge's mean score with its 95% topic-bootstrap interval {where} it (an interval "
                      "for the judge's score, not the human one). " + more, layout="board", stacked=stacked,
                      rows=sorted(range(len(rows)), key=lambda i: (rows[i].human_labelled is None,
                                                                   -(rows[i].human_labelled or 0))))
    metric = display_name(cal.metric)
    cap = (f"{metric}: estimated human run score over all {(n_lab or 0) + n_only} topics "
           f"(human labels on {n_lab}, {lb.estimated_by} on {n_only} judge-only); "
           f"{lb.intervals_why}; judge score = the judge's own run score")
    keep = 8 if estimate else 7  # no calibrated column when it would repeat the human one
    return Table(["rank", "run", "human estimate", "interval", "human (labelled topics)", "judge score",
                  "judge score [95% CI]", "calibrated [95% CI]"][:keep], [r[:keep] for r in body], caption=cap,
                 numeric=[True, False, True, False, True, True, True, True][:keep],
                 tex_columns=["", "", "", "", "human", "", "judge", "calibrated"][:keep],
                 where=["report", "", "report", "report", "", "report", "paper", "paper"][:keep],
                 report_rows=list(range(min(len(rows), top))) if top is not None else None, paper=paper)
