"""``metaeval report --latex``: the study's main tables as LaTeX a paper takes as it is, in ``<results>/report_latex/``.

One ``.tex`` file per table, built from what the report holds (``report.json``'s data: the study's figures, nothing
recomputed) and written by :func:`metaeval.io.latex.latex_table` (pandas' ``Styler.to_latex``, booktabs, a
``tabularx`` at ``\\linewidth`` so nothing runs into the margin):

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
from typing import Any, Callable, Mapping

from metaeval.formatting import fixed, interval
from metaeval.io.latex import PREAMBLE, latex_table, latex_text, stack
from metaeval.measures import DEFAULT_PRIMARY, find_measure
from metaeval.report.model import Report

#: where a cell's nuggets come from (the judge assigns them to the answers in every judged strategy)
NUGGET_SOURCE = {"auto_auto": "judge's own", "human_auto": "human", "human_judge_importance": "human, judge importance",
                 "human_human": "human (reference)"}
#: up to this many runs a leaderboard is one column wide (each interval below its estimate); a longer one is set in
#: two halves side by side across both columns
STACK_MAX_ROWS = 24
#: above this many letter groups the rank-set table leaves the superscripts out (the caption says so)
LETTERS_MAX = 12
LEVEL_NAMES = {"run": "run", "topic_avg": "topic", "pooled": "pooled"}
#: BibTeX keys of ``metaeval.bib`` (shipped beside the tables)
CITE_NUGGETS, CITE_PPI, CITE_PPI_PP, CITE_KENDALL = ("pradeep2025greatnuggetrecall", "angelopoulos2023ppi",
                                                     "angelopoulos2023ppipp", "kendall1938tau")
BIB_NAME = "metaeval.bib"
#: the extra package the tables' citations need (``\\citep``); acmart and most ACL/IEEE templates load it already
CITE_PREAMBLE = "\\usepackage{natbib}\n"


def method_name(cal: Mapping[str, Any], method: str) -> str:
    """A calibration method as tables print it (``PPI++``): the display name the calibration recorded from the method
    registry (``method_names``), else the name itself."""
    return str((cal.get("method_names") or {}).get(method, method))


def _n(x: Any, digits: int = 3, signed: bool = False) -> str:
    return fixed(x, digits, signed=signed, missing="n/a").replace("-", "$-$")  # a LaTeX minus


def _ci(ci: Any, digits: int = 2) -> str:
    return interval(ci, digits).replace("-", "$-$")


def _est_ci(est: Any, ci: Any, *, stacked: bool, digits: int = 3, signed: bool = False) -> str:
    e, c = _n(est, digits, signed), _ci(ci)
    if e == "n/a" or not c:
        return e
    return stack(e, c) if stacked else f"{e} {c}"


def _pm(d: Mapping[str, Any] | None, *, stacked: bool = True, signed: bool = False) -> str:
    """``mean`` over ``$\\pm$ se`` (the caption says it is a standard error)."""
    if not d or d.get("mean") is None:
        return "n/a"
    e = _n(d["mean"], 3, signed)
    if d.get("se") is None:
        return e
    return stack(e, f"$\\pm$ {_n(d['se'])}") if stacked else f"{e} $\\pm$ {_n(d['se'])}"


def _plain(x: Any, digits: int = 3) -> str:
    return fixed(x, digits, missing="n/a")


class _Paper:
    """The tables of one report, as ``{file stem: LaTeX}``; ``details[stem]`` is each table's full description in
    plain text (the folder's README), ``readme`` the notes that are not a table (the verdict)."""

    def __init__(self, data: Mapping[str, Any]):
        self.d = data
        self.metric = str(data.get("metric") or DEFAULT_PRIMARY)  # report.json records the metric it rendered
        known = find_measure(self.metric)  # as typeset in the paper (metaeval.measures: V with subscript strict)
        self.metric_tex = known.latex if known is not None else latex_text(self.metric)
        self.metric_plain = getattr(known, "display", None) or self.metric
        self.cells = {r["cell"]: r for r in data.get("usage") or []}
        self.prompts = any((r.get("prompt") or "none") != "none" for r in self.cells.values())
        prov = data.get("provenance") or {}
        ds = prov.get("dataset") or {}
        name = ((prov.get("config") or {}).get("dataset") or {}).get("name") or ds.get("name") or "the dataset"
        self.data_plain = f"{name} ({ds.get('topics', '?')} topics, {ds.get('runs', '?')} runs"
        self.data_plain += "; synthetic data)" if data.get("synthetic") else ")"
        self.data_phrase = latex_text(self.data_plain)
        self.details: dict[str, str] = {}

    # ---------------------------------------------------------------- names
    def name_cols(self, cell: str) -> list[str]:
        """judge, [prompt,] nuggets - the readable parts of a cell id."""
        r = self.cells.get(cell) or {}
        cols = [latex_text(r.get("judge") or cell, breakable=True)]
        if self.prompts:
            p = r.get("prompt") or "none"
            cols.append("--" if p == "none" else latex_text(p, breakable=True))
        s = r.get("strategy") or ""
        cols.append(latex_text(NUGGET_SOURCE.get(s, s)))
        return cols

    def name_head(self) -> list[str]:
        return ["judge"] + (["prompt"] if self.prompts else []) + ["nuggets"]

    def cell_plain(self, cell: str) -> str:
        r = self.cells.get(cell) or {}
        s = NUGGET_SOURCE.get(r.get("strategy") or "", r.get("strategy") or "")
        p = r.get("prompt") or "none"
        return f"judge {r.get('judge') or cell}" + ("" if p == "none" else f", prompt {p}") + f", {s} nuggets"

    def cell_phrase(self, cell: str) -> str:
        return latex_text(self.cell_plain(cell))

    def _frame(self, head: list[str], rows: list[list[str]]):
        import pandas as pd

        return pd.DataFrame(rows, columns=head)

    def _table(self, head: list[str], rows: list[list[str]], numeric: list[bool], caption: str, name: str,
               details: str = "", **kw: Any) -> str:
        """A table float; ``caption`` (LaTeX) at most three lines, ``details`` (plain text) for the README."""
        if details:
            self.details[name] = details
        return latex_table(self._frame(head, rows), numeric=numeric, caption=caption, label=f"tab:metaeval-{name}",
                           **kw)

    def _per_config(self, rows: list[list[str]], columns: list[str], caption: str, name: str,
                    details: str = "") -> str | None:
        """A table with one row per judge configuration: its name columns, then the numeric ``columns``; None
        without rows."""
        if not rows:
            return None
        return self._table(self.name_head() + columns, rows, [False] * len(self.name_head()) + [True] * len(columns),
                           caption, name, details)

    # ---------------------------------------------------------------- the verdict (README, not a paper table)
    def verdict_lines(self) -> list[str]:
        """The pass/fail verdict per configuration as Markdown lines for the README (no paper prints it)."""
        from metaeval.report.verdict import CHECKS

        v = self.d.get("verdict") or {}
        th = {k: x for k, x in (v.get("thresholds") or {}).items() if k != "metric" and x is not None}
        cells = [c for c in v.get("cells") or [] if c["status"] not in ("skipped", "withheld")]
        if not cells:
            return []
        keys = list(th)
        rules = "; ".join(f"{CHECKS[k][0]} {CHECKS[k][3]} {th[k]:g}" for k in keys if k in CHECKS)
        out = ["## Verdict (not a paper table)", "",
               f"Pass/fail per judge configuration on {self.data_plain}, metric {self.metric_plain}; a configuration "
               f"passes when every check holds: {rules}.", "",
               "| configuration | verdict | " + " | ".join(CHECKS[k][0] if k in CHECKS else k for k in keys) + " |",
               "|---|---|" + "---:|" * len(keys)]
        for c in cells:
            by = {x["check"]: x for x in c["checks"]}
            vals = [("undefined" if (by.get(k) or {}).get("value") is None else _plain(by[k]["value"])) for k in keys]
            out.append(f"| {self.cell_plain(c['cell'])} | {c['status'].upper()} | " + " | ".join(vals) + " |")
        return out + [""]

    # ---------------------------------------------------------------- tables
    def tau(self) -> str | None:
        look = {(r["cell"], r["metric"], r["level"]): r for r in self.d.get("tau") or []}
        rows = []
        for cell in self.cells:
            if (cell, self.metric, "run") not in look:
                continue
            rows.append(self.name_cols(cell) + [
                _est_ci(look[(cell, self.metric, lv)].get("tau"),
                        [look[(cell, self.metric, lv)].get("ci_low"), look[(cell, self.metric, lv)].get("ci_high")],
                        stacked=True) if (cell, self.metric, lv) in look else "n/a"
                for lv in LEVEL_NAMES])
        cap = (f"Kendall's $\\tau$, judge vs.\\ human {self.metric_tex} rankings \\citep{{{CITE_NUGGETS}}}, "
               f"{self.data_phrase}; 95\\% CI below.")
        det = (f"Kendall's tau-b between the rankings by the judge's and by the human labels' {self.metric_plain} on "
               f"{self.data_plain}: run = runs ranked by their mean score over topics; topic = runs ranked within "
               "each topic, tau averaged over the topics where it is defined; pooled = tau over all (topic, run) "
               "cells (the three levels of Pradeep et al., 2025). Below each estimate its 95% topic-bootstrap "
               "confidence interval (topics resampled with replacement).")
        return self._per_config(rows, [LEVEL_NAMES[lv] for lv in LEVEL_NAMES], cap, "tau", det)

    def leaderboards(self) -> dict[str, str]:
        out = {}
        cals = self.d.get("calibration") or {}
        for lb in self.d.get("leaderboards") or []:
            cell = lb["cell"]
            cal = cals.get(cell) or {}
            clb = cal.get("leaderboard") if cal.get("metric", self.metric) == self.metric else None
            if clb and clb.get("rows"):
                out[f"leaderboard_{cell}"] = self._calibrated_leaderboard(cell, cal, clb)
            elif lb.get("rows"):
                out[f"leaderboard_{cell}"] = self._raw_leaderboard(cell, lb)
        return out

    def _board(self, cell: str, head: list[str], rows: list[list[str]], caption: str, details: str,
               name: str | None = None) -> str:
        """A leaderboard float: one column up to :data:`STACK_MAX_ROWS` runs, else two halves side by side across
        both columns (first half on the left), in footnote size."""
        numeric = [False] + [True] * (len(head) - 1)
        name = name or f"leaderboard_{cell}"
        if len(rows) <= STACK_MAX_ROWS:
            return self._table(head, rows, numeric, caption, name, details, wide=False)
        half = (len(rows) + 1) // 2
        left, right = rows[:half], rows[half:] + [[""] * len(head)] * (2 * half - len(rows))
        return self._table(head + head, [a + b for a, b in zip(left, right)], numeric + numeric, caption, name,
                           details + f" Set in two halves side by side: ranks 1-{half} on the left, "
                                     f"{half + 1}-{len(rows)} on the right.", wide=True, size="\\scriptsize")

    def _calibrated_leaderboard(self, cell: str, cal: Mapping[str, Any], clb: Mapping[str, Any]) -> str:
        """Per run: the human score on the human-labelled topics, the judge's raw score, and - when some topics have
        no human labels - the calibrated estimate of the human score over every topic, each with its interval."""
        rows_in = sorted(clb["rows"], key=lambda r: (r.get("human_labelled") is None, -(r.get("human_labelled") or 0)))
        n_lab, n_only = clb.get("human_labelled_topics"), clb.get("judge_only_topics") or 0
        estimate = n_only > 0  # with every topic labelled the estimate is the human score itself
        stacked = len(rows_in) <= STACK_MAX_ROWS or estimate
        head = ["run", "human", "judge"] + (["calibrated"] if estimate else [])
        rows = [[latex_text(r["run_id"], breakable=True), _n(r.get("human_labelled")),
                 _est_ci(r.get("judge_score"), r.get("judge_score_ci"), stacked=stacked)]
                + ([_est_ci(r.get("human_estimate"), r.get("human_estimate_ci"), stacked=stacked)] if estimate else [])
                for r in rows_in]
        m = clb.get("estimated_by") or "?"
        by = method_name(cal, m)
        cite = {"ppi": CITE_PPI, "ppi_pp": CITE_PPI_PP}.get(m)
        where = "below" if stacked else "beside"
        if estimate:
            cited = f" \\citep{{{cite}}}" if cite else ""
            what = f", calibrated: {latex_text(by)}{cited}, all {n_lab + n_only} topics"
            more = (f"calibrated = the estimated human score over all {n_lab + n_only} topics: human labels on the "
                    f"{n_lab} labelled ones, {by} on the {n_only} judge-only ones, with {by}'s 95% interval "
                    f"({clb.get('intervals_why') or ''}).")
        else:
            what = ""
            more = ("Every topic is human-labelled, so the calibrated estimate of the human leaderboard is the "
                    "reference itself (no calibrated column); the calibration table gives each method's error on "
                    "held-out topics.")
        cap = f"{self.metric_tex} per run, {self.cell_phrase(cell)}, {self.data_phrase}: human, judge (95\\% CI {where}){what}."
        det = (f"Run leaderboard on {self.metric_plain}, {self.cell_plain(cell)}, on {self.data_plain}, runs ordered by "
               f"the reference: human = mean human score over the {n_lab} human-labelled topics; judge = the judge's "
               f"mean score with its 95% topic-bootstrap interval {where} it (an interval for the judge's score, not "
               f"the human one). " + more)
        return self._board(cell, head, rows, cap, det)

    def _raw_leaderboard(self, cell: str, lb: Mapping[str, Any]) -> str:
        rows_in = sorted(lb["rows"], key=lambda r: (r.get("reference") is None, -(r.get("reference") or 0)))
        stacked = len(rows_in) <= STACK_MAX_ROWS
        rows = [[latex_text(r["run_id"], breakable=True), _n(r.get("reference")),
                 _est_ci(r.get("raw"), r.get("raw_ci"), stacked=stacked)] for r in rows_in]
        where = "below" if stacked else "beside"
        cap = f"{self.metric_tex} per run, {self.cell_phrase(cell)}, {self.data_phrase}: human, judge (95\\% CI {where})."
        det = (f"Run leaderboard on {self.metric_plain}, {self.cell_plain(cell)}, on {self.data_plain}, runs ordered by "
               "the reference: human = mean human score over topics; judge = the judge's mean score with its 95% "
               f"topic-bootstrap interval {where} it. Not calibrated: calibration needs the judge to label the human "
               "nuggets.")
        return self._table(["run", "human", "judge"], rows, [False, True, True], cap, f"leaderboard_{cell}", det,
                           wide=False) if len(rows) <= STACK_MAX_ROWS else \
            self._board(cell, ["run", "human", "judge"], rows, cap, det)

    def calibration(self) -> dict[str, str]:
        """One table per judge configuration: every candidate method on held-out topics, the selection's verdict."""
        cals = {c: x for c, x in (self.d.get("calibration") or {}).items() if x and x.get("selection")}
        return {f"calibration_{cell}": self._candidates(cell, cal) for cell, cal in cals.items()}

    def _candidates(self, cell: str, cal: Mapping[str, Any]) -> str:
        """Every candidate (raw, composite, the corrections) on the procedure's held-out splits; the shown point
        method in bold, the interval method (PPI++) marked when it is another."""
        cands = cal.get("candidates") or {}
        sel = cal.get("selection") or {}
        shown, ib = sel.get("method"), sel.get("intervals_by")
        order = [k for k in ("raw", "composite") if k in cands] + [k for k in cands if k not in ("raw", "composite")]
        rows, refusals = [], []
        for m in order:
            c = cands[m]
            name = latex_text(method_name(cal, m))
            if m == shown:
                name = f"\\textbf{{{name}}}"
            elif m == ib:
                name += "$^\\dagger$"
            if c.get("status") != "ok" or not c.get("held_out"):
                if c.get("status") not in ("ok", "not evaluated"):
                    refusals.append(str(c.get("reason") or c.get("status")))
                rows.append([name, str(c.get("status") or "n/a"), "", "", "", ""])
                continue
            h = c["held_out"]
            rows.append([name, _pm(h.get("mae")), "--" if m == "raw" else _pm(h.get("diff_vs_raw"), signed=True),
                         _n((h.get("tau") or {}).get("run"), 2), _n(h.get("coverage"), 2),
                         _n(h.get("mean_ci_width"), 2)])
        st = cal.get("settings") or {}
        level = 100 * float(st.get("level", 0.95))
        splits = sel.get("splits", st.get("splits"))
        fit, held = sel.get("fit_topics", st.get("fit_topics")), sel.get("held_out_topics", st.get("held_out_topics"))
        marks = "bold: shown point" + ("" if ib in (None, shown) else ", $^\\dagger$: interval method")
        cap = (f"Calibration, {self.cell_phrase(cell)}, {self.metric_tex}: held-out MAE $\\pm$ s.e. over "
               f"{splits} splits; {marks}.") if splits else \
            f"Calibration, {self.cell_phrase(cell)}, {self.metric_tex}: nothing evaluated; {marks}."
        why = " Refused: " + "; ".join(dict.fromkeys(refusals)) + "." if refusals else ""
        shown_plain = method_name(cal, shown or "")
        ib_plain = method_name(cal, ib or "")
        intervals = (f"the intervals are {ib_plain}'s for the human score (dagger), widened to contain each point"
                     if ib not in (None, shown) else f"points and intervals by {shown_plain}")
        decision = (f"Shown (bold): {shown_plain}, verdict '{sel.get('verdict')}': {sel.get('why')}; {intervals}. "
                    "Rule: composite (human labels where they exist, the raw judge elsewhere) replaces raw when its "
                    "error is lower and its tau is not below raw's by more than one standard error; a correction "
                    "replaces that only when it beats it by more than one corrected standard error, with a tau not "
                    "below raw's by more than one standard error.")
        if not splits:
            det = (f"Calibration candidates for {self.cell_plain(cell)} on {self.data_plain}, metric "
                   f"{self.metric_plain}: nothing evaluated (too few human-labelled topics or runs for a choice). "
                   + decision + why)
            return self._table(["method", "MAE", "vs raw", "$\\tau$", "cover", "width"], rows,
                               [False] + [True] * 5, cap, f"calibration_{cell}", det)
        nested = sel.get("nested_mae") or {}
        nd = sel.get("nested_diff_vs_raw") or {}
        nested_txt = (f" Nested: the same procedure re-run inside {sel['nested_splits']} splits' fit topics and "
                      f"scored on their held-out ones has MAE {_plain(nested.get('mean'))} +- {_plain(nested.get('se'))}"
                      f", {_plain(nd.get('mean'))} +- {_plain(nd.get('se'))} vs raw (chose "
                      + ", ".join(f"{k} {v}" for k, v in (sel.get("nested_choices") or {}).items()) + ")."
                      if sel.get("nested_splits") else "")
        det = (f"Calibration candidates for {self.cell_plain(cell)} on {self.data_plain}, metric {self.metric_plain}, "
               f"scored on {splits} random splits of the human-labelled topics into {fit} fit and {held} held-out "
               "topics (the sizes mimic human-labelled : judge-only); every figure is on the whole-track run score "
               "(human labels on the fit topics where the method uses them, its estimate on the held-out ones) "
               "against the human one. MAE = mean over "
               "splits of the mean absolute error over runs, +- its corrected resampled standard error (Nadeau and "
               "Bengio, 2003); vs raw = the paired difference to raw (negative = better), +- its corrected standard "
               "error; tau = mean held-out run-level Kendall tau-b with the human leaderboard; cover = the share of "
               f"the {level:g}% intervals shown with that point (PPI++'s, widened to contain it) that hold the human "
               "run score; width = their mean width. " + decision + nested_txt + why)
        return self._table(["method", "MAE", "vs raw", "$\\tau$", "cover", "width"], rows,
                           [False] + [True] * 5, cap, f"calibration_{cell}", det)

    def rank_sets(self) -> dict[str, str]:
        """Per cell with rank-sets: runs by estimate, the estimate with its group letters as superscripts (as papers
        mark indistinguishable runs), the rank-set and above / below."""
        out = {}
        for cell, cal in (self.d.get("calibration") or {}).items():
            rs = (cal or {}).get("rank_sets") or {}
            if rs.get("status") != "ok" or rs.get("metric", self.metric) != self.metric:
                continue
            s = rs["summary"]
            letters = s["groups"] <= LETTERS_MAX
            rows = [[latex_text(r["run_id"], breakable=True),
                     f"{r['estimate']:.3f}" + (f"$^{{\\mathrm{{{r['group']}}}}}$" if letters else ""),
                     str(r["rank_set"][0]) if r["rank_set"][0] == r["rank_set"][1] else
                     f"{r['rank_set'][0]}--{r['rank_set'][1]}", f"{r['beats']} / {r['beaten_by']}"] for r in rs["rows"]]
            mark = ("runs sharing a superscript letter cannot be told apart" if letters else
                    f"{s['groups']} groups of runs that cannot be told apart (too many for letters: calibration.json)")
            if rs["human_labelled_topics"] >= rs["topics"]:
                how = (f"every one of the {rs['topics']} topics is human-labelled, so this is the human leaderboard "
                       "itself: the rank-set is the observed rank, and only tied runs cannot be told apart.")
            else:
                how = (f"PPI++ estimate of the human score over all {rs['topics']} topics ({rs['human_labelled_topics']} "
                       f"human-labelled); {mark}; rank-set = the ranks a run can hold, all runs at once; above / below = "
                       f"runs it beats / that beat it. All at {rs['level'] * 100:.0f}\\% simultaneous confidence over the "
                       f"{s['pairs']} run pairs (max-$t$ bootstrap of the {rs['human_labelled_topics']} labelled topics, "
                       f"{rs['n_boot']} resamples); {s['decided_pairs']} pairs decided, mean rank-set size "
                       f"{s['mean_rank_set_size']:.1f} of {rs['runs']} runs.")
            cap = (f"Rank-sets, {self.cell_phrase(cell)}, {self.metric_tex}: runs told apart at "
                   f"{rs['level'] * 100:.0f}\\% simultaneous confidence.")
            det = (f"Rank-sets on {self.metric_plain}, {self.cell_plain(cell)}, on {self.data_plain}: "
                   + how.replace("\\%", "%").replace("$t$", "t"))
            out[f"ranksets_{cell}"] = self._board(cell, ["run", "estimate", "rank-set", "above / below"], rows, cap,
                                                  det, name=f"ranksets_{cell}")
        return out

    def bias(self) -> str | None:
        per = self.d.get("bias") or {}
        rows, n_runs = [], []
        for cell, b in per.items():
            m = b.get("mean") or {}
            runs = b.get("runs") or []
            low = sum(1 for r in runs if (r.get("ci") or [None, None])[1] is not None and r["ci"][1] < 0)
            high = sum(1 for r in runs if (r.get("ci") or [None, None])[0] is not None and r["ci"][0] > 0)
            rows.append(self.name_cols(cell) + [_est_ci(m.get("bias"), m.get("ci"), stacked=True, signed=True),
                                                str(low), str(high)])
            n_runs.append(f"{self.cell_plain(cell)}: {len(runs)}")
        cap = (f"Judge minus human {self.metric_tex} per run, {self.data_phrase}: mean (95\\% CI below), runs "
               "significantly lower or higher.")
        det = (f"Per-run bias of each judge, judge minus human run score on {self.metric_plain} on {self.data_plain}: "
               "the mean over runs with its 95% paired topic-bootstrap CI below it, and how many runs the judge scores "
               f"significantly lower or higher (their own CI excludes 0)" + (f"; runs per configuration: {'; '.join(n_runs)}." if rows else "."))
        return self._per_config(rows, ["bias", "lower", "higher"], cap, "bias", det)

    def strictness(self) -> str | None:
        rows, pairs = [], []
        for r in self.d.get("strictness") or []:
            pairs.append(f"{self.cell_plain(r['cell'])}: {r.get('n') or 0}")
            rows.append(self.name_cols(r["cell"]) + [_n(r.get("exact_agreement"), 2),
                                                     _n(r.get("cohen_kappa"), 2),
                                                     _est_ci(r.get("strictness_index"), r.get("strictness_ci"),
                                                             stacked=True, signed=True)])
        cap = (f"Judge vs.\\ human labels, {self.data_phrase}: agreement, Cohen's $\\kappa$, strictness ($>0$: "
               "stricter; 95\\% CI below).")
        det = ("Agreement of the judge's support labels with the human ones on the same (nugget, answer) pairs, "
               f"{self.data_plain}: exact agreement, Cohen's kappa and the net strictness index P(judge lower) - "
               "P(judge higher) on not support < partial support < support, with its 95% topic-bootstrap CI below "
               "it (positive = the judge is stricter than the assessors)"
               + (f"; (nugget, answer) pairs per configuration: {'; '.join(pairs)}." if rows else "."))
        return self._per_config(rows, ["agree", "$\\kappa$", "strict"], cap, "strictness", det)

    def descriptive(self) -> str | None:
        recs = self.d.get("descriptive") or []
        if not recs:
            return None
        rows = []
        for r in recs:
            name = r.get("name") or ""
            src = ["human (reference)"] + [""] * (len(self.name_head()) - 1) if r.get("role") == "reference" \
                else self.name_cols(name)
            rows.append(src + [str(r.get("topics", "")), _n(r.get("nuggets_per_topic"), 1),
                               _n(r.get("nugget_len_tokens"), 1), _n(r.get("pct_vital"), 1),
                               _n(r.get("pct_not_support"), 1), _n(r.get("pct_partial_support"), 1),
                               _n(r.get("pct_support"), 1)])
        cap = (f"Label sources on {self.data_phrase}, as in Table 4 of \\citet{{{CITE_NUGGETS}}}: nuggets per topic, "
               "nugget length, \\% vital, and \\% of nugget-answer pairs per support label.")
        det = (f"Label sources on {self.data_plain}, as in Pradeep et al. (2025), Table 4: nuggets per topic, mean "
               "nugget length in whitespace tokens, the share of vital nuggets, and the shares of nugget-answer pairs "
               "labelled not support, partial support and support (each judge on the topics it shares with the "
               "human labels).")
        return self._per_config(rows, ["topics", "nuggets", "length", "\\% vital", "\\% not", "\\% partial",
                                       "\\% support"], cap, "descriptive", det)

    def plan(self) -> str | None:
        """The assessor plan's precision table (``metaeval plan``'s ``plan.json`` in the results folder)."""
        plan = self.d.get("plan")
        try:
            c = plan["curves"][plan["metric"]]
            rows_in, pilot, level = c["rows"], plan["pilot"], float(plan["level"])
        except (KeyError, TypeError):
            return None
        rows = [[str(r["n"]), f"{r['hours']:.0f}", _n(r["analytic_half"]["median"]),
                 _n(r["empirical_half"]["median"]), _n(r["plugin_coverage"]["median"], 2)] for r in rows_in]
        known = find_measure(str(plan["metric"]))
        metric = known.latex if known is not None else latex_text(plan.get("metric_name") or plan["metric"])
        cap = (f"Human-labelled topics needed: {100 * level:g}\\% half-width of the PPI \\citep{{{CITE_PPI}}} {metric} "
               f"run mean over {pilot['total_topics']} topics.")
        det = (f"Assessor plan (metaeval plan): for each number of human-labelled topics, the assessor hours, the "
               f"{100 * level:g}% half-width of the PPI-calibrated run mean of {plan.get('metric_name') or plan['metric']} "
               f"over the track's {pilot['total_topics']} topics (median over runs) analytic and by topic resampling "
               f"({c.get('reps', '?')} worlds, seed {plan.get('seed')}), and the coverage of the plug-in interval. "
               f"Pilot: {pilot['topics']} topics labelled by {plan.get('reference')} and {plan.get('judge')}, "
               f"{pilot['runs']} runs. {plan.get('recommendation') or ''}")
        return self._table(["topics", "hours", "analytic", "resampled", "cover"], rows, [True] * 5, cap, "plan", det,
                           wide=False)

    def all(self) -> dict[str, str]:
        out: dict[str, str] = {}
        builders: list[Callable[[], Any]] = [self.tau, self.calibration, self.leaderboards, self.rank_sets,
                                             self.bias, self.strictness, self.descriptive, self.plan]
        names = ["tau", None, None, None, "bias", "strictness", "descriptive", "plan"]
        for name, build in zip(names, builders):
            got = build()
            if isinstance(got, dict):
                out.update(got)
            elif got:
                out[name] = got
        return out

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
            out += [f"- `{n}.tex` (label `tab:metaeval-{n}`): {self.details.get(n, '')}".rstrip(": "), ""]
        return "\n".join(out + self.verdict_lines()).rstrip() + "\n"


def paper_tables(data: Mapping[str, Any]) -> dict[str, str]:
    """``{file stem: LaTeX table}`` for a report's data (``Report.data`` or a ``report.json``), in paper order."""
    from metaeval.report.compare_section import compare_latex  # the paired comparisons between cells (issue 32)

    return {**_Paper(data).all(), **compare_latex(data)}


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
