"""The report's sections on the labels themselves, judge beside reference:

* ``agreement``: confusion matrices, net strictness and the Stuart-Maxwell test per cell, strictness by the
  reference's nugget importance, and each cell's label shifts;
* ``descriptive``: the paper's Table 4 per label source and the support-label mix.

Every figure is the study's (``summary.json`` analysis, ``study/study.json``, ``analysis/descriptive.csv``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from metaeval.formatting import percent, text
from metaeval.report import plots, tables
from metaeval.report.context import Context, pct
from metaeval.report.model import Config, Detail, Est, Figure, Num, Paper, Section, Table, Text, fmt
from metaeval.study.records import encode

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.report.render_latex import Names


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
        strictness_table(rows, caption="net strictness = P(judge lower) - P(judge higher) on not < partial < "
                                       "support; Stuart-Maxwell: marginal homogeneity of the two label distributions"),
    ]
    blocks += _by_importance(ctx)
    labs = {c.cell: c.label_agreement for c in ctx.active if c.label_agreement is not None}
    for r in rows:
        shifts = [[s["reference"], s["candidate"], str(s["count"]), f"{s['pct_of_all']:.1f}%",
                   f"{s['pct_of_reference_label']:.1f}%", s["direction"]] for s in r["shifts"]]
        lab = labs[r["cell"]]
        blocks.append(Detail(f"label shifts: {r['cell']}", [
            Table(["reference", "judge", "count", "% of all", "% of reference label", "judge is"], shifts,
                  f"changed labels, largest first (FAILED: reference {lab.failed_count('reference')}, judge "
                  f"{lab.failed_count('candidate')})",
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
        descriptive_table(recs, caption="Pradeep et al. 2025, Table 4 style; percentages of nuggets (importance) "
                                        "and of nugget-answer labels (support)"),
        Figure("label_mix", "Support-label distribution", caption="Share of each support label per label source.",
               svg=plots.later(plots.label_mix, recs))])


# ------------------------------------------------------------------ the tables, defined once (report and paper)
def strictness_table(rows: list[dict[str, Any]], names: "Names | None" = None, caption: str = "") -> Table:
    """Support-label agreement per configuration (``tables.strictness`` records): pairs, exact agreement, kappas,
    the net strictness index with its topic-clustered CI, the label shifts' shares, the Stuart-Maxwell test."""
    body, pairs = [], []
    for r in tables.strictness_table_records(rows):
        body.append([Config(r["cell"]), text(r.get("n")), Num(r.get("exact_agreement"), tex_digits=2),
                     Num(r.get("cohen_kappa"), tex_digits=2), Num(r.get("weighted_kappa")),
                     Est(r.get("strictness_index"), r.get("strictness_ci"), ci_digits=3, tex_ci_digits=2,
                         signed=True), percent(r.get("p_lower"), missing="-"),
                     percent(r.get("p_higher"), missing="-"), r["sm"], r["reading"]])
        pairs.append(f"{names.plain(r['cell']) if names else r['cell']}: {r.get('n') or 0}")
    paper = None
    if names is not None:
        paper = Paper("strictness", f"Judge vs.\\ human labels, {names.data_phrase}: agreement, Cohen's $\\kappa$, "
                                    "strictness ($>0$: stricter; 95\\% CI below).",
                      "Agreement of the judge's support labels with the human ones on the same (nugget, answer) pairs, "
                      f"{names.data_plain}: exact agreement, Cohen's kappa and the net strictness index P(judge lower) "
                      "- P(judge higher) on not support < partial support < support, with its 95% topic-bootstrap CI "
                      "below it (positive = the judge is stricter than the assessors)"
                      + (f"; (nugget, answer) pairs per configuration: {'; '.join(pairs)}." if body else "."))
    return Table(["cell", "pairs", "exact agreement", "Cohen kappa", "weighted kappa",
                  "net strictness [95% CI, topic bootstrap]", "judge lower", "judge higher", "Stuart-Maxwell Wald (df), p",
                  "reading"], body, caption, [False] + [True] * 8 + [False],
                 tex_columns=["", "", "agree", "$\\kappa$", "", "strict", "", "", "", ""],
                 where=["", "report", "", "", "report", "", "report", "report", "report", "report"], paper=paper)


def descriptive_table(recs: list[dict[str, Any]], names: "Names | None" = None, caption: str = "") -> Table:
    """The paper's Table 4 per label source (``analysis/descriptive.csv`` records, the reference first)."""
    one = [("nuggets_per_topic", "nuggets / topic", "nuggets", ""), ("nugget_len_tokens", "nugget length (tokens)",
                                                                      "length", ""),
           ("pct_vital", "% vital", "\\% vital", ""), ("pct_okay", "% okay", "", "report"),
           ("pct_not_support", "% not support", "\\% not", ""), ("pct_partial_support", "% partial", "\\% partial", ""),
           ("pct_support", "% support", "\\% support", ""), ("pct_failed", "% failed", "", "report")]
    body = [[Config(r.get("name") or "", reference=r.get("role") == "reference"), text(r.get("role")),
             text(r.get("topics"))] + [Num(r.get(k), 1) for k, *_ in one] for r in recs]
    paper = None
    if names is not None:
        from metaeval.report.render_latex import CITE_NUGGETS

        paper = Paper("descriptive", f"Label sources on {names.data_phrase}, as in Table 4 of \\citet{{{CITE_NUGGETS}}}: "
                                     "nuggets per topic, nugget length, \\% vital, and \\% of nugget-answer pairs per "
                                     "support label.",
                      f"Label sources on {names.data_plain}, as in Pradeep et al. (2025), Table 4: nuggets per topic, "
                      "mean nugget length in whitespace tokens, the share of vital nuggets, and the shares of "
                      "nugget-answer pairs labelled not support, partial support and support (each judge on the topics "
                      "it shares with the human labels).")
    return Table(["label source", "role", "topics"] + [h for _, h, *_ in one], body, caption,
                 [False, False] + [True] * 9, tex_columns=["", "", ""] + [t for _, _, t, _ in one],
                 where=["", "report", ""] + [w for *_, w in one], paper=paper)
