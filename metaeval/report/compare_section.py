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

from metaeval.formatting import fixed, is_missing, p_value
from metaeval.report.context import Context, dash
from metaeval.report.model import Detail, Items, Section, Table, Text, fmt

TITLE = "Which configuration agrees better: paired comparisons"
COLUMNS = ["A", "B", "statistic", "A value", "B value", "A - B [95% CI]", "Holm p", "better"]
#: statistic names as the table prints them, in table order
STATISTICS = {("tau", "run"): "run-level tau", ("tau", "topic_avg"): "per-topic tau", ("tau", "pooled"): "pooled tau",
              ("cohen_kappa", "labels"): "Cohen's kappa (labels)", ("weighted_kappa", "labels"): "weighted kappa (labels)",
              ("exact_agreement", "labels"): "exact agreement (labels)",
              ("raw_mae", "run"): "raw held-out MAE (lower is better)",
              ("calibrated_mae", "run"): "calibrated nested MAE (lower is better)"}


def _diff(r: Mapping[str, Any]) -> str:
    d, lo, hi = (r.get(k) for k in ("diff", "ci_low", "ci_high"))
    if is_missing(d):
        return "n/a"
    return f"{fixed(d, signed=True)} [{fixed(lo, signed=True)}, {fixed(hi, signed=True)}]"


def rows_for(doc: Mapping[str, Any], metric: str) -> list[dict[str, Any]]:
    """The document's rows on ``metric`` (tau, calibrated error) and the label agreement, in table order."""
    order = list(STATISTICS)
    rows = [r for r in doc.get("rows") or []
            if (r.get("statistic"), r.get("level")) in STATISTICS
            and (r.get("level") == "labels" or r.get("metric") == metric)]
    pairs = list(dict.fromkeys((r["candidate_a"], r["candidate_b"]) for r in rows))
    return sorted(rows, key=lambda r: (pairs.index((r["candidate_a"], r["candidate_b"])),
                                       order.index((r["statistic"], r["level"]))))


def _table(rows: list[dict[str, Any]], caption: str) -> Table:
    body = [[r["candidate_a"], r["candidate_b"], STATISTICS[(r["statistic"], r["level"])], fmt(r.get("value_a")),
             fmt(r.get("value_b")), _diff(r), p_value(r.get("p_holm")), r.get("better") or "-"] for r in rows]
    return Table(COLUMNS, body, caption, [False, False, False, True, True, True, True, False])


def compare_blocks(doc: Mapping[str, Any], metric: str) -> tuple[list, dict[str, Any]]:
    """``(blocks, data)``: the section's blocks for a comparison document and the figures for ``report.json``."""
    n_boot = doc.get("n_boot")
    rows = rows_for(doc, metric)
    lines = list(doc.get("lines") or [])
    differs = {(d["candidate_a"], d["candidate_b"]): d["text"] for d in doc.get("differs") or []}
    blocks: list = [Text(
        f"Pairs compared: {doc.get('pairs')}; reference: {doc.get('reference')}. Each difference is A minus B on "
        f"the same {dash(n_boot)} topic resamples (paired topic bootstrap, 95% percentile interval); p-values are "
        f"Holm-adjusted over the pairs, per statistic; 'better' names a side only where the adjusted p is below "
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


def compare_latex(data: Mapping[str, Any]) -> dict[str, str]:
    """``{"compare": LaTeX}`` of a report's comparison (``report.json``'s ``compare``), or ``{}``."""
    cmp = data.get("compare") or {}
    rows = cmp.get("rows") or []
    if not rows:
        return {}
    import pandas as pd

    from metaeval.io.latex import latex_table, latex_text

    def num(x: Any, signed: bool = False) -> str:
        return fixed(x, signed=signed, missing="n/a").replace("-", "$-$")  # a LaTeX minus

    body = [[latex_text(r["candidate_a"], breakable=True), latex_text(r["candidate_b"], breakable=True),
             latex_text(STATISTICS[(r["statistic"], r["level"])].replace(" (lower is better)", "")),
             num(r.get("diff"), True) + f" [{num(r.get('ci_low'), True)}, {num(r.get('ci_high'), True)}]",
             latex_text(p_value(r.get("p_holm")))] for r in rows]
    df = pd.DataFrame(body, columns=["A", "B", "statistic", "$A-B$ [95\\% CI]", "Holm $p$"])
    cap = (f"Paired differences between configurations on {latex_text(cmp.get('metric') or '')}: $A-B$ with its "
           "95\\% paired topic-bootstrap interval (MAE: normal interval from fold SEs) and Holm-adjusted $p$.")
    return {"compare": latex_table(df, numeric=[False, False, False, True, True], caption=cap,
                                   label="tab:metaeval-compare")}
