"""``metaeval report``: the calibration report of a sweep's results folder, with a pass/fail verdict per cell.

Build the calibration report of a sweep's results folder (the one holding summary.json): a plain-language summary
with the verdict and its reasons, tau at three levels, per-topic forest plot, per-run bias, scatter plots, confusion
matrices, strictness (also by nugget importance), raw and calibrated leaderboards, descriptive statistics, held-out
calibration, the topics where judge and reference disagree most, and a verdict against thresholds.

Writes ``report.html`` (self-contained), ``report.md`` (+ ``report_files/``) and ``report.json`` into RESULTS_DIR;
``--latex`` also writes the main tables as LaTeX booktabs tables into ``RESULTS_DIR/report_latex/``.
The report renders what the sweep's study wrote (every resampled figure uses the sweep's ``analysis.bootstrap``
and ``analysis.seed``); it never reloads the dataset, fits or resamples.
Exit status: 0; with ``--strict`` 1 when any grid cell fails a verdict threshold.
"""

from __future__ import annotations

import argparse

from pathlib import Path

from metaeval.commands.helptext import command_parser

#: the installed example thresholds file (the built-in defaults and every optional check, commented)
THRESHOLDS_EXAMPLE = Path(__file__).resolve().parents[1] / "report" / "thresholds.yaml"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "report", __doc__,
                       help="write report.html/.md/.json for a sweep's results folder, with a pass/fail verdict per cell")
    p.add_argument("results_dir", metavar="RESULTS_DIR", help="a sweep's results folder (<results_dir>/<name>/)")
    p.add_argument("--thresholds", metavar="FILE",
                   help="verdict thresholds, YAML or JSON (default: lower CI of run-level tau on the study's primary "
                   "metric >= 0.8, "
                   f"failure rate <= 1%%; every check, to copy and edit: {THRESHOLDS_EXAMPLE})")
    p.add_argument("--strict", action="store_true", help="exit 1 when any cell fails a threshold (for CI pipelines)")
    p.add_argument("--print", dest="print_", action="store_true", help="print the verdict and main tables as plain text")
    p.add_argument("--latex", action="store_true",
                   help="also write the main tables as LaTeX (booktabs) files into RESULTS_DIR/report_latex/")
    p.add_argument("--metric", help="metric of the tables and plots, any case (default: the thresholds' metric, else "
                   "the study's primary metric: the first of analysis.metrics)")
    p.add_argument("--workers", default="auto", metavar="N",
                   help="processes that draw the figures (default auto: the available CPUs; 1: this process; the "
                   "figures are the same either way)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from metaeval.io.outputs import OutputError
    from metaeval.report.render_text import render_text
    from metaeval.workflow.report import built_report, closing_lines, folder_report

    try:
        rep, paths = folder_report(args.results_dir, thresholds=args.thresholds, metric=args.metric, latex=args.latex,
                                   workers=args.workers)
    except OutputError as exc:
        if not args.print_:
            raise
        # --print needs no file: print the report, then say (one line, exit 2) that nothing could be written
        print(render_text(built_report(args.results_dir, thresholds=args.thresholds, metric=args.metric,
                                       workers=args.workers)))
        raise OutputError(f"{exc}; printed only, no report file written") from None
    if args.print_:
        print(render_text(rep))
    v = rep.verdict
    print(f"wrote {paths['md']}, {paths['json']} ({len(rep.figures)} figures in {paths['files']})")
    if "latex" in paths:
        print(f"wrote LaTeX tables to {paths['latex']} (\\input{{tables.tex}}; preamble in {paths['latex']}/preamble.tex, "
              f"citations in metaeval.bib, each table's details and the verdict in README.md)")
    for line in closing_lines(rep.data, paths["html"]):
        print(line)
    if args.strict and not v["passed"]:
        return 1
    return 0
