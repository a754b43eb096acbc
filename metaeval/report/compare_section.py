"""The report's comparison section: which judge, prompt or strategy agrees better with the reference.

It renders a comparison document (``metaeval-compare``: ``analysis/compare.json`` of a sweep, written by
``metaeval.study.compare``; or ``compare.json`` of ``metaeval compare``): one plain-language line per pair, then a
table of the paired differences on the report's metric (run-level, per-topic and pooled tau, Cohen's kappa,
weighted kappa and exact agreement of the labels, raw and calibrated held-out error), each ``A - B`` with its 95%
interval and Holm-adjusted p, and the other metrics in a closed block.  Nothing is computed here.
:func:`compare_latex` is the same table for the paper (``report --latex``: ``compare.tex``).
"""

from __future__ import annotations

from typing import Any, Mapping

from metaeval.report.context import Context, dash
from metaeval.formatting import p_value
from metaeval.io.latex import latex_text
from metaeval.report.model import Cell, Detail, Est, Ident, Items, Num, Paper, Section, Table, Text

TITLE = "Which configuration agrees better: paired comparisons"
COLUMNS = ["A", "B", "statistic", "A value", "B value", "A - B [95% CI]", "Holm p", "better"]
#: statistic names as the table prints them, in table order
STATISTICS = {("tau", "run"): "run-level tau", ("tau", "topic_avg"): "per-topic tau", ("tau", "pooled"): "pooled tau",
              ("cohen_kappa", "labels"): "Cohen's kappa (labels)", ("weighted_kappa", "labels"): "weighted kappa (labels)",
              ("exact_agreement", "labels"): "exact agreement (labels)",
              ("raw_mae", "run"): "raw held-out MAE (lower is better)",
              ("calibrated_mae", "run"): "calibrated nested MAE (lower is better)"}


def rows_for(doc: Mapping[str, Any], metric: str) -> list[dict[str, Any]]:
    """The document's rows on ``metric`` (tau, calibrated error) and the label agreement, in table order."""
    order = list(STATISTICS)
    rows = [r for r in doc.get("rows") or []
            if (r.get("statistic"), r.get("level")) in STATISTICS
            and (r.get("level") == "labels" or r.get("metric") == metric)]
    pairs = list(dict.fromkeys((r["candidate_a"], r["candidate_b"]) for r in rows))
    return sorted(rows, key=lambda r: (pairs.index((r["candidate_a"], r["candidate_b"])),
                                       order.index((r["statistic"], r["level"]))))


def _table(rows: list[dict[str, Any]], caption: str, paper: Paper | None = None, names: Any = None) -> Table:
    """The paired differences, defined once for the report and the paper (``compare.tex``: A, B, the statistic,
    A - B with its interval and the Holm p; a configuration of the report named in words by ``names``)."""
    def side(c: str) -> Cell:
        return Cell(c, tex=names.phrase(c)) if names is not None and c in names.cells else Ident(c)

    body = [[side(r["candidate_a"]), side(r["candidate_b"]),
             Cell(STATISTICS[(r["statistic"], r["level"])],
                  tex=latex_text(STATISTICS[(r["statistic"], r["level"])].replace(" (lower is better)", ""))),
             Num(r.get("value_a")), Num(r.get("value_b")),
             Est(r.get("diff"), [r.get("ci_low"), r.get("ci_high")], 3, 3, signed=True, ci_signed=True),
             p_value(r.get("p_holm")), r.get("better") or "-"] for r in rows]
    return Table(COLUMNS, body, caption, [False, False, False, True, True, True, True, False],
                 tex_columns=["", "", "", "", "", "$A-B$ [95\\% CI]", "Holm $p$", ""],
                 where=["", "", "", "report", "report", "", "", "report"], paper=paper)


def compare_blocks(doc: Mapping[str, Any], metric: str) -> tuple[list, dict[str, Any]]:
    """``(blocks, data)``: the section's blocks for a comparison document and the figures for ``report.json``."""
    n_boot = doc.get("n_boot")
    rows = rows_for(doc, metric)
    lines = list(doc.get("lines") or [])
    differs = {(d["candidate_a"], d["candidate_b"]): d["text"] for d in doc.get("differs") or []}
    blocks: list = [Text(
        f"Pairs compared: {doc.get('pairs')}; reference: {doc.get('reference')}. Each difference is A minus B on "
        f"the same {dash(n_boot)} topic resamples (paired topic bootstrap, 95% percentile interval per comparison, not "
        f"adjusted for multiplicity); p-values are Holm-adjusted over the pairs, per statistic; 'better' names a side only where the adjusted p is below "
        f"{doc.get('alpha', 0.05):g}. Calibrated error: held-out run-level MAE of each cell's calibration study, "
        "the interval from the folds' standard errors treated as independent (conservative).", "p")]
    if lines:
        blocks.append(Items(lines))
    blocks.append(_table(rows, f"paired differences on {metric} (tau levels, calibrated error) and on the support "
                               "labels (agreement); A - B > 0 favours A except for MAE"))
    others = [r for r in doc.get("rows") or [] if r.get("statistic") == "tau" and r.get("metric") != metric]
    if others:
        extra = sorted({r["metric"] for r in others})
        blocks.append(Detail(f"the other metrics ({', '.join(extra)})", [
            _table([r for r in others if r["metric"] == m], f"paired tau differences on {m}") for m in extra],
            open=False))
    data = {"pairs": doc.get("pairs"), "reference": doc.get("reference"), "metric": metric, "n_boot": n_boot,
            "alpha": doc.get("alpha"), "lines": lines, "rows": rows,
            "differs": [{"candidate_a": a, "candidate_b": b, "text": t} for (a, b), t in differs.items()]}
    return blocks, data


def section(ctx: Context) -> Section | None:
    """The sweep's comparisons (``analysis/compare.json``); None when the study compared no pair."""
    from metaeval.errors import MetaevalError

    path = ctx.res.layout.analysis_dir / "compare.json"
    try:
        doc = ctx.res.layout.read_json(path, required=False)
    except MetaevalError as exc:
        ctx.unreadable(path, exc)
        return None
    if not doc or not doc.get("rows"):
        return None
    blocks, data = compare_blocks(doc, ctx.metric)
    ctx.data["compare"] = data
    return Section("compare", TITLE, blocks)


def compare_table(cmp: Mapping[str, Any], names: Any = None) -> Table:
    """The paper's comparison table (``compare.tex``) of a report's comparison (``report.json``'s ``compare``);
    ``names`` (:class:`metaeval.report.render_latex.Names`) names the configurations and the metric as the paper
    does, and adds the README's description."""
    metric = names.metric_tex if names is not None else latex_text(cmp.get("metric") or "")
    cap = (f"Paired differences between configurations on {metric}: $A-B$ with its 95\\% paired topic-bootstrap "
           "interval, unadjusted (MAE: normal, from fold SEs), and Holm-adjusted $p$.")
    det = ""
    if names is not None:
        det = (f"Paired differences A - B between judge configurations on {names.metric_plain}, {names.data_plain}: "
               f"run-level, per-topic and pooled Kendall tau with the human labels, label agreement and held-out "
               f"calibrated error, each on the same {cmp.get('n_boot')} topic resamples (paired topic bootstrap, 95% "
               "percentile interval per comparison, not adjusted for multiplicity; the MAE's interval is normal, from "
               f"the folds' standard errors treated as independent); p-values Holm-adjusted over the pairs, per statistic (alpha {cmp.get('alpha')}).")
    return _table(cmp.get("rows") or [], "", Paper("compare", cap, det, stacked=False), names)


def compare_latex(data: Mapping[str, Any]) -> dict[str, str]:
    """``{"compare": LaTeX}`` of a report's comparison (``report.json``'s ``compare``), or ``{}``."""
    from metaeval.report.render_latex import render

    cmp = data.get("compare")
    return {"compare": render(compare_table(cmp))} if cmp and cmp.get("rows") else {}
