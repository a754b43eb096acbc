"""``metaeval report --latex``: the study's main tables as LaTeX to paste into a paper, in ``<results>/report_latex/``.

One ``.tex`` file per table, built from what the report holds (``report.json``'s data: the study's figures, nothing
recomputed) and written by :func:`metaeval.io.latex.latex_table` (pandas' ``Styler.to_latex``, booktabs, a
``tabularx`` at ``\\linewidth`` so nothing runs into the margin):

* ``verdict`` - pass/fail per cell with the checked values;
* ``tau`` - Kendall's tau at the run, per-topic (mean) and pooled levels, each over its 95% topic-bootstrap CI;
* ``leaderboard_<cell>`` - per run: the reference (human) score, the judge's raw score with its interval and, when
  some topics have no human labels, the calibrated estimate of the human score over every topic with its interval;
* ``calibration`` - per cell the method used, the verdict of the repeated cross-fitting, the held-out error of raw
  and of that method and the nested error of the whole selection; ``calibration_<cell>`` - every candidate method;
* ``bias``, ``strictness``, ``descriptive`` - per-run bias, label agreement and strictness, the paper's Table 4.

Cells are named by judge, prompt (when any judge has one) and where the nuggets come from, never by the internal
cell id.  Every caption says what is estimated, on which data and with which interval, so a table stands alone.
``tables.tex`` ``\\input``s them all, ``preamble.tex`` holds the packages (``booktabs``, ``tabularx``) and
``standalone.tex`` is a two-column article that compiles as it is (``pdflatex standalone.tex`` in that folder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from metaeval.io.latex import PREAMBLE, latex_table, latex_text, stack
from metaeval.measures import DEFAULT_PRIMARY, find_measure
from metaeval.report.model import Report

#: where a cell's nuggets come from (the judge assigns them to the answers in every judged strategy)
NUGGET_SOURCE = {"auto_auto": "judge's own", "human_auto": "human", "human_judge_importance": "human, judge importance",
                 "human_human": "human (reference)"}
#: short column heads of the verdict checks (the caption spells each out)
CHECK_HEADS = {"min_run_tau_low": "run $\\tau$ low", "min_run_tau": "run $\\tau$", "min_topic_tau_low": "topic $\\tau$ low",
               "min_pooled_tau_low": "pooled $\\tau$ low", "max_failure_rate": "FAILED", "min_cohen_kappa": "$\\kappa$",
               "max_abs_strictness": "$|$strictness$|$", "max_cost_usd": "cost (USD)"}
#: above this many runs a leaderboard puts each interval beside its estimate (one line a run, both columns)
STACK_MAX_ROWS = 24
LEVEL_NAMES = {"run": "run", "topic_avg": "per topic", "pooled": "pooled"}


def method_name(cal: Mapping[str, Any], method: str) -> str:
    """A calibration method as tables print it (``PPI++``): the display name the calibration recorded from the method
    registry (``method_names``), else the name itself."""
    return str((cal.get("method_names") or {}).get(method, method))


def _n(x: Any, digits: int = 3, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "n/a"
    return format(float(x), f"{'+' if signed else ''}.{digits}f").replace("-", "$-$")


def _ci(ci: Any, digits: int = 2) -> str:
    if not ci or len(ci) != 2 or ci[0] is None or ci[1] is None:
        return ""
    return f"[{_n(ci[0], digits)}, {_n(ci[1], digits)}]"


def _est_ci(est: Any, ci: Any, *, stacked: bool, digits: int = 3, signed: bool = False) -> str:
    e, c = _n(est, digits, signed), _ci(ci)
    if e == "n/a" or not c:
        return e
    return stack(e, c) if stacked else f"{e} {c}"


def _pm(d: Mapping[str, Any] | None, *, stacked: bool = True, signed: bool = False) -> str:
    if not d or d.get("mean") is None:
        return "n/a"
    e = _n(d["mean"], 3, signed)
    if d.get("se") is None:
        return e
    return stack(e, f"$\\pm$ {_n(d['se'])}") if stacked else f"{e} $\\pm$ {_n(d['se'])}"


class _Paper:
    """The tables of one report, as ``{file stem: LaTeX}``."""

    def __init__(self, data: Mapping[str, Any]):
        self.d = data
        self.metric = str(data.get("metric") or DEFAULT_PRIMARY)  # report.json records the metric it rendered
        known = find_measure(self.metric)  # as typeset in the paper (metaeval.measures: V with subscript strict)
        self.metric_tex = known.latex if known is not None else latex_text(self.metric)
        self.cells = {r["cell"]: r for r in data.get("usage") or []}
        self.prompts = any((r.get("prompt") or "none") != "none" for r in self.cells.values())
        prov = data.get("provenance") or {}
        ds = prov.get("dataset") or {}
        name = ((prov.get("config") or {}).get("dataset") or {}).get("name") or ds.get("name") or "the dataset"
        self.data_phrase = latex_text(f"{name} ({ds.get('topics', '?')} topics, "
                                      f"{ds.get('runs', '?')} runs)")
        if data.get("synthetic"):
            self.data_phrase += " (synthetic data, not real assessments)"

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

    def cell_phrase(self, cell: str) -> str:
        r = self.cells.get(cell) or {}
        s = NUGGET_SOURCE.get(r.get("strategy") or "", r.get("strategy") or "")
        p = r.get("prompt") or "none"
        return latex_text(f"judge {r.get('judge') or cell}" + ("" if p == "none" else f" (prompt {p})")
                          + f" assigning the {s} nuggets")

    def _frame(self, head: list[str], rows: list[list[str]]):
        import pandas as pd

        return pd.DataFrame(rows, columns=head)

    def _table(self, head: list[str], rows: list[list[str]], numeric: list[bool], caption: str, name: str) -> str:
        return latex_table(self._frame(head, rows), numeric=numeric, caption=caption, label=f"tab:metaeval-{name}")

    def _per_config(self, rows: list[list[str]], columns: list[str], caption: str, name: str) -> str | None:
        """A table with one row per judge configuration: its name columns, then the numeric ``columns``; None
        without rows."""
        if not rows:
            return None
        return self._table(self.name_head() + columns, rows, [False] * len(self.name_head()) + [True] * len(columns),
                           caption, name)

    # ---------------------------------------------------------------- tables
    def verdict(self) -> str | None:
        from metaeval.report.verdict import CHECKS

        v = self.d.get("verdict") or {}
        th = {k: x for k, x in (v.get("thresholds") or {}).items() if k != "metric" and x is not None}
        if not v.get("cells"):
            return None
        keys = list(th)
        rows = []
        for c in v["cells"]:
            if c["status"] in ("skipped", "withheld"):
                continue
            by = {x["check"]: x for x in c["checks"]}
            rows.append(self.name_cols(c["cell"]) + [c["status"].upper()] +
                        [("undefined" if by[k]["value"] is None else _n(by[k]["value"])) for k in keys])
        if not rows:
            return None
        rules = "; ".join(latex_text(f"{CHECKS[k][0]} {CHECKS[k][3]} {th[k]:g}").replace("tau", "$\\tau$") for k in keys)
        head = self.name_head() + ["verdict"] + [CHECK_HEADS.get(k) or latex_text(CHECKS[k][0]) for k in keys]
        cap = (f"Pass/fail verdict per judge configuration on {self.data_phrase}, metric {self.metric_tex}. A "
               f"configuration passes when every check holds: {rules} (the run-level interval is the 95\\% topic-"
               "bootstrap CI of Kendall's $\\tau$ between the judge's and the human run ranking).")
        return self._table(head, rows, [False] * (len(head) - len(keys)) + [True] * len(keys), cap, "verdict")

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
        cap = (f"Kendall's $\\tau$ between the judge's and the human labels' {self.metric_tex} on {self.data_phrase}: "
               "at the run level (runs ranked by mean score over topics), per topic (runs ranked within each topic, "
               "averaged over the topics where $\\tau$ is defined) and pooled (all topic-run pairs). Below each "
               "estimate its 95\\% topic-bootstrap confidence interval.")
        return self._per_config(rows, [LEVEL_NAMES[lv] for lv in LEVEL_NAMES], cap, "tau")

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

    def _calibrated_leaderboard(self, cell: str, cal: Mapping[str, Any], clb: Mapping[str, Any]) -> str:
        """Per run: the human score on the human-labelled topics, the judge's raw score, and - when some topics have
        no human labels - the calibrated estimate of the human score over every topic, each with its interval."""
        rows_in = sorted(clb["rows"], key=lambda r: (r.get("human_labelled") is None, -(r.get("human_labelled") or 0)))
        n_lab, n_only = clb.get("human_labelled_topics"), clb.get("judge_only_topics") or 0
        estimate = n_only > 0  # with every topic labelled the estimate is the human score itself
        stacked = len(rows_in) <= STACK_MAX_ROWS
        head = ["run", "reference", "judge raw"] + (["calibrated"] if estimate else [])
        rows = [[latex_text(r["run_id"], breakable=True), _n(r.get("human_labelled")),
                 _est_ci(r.get("judge_score"), r.get("judge_score_ci"), stacked=stacked)]
                + ([_est_ci(r.get("human_estimate"), r.get("human_estimate_ci"), stacked=stacked)] if estimate else [])
                for r in rows_in]
        by = latex_text(method_name(cal, clb.get("estimated_by") or "?"))
        what = (f"calibrated = the estimated human score over all {n_lab + n_only} topics: human labels on the {n_lab} "
                f"labelled ones, {by} on the {n_only} judge-only ones, with {by}'s 95\\% interval "
                f"({latex_text(clb.get('intervals_why') or '')})." if estimate else
                "every topic is human-labelled, so the calibrated estimate of the human leaderboard is the reference "
                "itself (no calibrated column); the calibration table gives each method's error on held-out topics.")
        where = "below" if stacked else "beside"
        cap = (f"Run leaderboard on {self.metric_tex}, {self.cell_phrase(cell)}, on {self.data_phrase}, runs ordered "
               f"by the reference: reference = mean human score over the {n_lab} human-labelled topics; judge raw = the "
               f"judge's mean score with its 95\\% topic-bootstrap interval {where} it (an interval for the judge's "
               f"score, not the human one); {what}")
        return self._table(head, rows, [False, True, True] + ([True] if estimate else []), cap, f"leaderboard_{cell}")

    def _raw_leaderboard(self, cell: str, lb: Mapping[str, Any]) -> str:
        rows_in = sorted(lb["rows"], key=lambda r: (r.get("reference") is None, -(r.get("reference") or 0)))
        stacked = len(rows_in) <= STACK_MAX_ROWS
        rows = [[latex_text(r["run_id"], breakable=True), _n(r.get("reference")),
                 _est_ci(r.get("raw"), r.get("raw_ci"), stacked=stacked)] for r in rows_in]
        cap = (f"Run leaderboard on {self.metric_tex}, {self.cell_phrase(cell)}, on {self.data_phrase}, runs ordered "
               "by the reference: reference = mean human score over topics; judge raw = the judge's mean score with its "
               f"95\\% topic-bootstrap interval {'below' if stacked else 'beside'} it. Not calibrated: calibration "
               "needs the judge to label the human nuggets.")
        return self._table(["run", "reference", "judge raw"], rows, [False, True, True], cap,
                           f"leaderboard_{cell}")

    def calibration(self) -> dict[str, str]:
        cals = {c: x for c, x in (self.d.get("calibration") or {}).items() if x and x.get("selection")}
        if not cals:
            return {}
        out: dict[str, str] = {}
        rows = []
        for cell, cal in cals.items():
            sel = cal["selection"]
            m = sel["method"]
            verdict = "stable" if sel.get("verdict") == "stable" else "within noise"
            rows.append(self.name_cols(cell) + [f"{latex_text(method_name(cal, m))} ({verdict})",
                                                _pm(sel.get("raw_mae")), _pm(sel.get("held_out_mae")),
                                                _pm(sel.get("nested_mae"))])
            out[f"calibration_{cell}"] = self._candidates(cell, cal)
        st = next(iter(cals.values())).get("settings") or {}
        reps, folds = st.get("repeats", 1), st.get("folds_used", st.get("folds", "?"))
        head = self.name_head() + ["method (verdict)", "raw", "method", "nested"]
        cap = (f"Calibrating each judge against human labels on {self.data_phrase}, metric {self.metric_tex}, "
               f"scored on topics held out of the fit ({reps} repeats of {folds}-fold leave-topics-out cross-fitting): "
               f"the method used and the verdict (stable = it won at least {100 * float(st.get('win_share', 0.8)):g}\\% "
               "of the repeats and beats raw by more than one standard error with a lower nested error; within noise = "
               "no method does, PPI++ is used), then the mean absolute error (MAE) of run scores, $\\pm$ its standard "
               "error, of raw, of that method, and the nested MAE of the whole selection procedure (selection repeated "
               f"inside each training set over {st.get('inner_folds', '?')} inner folds).")
        out["calibration"] = self._table(head, rows, [False] * (len(head) - 3) + [True] * 3, cap, "calibration")
        return out

    def _candidates(self, cell: str, cal: Mapping[str, Any]) -> str:
        cands = cal.get("candidates") or {}
        sel = cal.get("selection") or {}
        wins = sel.get("wins") or {}
        order = ["none"] + [k for k in cands if k != "none"]
        rows, refusals = [], []
        for m in order:
            c = cands.get(m)
            if c is None:
                continue
            name = latex_text(method_name(cal, m))
            if sel.get("method") == m:
                name = f"\\textbf{{{name}}}"
            if c.get("status") != "ok":
                refusals.append(str(c.get("reason") or c.get("status")))
                rows.append([name, "refused", "", "", "", ""])
                continue
            h = c.get("held_out") or {}
            rows.append([name, str(wins.get(m, 0)), _pm(h.get("mae")), _pm(h.get("diff_vs_raw"), signed=True),
                         _n(h.get("coverage"), 2), _n(h.get("mean_ci_width"), 2)])
        why = ""
        if refusals:
            why = " Refused: " + "; ".join(latex_text(r) for r in dict.fromkeys(refusals)) + "."
        st = cal.get("settings") or {}
        level = st.get("level", 0.95)
        cap = (f"Calibration methods for {self.cell_phrase(cell)} on {self.data_phrase}, metric {self.metric_tex}, "
               f"scored on topics held out of their fit: how many of the {st.get('repeats', 1)} repeats of the "
               "cross-fitting each method won (wins), the mean absolute error of the run scores against the human ones "
               "(MAE, $\\pm$ standard error over folds), the paired difference to raw (negative = better), the share "
               f"of {100 * float(level):g}\\% intervals that hold the human run score (cover) and the mean interval "
               "width (n/a: point estimates only). In bold: the method used." + why)
        return self._table(["method", "wins", "MAE", "vs raw", "cover", "width"], rows,
                           [False, True, True, True, True, True], cap, f"calibration_{cell}")

    def bias(self) -> str | None:
        per = self.d.get("bias") or {}
        rows = []
        for cell, b in per.items():
            m = b.get("mean") or {}
            runs = b.get("runs") or []
            low = sum(1 for r in runs if (r.get("ci") or [None, None])[1] is not None and r["ci"][1] < 0)
            high = sum(1 for r in runs if (r.get("ci") or [None, None])[0] is not None and r["ci"][0] > 0)
            rows.append(self.name_cols(cell) + [_est_ci(m.get("bias"), m.get("ci"), stacked=True, signed=True),
                                                str(len(runs)), str(low), str(high)])
        cap = (f"Per-run bias of each judge, judge minus human run score on {self.metric_tex} on {self.data_phrase}: "
               "the mean over runs with its 95\\% paired topic-bootstrap CI below it, and how many runs the judge "
               "scores significantly lower or higher (their own CI excludes 0).")
        return self._per_config(rows, ["mean bias", "runs", "lower", "higher"], cap, "bias")

    def strictness(self) -> str | None:
        rows = []
        for r in self.d.get("strictness") or []:
            rows.append(self.name_cols(r["cell"]) + [str(r.get("n") or 0), _n(r.get("exact_agreement"), 2),
                                                     _n(r.get("cohen_kappa"), 2),
                                                     _est_ci(r.get("strictness_index"), r.get("strictness_ci"),
                                                             stacked=True, signed=True)])
        cap = ("Agreement of the judge's support labels with the human ones on the same (nugget, answer) pairs, "
               f"{self.data_phrase}: exact agreement, Cohen's $\\kappa$ and the net strictness index P(judge lower) "
               "$-$ P(judge higher) on not support $<$ partial support $<$ support, with its 95\\% topic-bootstrap "
               "CI below it (positive = the judge is stricter than the assessors).")
        return self._per_config(rows, ["pairs", "agree", "$\\kappa$", "net strictness"], cap, "strictness")

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
        cap = (f"Label sources on {self.data_phrase}, as in Pradeep et al.\\ (2025), Table 4: nuggets per topic, mean "
               "nugget length in whitespace tokens, the share of vital nuggets, and the shares of nugget-answer pairs "
               "labelled not support, partial support and support (each judge on the topics it shares with the "
               "human labels).")
        return self._per_config(rows, ["topics", "nuggets per topic", "nugget length", "\\% vital", "\\% not",
                                       "\\% partial", "\\% support"], cap, "descriptive")

    def all(self) -> dict[str, str]:
        out: dict[str, str] = {}
        builders: list[Callable[[], Any]] = [self.verdict, self.tau, self.calibration, self.leaderboards, self.bias,
                                             self.strictness, self.descriptive]
        names = ["verdict", "tau", None, None, "bias", "strictness", "descriptive"]
        for name, build in zip(names, builders):
            got = build()
            if isinstance(got, dict):
                out.update(got)
            elif got:
                out[name] = got
        return out


def paper_tables(data: Mapping[str, Any]) -> dict[str, str]:
    """``{file stem: LaTeX table}`` for a report's data (``Report.data`` or a ``report.json``), in paper order."""
    return _Paper(data).all()


def standalone(names: list[str]) -> str:
    """A two-column article that ``\\input``s the tables (compiles as it is; copy the preamble into your paper)."""
    return ("\\documentclass[twocolumn]{article}\n\\input{preamble}\n\\begin{document}\n"
            "% metaeval report --latex: every table of this folder, as it prints in a two-column paper\n"
            + "".join(f"\\input{{{n}}}\n" for n in names) + "\\end{document}\n")


def write_latex(rep: Report, layout) -> Path:
    """Write the paper tables of ``rep`` to ``layout.root / "report_latex"`` (one ``.tex`` each, ``tables.tex``,
    ``preamble.tex``, ``standalone.tex``); tables of an earlier export that this report lacks are removed."""
    folder = layout.root / "report_latex"
    folder.mkdir(parents=True, exist_ok=True)
    tables = paper_tables(rep.data)
    keep = set(tables) | {"tables", "preamble", "standalone"}
    for old in folder.glob("*.tex"):
        if old.stem not in keep:
            old.unlink()
    for name, tex in tables.items():
        layout.write_text(folder / f"{name}.tex", tex)
    layout.write_text(folder / "preamble.tex", "% packages the metaeval tables need\n" + PREAMBLE)
    layout.write_text(folder / "tables.tex", "% \\input this file (preamble: preamble.tex)\n"
                      + "".join(f"\\input{{{n}}}\n" for n in tables))
    layout.write_text(folder / "standalone.tex", standalone(list(tables)))
    return folder
