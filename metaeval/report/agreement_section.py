"""The report's sections on the labels themselves, judge beside reference:

* ``agreement``: confusion matrices, net strictness and the Stuart-Maxwell test per cell, strictness by the
  reference's nugget importance, and each cell's label shifts;
* ``descriptive``: the paper's Table 4 per label source and the support-label mix.

Every figure is the study's (``summary.json`` analysis, ``study/study.json``, ``analysis/descriptive.csv``).
"""

from __future__ import annotations

from metaeval.report import plots, tables
from metaeval.report.context import Context, pct
from metaeval.report.model import Detail, Figure, Section, Table, Text, fmt
from metaeval.study.records import encode


def agreement(ctx: Context) -> Section:
    rows = tables.strictness(ctx.active)
    ctx.data["strictness"] = rows
    if not rows:
        return Section("agreement", "Label agreement and strictness",
                       [Text("No cell labels the reference's own nuggets, so there are no label pairs to compare.", "note")])
    blocks: list = [
        Figure("confusion", "Confusion matrices", caption=
               "Reference (human) support labels in rows, judge labels in columns: counts and row percentages "
               "(Pradeep et al. 2025, Figure 6 style). FAILED labels are excluded and counted below.",
               svg=plots.later(plots.confusion, rows)),
        tables.to_table(tables.strictness_table_records(rows), tables.STRICTNESS_COLUMNS,
                        "net strictness = P(judge lower) - P(judge higher) on not < partial < support; Stuart-Maxwell: "
                        "marginal homogeneity of the two label distributions"),
    ]
    blocks += _by_importance(ctx)
    for r in rows:
        shifts = [[s["reference"], s["candidate"], str(s["count"]), f"{s['pct_of_all']:.1f}%",
                   f"{s['pct_of_reference_label']:.1f}%", s["direction"]] for s in r["shifts"]]
        failed = r.get("failed") or {}
        blocks.append(Detail(f"label shifts: {r['cell']}", [
            Table(["reference", "judge", "count", "% of all", "% of reference label", "judge is"], shifts,
                  f"changed labels, largest first (FAILED: reference {failed.get('reference', 0)}, judge {failed.get('candidate', 0)})",
                  [False, False, True, True, True, False])], open=False))
    return Section("agreement", "Label agreement and strictness", blocks)


def _by_importance(ctx: Context) -> list:
    """Strictness by the reference's nugget importance (the study's ``strictness_by_importance``)."""
    per = {cid: sc.strictness_by_importance.strata for cid, sc in ctx.study_cells().items()
           if sc is not None and sc.strictness_by_importance is not None and sc.strictness_by_importance.strata}
    ctx.data["strictness_by_importance"] = {cid: encode(strata) for cid, strata in per.items()}
    if not per:
        return []
    rows = []
    for cid, strata in per.items():
        for name in ("all", "vital", "okay"):
            r = strata.get(name)
            if not r:
                rows.append([cid, name, "0", "-", "-", "-"])
                continue
            ci = r.ci
            rows.append([cid, name, str(r.n_pairs), "undefined" if r.index is None else
                         f"{r.index:+.3f} [{fmt(ci[0])}, {fmt(ci[1])}]", pct(r.support_to_partial),
                         pct(r.support_to_not)])
    return [Figure("strictness_importance", "Strictness by nugget importance", caption=
                   "Net strictness P(judge lower) - P(judge higher) over all doubly labelled pairs and separately for "
                   "the reference's vital and okay nuggets; bars: 95% topic-clustered CI (CR1, t with G-1 df).",
                   svg=plots.later(plots.strictness_importance, ctx.data["strictness_by_importance"])),
            Detail("strictness by importance, table", [
                Table(["cell", "nuggets", "pairs", "net strictness [95% CI, CR1 t]", "support -> partial", "support -> not"], rows,
                      "strictness by the reference's nugget importance (support -> x: share of the assessors' support "
                      "labels the judge gave x)", [False, False, True, True, True, True])],
                   open=False)]


def descriptive(ctx: Context) -> Section:
    recs = tables.descriptive(ctx.res.analysis_table("descriptive.csv"))
    ctx.data["descriptive"] = recs
    if not recs:
        return Section("descriptive", "Descriptive statistics per label source", [Text("analysis/descriptive.csv missing", "note")])
    return Section("descriptive", "Descriptive statistics per label source", [
        tables.to_table(recs, tables.DESCRIPTIVE_COLUMNS, "Pradeep et al. 2025, Table 4 style; percentages of nuggets "
                        "(importance) and of nugget-answer labels (support)"),
        Figure("label_mix", "Support-label distribution", caption="Share of each support label per label source.",
               svg=plots.later(plots.label_mix, recs))])
