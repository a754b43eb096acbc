"""``metaeval report --latex``: the study's main tables as LaTeX a paper takes as it is, in ``<results>/report_latex/``.

One ``.tex`` file per table.  Each table is defined once, by the report section that shows it (a
:class:`~metaeval.report.model.Table` built from what the report holds: ``report.json``'s data, the study's figures,
nothing recomputed); :mod:`metaeval.report.render_latex` typesets it for the paper (through
:func:`metaeval.io.latex.latex_table`: pandas' ``Styler.to_latex``, booktabs, a ``tabularx`` at ``\\linewidth`` so
nothing runs into the margin).  This module picks the tables, in paper order, and writes the folder:

* ``tau`` - Kendall's tau at the run, per-topic (mean) and pooled levels, each over its 95% topic-bootstrap CI;
* ``leaderboard_<cell>`` - per run: the reference (human) score, the judge's raw score with its interval and, when
  some topics have no human labels, the calibrated estimate of the human score over every topic with its interval;
  up to :data:`STACK_MAX_ROWS` runs it is one column wide, a longer one is set in two halves side by side across
  both columns (45 runs: 23 lines in \\scriptsize, 0.7 of the text height) instead of a page-high float;
* ``calibration_<cell>`` - one table per judge configuration: every candidate (raw, composite, the corrections) on
  the calibration procedure's random splits of the human-labelled topics (sized like human-labelled : judge-only):
  held-out whole-track error, the difference to raw, tau, coverage and width of the interval shown with it;
  the shown point method in bold, the interval method (PPI++) marked when it is another;
* ``ranksets_<cell>`` - per run the PPI++ estimate of the human score over all topics with its group letters as
  superscripts (runs sharing a letter cannot be told apart at 95% simultaneous confidence), its rank-set and the
  runs it is above / below;
* ``bias``, ``strictness``, ``descriptive`` - per-run bias, label agreement and strictness, the paper's Table 4;
* ``compare`` - the paired differences between configurations (``metaeval.report.compare_section``).
* ``plan`` - when the results folder holds the assessor plan (``study/plan.json``): precision of the calibrated
  leaderboard against the number of human-labelled topics, with assessor hours.

The pass/fail verdict is not a paper table: it goes in the folder's ``README.md`` with every table's full
description (what is estimated, on which data, with which interval).  Captions stay at most three lines in an 11pt
two-column article (the details are in the README); the references are ``\\citep``/``\\citet`` keys of the shipped
``metaeval.bib``.  Cells are named by judge, prompt (when any judge has one) and where the nuggets come from, never by
the internal cell id.  ``tables.tex`` ``\\input``s them all, ``preamble.tex`` holds the packages (``booktabs``,
``tabularx``, ``natbib``) and ``standalone.tex`` is an 11pt two-column article that compiles as it is
(``pdflatex standalone; bibtex standalone; pdflatex standalone`` in that folder).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from metaeval.io.latex import PREAMBLE
from metaeval.report.model import Num, Report, Table
from metaeval.report.render_latex import Names, details, render

BIB_NAME = "metaeval.bib"
#: the extra package the tables' citations need (``\\citep``); acmart and most ACL/IEEE templates load it already
CITE_PREAMBLE = "\\usepackage{natbib}\n"


class _Paper:
    """The tables of one report (:meth:`tables`: ``{file stem: Table}``, in paper order), their LaTeX and the
    folder's README (each table's full description; the verdict, which no paper prints).

    ``report.json``'s parts that are records of the results schema - each cell's calibration (with its rank-sets)
    and its per-run bias, as the study wrote them - are decoded into those records (:mod:`metaeval.study.records`;
    a value that does not fit names the field); records given as they are stay as they are."""

    def __init__(self, data: Mapping[str, Any]):
        from metaeval.study.records import Calibration, MetricBias, decode

        self.d = data
        self.names = Names(data)
        self.calibration: dict[str, Calibration | None] = {
            cid: decode(Calibration | None, cal, "report.json", f"calibration.{cid}") if isinstance(cal, Mapping) else cal
            for cid, cal in data.get("calibration", {}).items()}
        self.bias: dict[str, MetricBias] = {
            cid: decode(MetricBias, b, "report.json", f"bias.{cid}") if isinstance(b, Mapping) else b
            for cid, b in data.get("bias", {}).items()}

    def tables(self) -> dict[str, Table]:
        """Every paper table, built by the sections' own table functions from ``report.json``'s records: tau, the
        calibration candidates and the leaderboard of each configuration, rank-sets, bias, label agreement, Table 4,
        the assessor plan, the paired comparisons."""
        from metaeval.report import agreement_section, calibration_section, compare_section, plan_section
        from metaeval.report import ranking_section, rankset_section
        from metaeval.study.records import CellCalibration, RankSets

        d, names, metric = self.d, self.names, self.names.metric
        out: list[Table] = []
        tau = ranking_section.tau_table(d.get("tau") or [], metric, list(names.cells), names)
        out += [tau] if tau.rows else []
        cals = {c: x for c, x in self.calibration.items() if isinstance(x, CellCalibration)}  # the ones that ran
        out += [calibration_section.candidates_table(x, c, names) for c, x in cals.items()]
        for lb in d.get("leaderboards") or []:
            cal = cals.get(lb["cell"])
            if cal is not None and cal.metric == metric and cal.leaderboard.rows:
                out.append(calibration_section.leaderboard_table(cal, lb["cell"], names))
            elif lb.get("rows"):
                out.append(ranking_section.board_table(lb, names))
        for cell, cal in cals.items():
            rs = cal.rank_sets
            if isinstance(rs, RankSets) and rs.ok and rs.metric == metric:
                out.append(rankset_section.rankset_table(cell, rs, names))
        for t in (ranking_section.bias_table(self.bias, names),
                  agreement_section.strictness_table(d.get("strictness") or [], names),
                  agreement_section.descriptive_table(d.get("descriptive") or [], names)):
            out += [t] if t.rows else []
        plan = d.get("plan")
        try:
            out.append(plan_section.plan_table(plan, plan["metric"], names))
        except (KeyError, TypeError, IndexError):
            pass
        cmp = d.get("compare")
        if cmp and cmp.get("rows"):
            out.append(compare_section.compare_table(cmp, names))
        return {t.paper.name: t for t in out if t.paper is not None}

    def all(self) -> dict[str, str]:
        """``{file stem: LaTeX}`` in paper order."""
        self._tables = self.tables()
        return {n: render(t, self.names) for n, t in self._tables.items()}

    def verdict_lines(self) -> list[str]:
        """The pass/fail verdict per configuration as Markdown lines for the README (no paper prints it)."""
        from metaeval.report.verdict import CHECKS

        v = self.d.get("verdict")
        if not v:  # a report without a verdict (the Python API's partial data)
            return []
        th = {k: x for k, x in v["thresholds"].items() if k != "metric" and x is not None}
        cells = [c for c in v["cells"] if c["status"] not in ("skipped", "withheld")]
        if not cells:
            return []
        keys = list(th)
        rules = "; ".join(f"{CHECKS[k][0]} {CHECKS[k][3]} {th[k]:g}" for k in keys if k in CHECKS)
        out = ["## Verdict (not a paper table)", "",
               f"Pass/fail per judge configuration on {self.names.data_plain}, metric {self.names.metric_plain}; a "
               f"configuration passes when every check holds: {rules}.", "",
               "| configuration | verdict | " + " | ".join(CHECKS[k][0] if k in CHECKS else k for k in keys) + " |",
               "|---|---|" + "---:|" * len(keys)]
        for c in cells:
            by = {x["check"]: x for x in c["checks"]}
            vals = [("undefined" if k not in by or by[k].get("value") is None else str(Num(by[k]["value"]))) for k in keys]
            out.append(f"| {self.names.plain(c['cell'])} | {c['status'].upper()} | " + " | ".join(vals) + " |")
        return out + [""]

    def readme(self, names: list[str]) -> str:
        """``README.md`` of the folder: how to use the tables, each table's full description, the verdict."""
        out = ["# metaeval paper tables", "",
               "Generated by `metaeval report --latex` from this results folder's `report.json`; every number is the "
               "study's own. Add `preamble.tex`'s packages to your preamble, `\\input{tables}` (or single files) in "
               f"the body and `{BIB_NAME}` to your `\\bibliography{{...}}`: the captions cite its keys with "
               "`\\citep`/`\\citet` (natbib; acmart loads it already). `standalone.tex` is an 11pt two-column "
               "article with every table: `pdflatex standalone && bibtex standalone && pdflatex standalone && "
               "pdflatex standalone`.", "",
               "Captions are kept to three lines; what each table estimates, on which data and with which interval "
               "is below.", "", "## Tables", ""]
        for n in names:
            out += [f"- `{n}.tex` (label `tab:metaeval-{n}`): {details(self._tables[n]) if n in self._tables else ''}".rstrip(": "), ""]
        return "\n".join(out + self.verdict_lines()).rstrip() + "\n"


def paper_tables(data: Mapping[str, Any]) -> dict[str, str]:
    """``{file stem: LaTeX table}`` for a report's data (``Report.data`` or a ``report.json``), in paper order."""
    return _Paper(data).all()


def bibliography() -> str:
    """The BibTeX entries the tables cite (``metaeval.bib``, shipped with the package)."""
    return resources.files("metaeval.report").joinpath(BIB_NAME).read_text(encoding="utf-8")


def standalone(names: list[str], wide: set[str] | None = None) -> str:
    """An 11pt two-column article that ``\\input``s the tables and their bibliography (compiles as it is; copy the
    preamble into your paper); the ``wide`` ones (``table*``) last, so that the one-column tables fill the first
    page's two columns (floats keep their order)."""
    wide = wide or set()
    names = [n for n in names if n not in wide] + [n for n in names if n in wide]
    return ("\\documentclass[11pt,twocolumn]{article}\n\\input{preamble}\n\\begin{document}\n"
            "% metaeval report --latex: every table of this folder, as it prints in a two-column paper\n"
            + "".join(f"\\input{{{n}}}\n" for n in names)
            + f"\\clearpage\n\\bibliographystyle{{plainnat}}\n\\bibliography{{{Path(BIB_NAME).stem}}}\n\\end{{document}}\n")


def write_latex(rep: Report, layout) -> Path:
    """Write the paper tables of ``rep`` to ``layout.root / "report_latex"`` (one ``.tex`` each, ``tables.tex``,
    ``preamble.tex``, ``standalone.tex``, ``metaeval.bib`` and ``README.md``); tables of an earlier export that this
    report lacks are removed."""
    folder = layout.root / "report_latex"
    folder.mkdir(parents=True, exist_ok=True)
    paper = _Paper(rep.data)
    tables = paper.all()
    keep = set(tables) | {"tables", "preamble", "standalone"}
    for old in folder.glob("*.tex"):
        if old.stem not in keep:
            old.unlink()
    for name, tex in tables.items():
        layout.write_text(folder / f"{name}.tex", tex)
    layout.write_text(folder / "preamble.tex", "% packages the metaeval tables need\n" + PREAMBLE + CITE_PREAMBLE)
    layout.write_text(folder / "tables.tex", "% \\input this file (preamble: preamble.tex)\n"
                      + "".join(f"\\input{{{n}}}\n" for n in tables))
    layout.write_text(folder / "standalone.tex",
                      standalone(list(tables), {n for n, tex in tables.items() if "\\begin{table*}" in tex}))
    layout.write_text(folder / BIB_NAME, bibliography())
    layout.write_text(folder / "README.md", paper.readme(list(tables)))
    return folder
