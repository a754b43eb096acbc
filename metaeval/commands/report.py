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
from typing import TYPE_CHECKING

from metaeval.commands.helptext import command_parser

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.study.records import Summary

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
    from metaeval.errors import ConfigError

    metric = None
    if args.metric:
        from metaeval.measures import measure

        metric = measure(args.metric, "--metric").name  # unknown: one line naming the nearest measure
    from metaeval.forked import resolve_workers
    from metaeval.io.outputs import OutputError, check_output
    from metaeval.report.write import write_report

    try:
        resolve_workers(args.workers, 1)  # a bad --workers: one line now, before anything is read
    except ConfigError:
        raise ConfigError(f"--workers {args.workers}: expected auto or a whole number >= 1") from None

    try:
        check_output(args.results_dir, kind="dir", option="RESULTS_DIR")  # read-only, a file, too long: one line
    except OutputError as exc:
        if not args.print_:
            raise
        # --print needs no file: print the report, then say (one line, exit 2) that nothing could be written
        from metaeval.report.build import build_report
        from metaeval.report.render_text import render_text

        print(render_text(build_report(args.results_dir, thresholds=args.thresholds, metric=metric,
                                       workers=args.workers)))
        raise OutputError(f"{exc}; printed only, no report file written") from None
    rep, paths = write_report(args.results_dir, thresholds=args.thresholds, metric=metric, latex=args.latex,
                              workers=args.workers)
    if args.print_:
        from metaeval.report.render_text import render_text

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


def closing_lines(report_data: dict, html_path) -> list[str]:
    """The last lines of ``metaeval report`` and ``metaeval sweep``: a warning when the data are synthetic (the demo),
    the verdict with its reasons, and where ``report.html`` is (``report_data``: what ``report.json`` holds)."""
    lines = []
    if report_data.get("synthetic"):
        lines.append("note: synthetic data (not real assessments): these figures show the workflow only")
    verdict = (report_data.get("summary") or {}).get("verdict")
    if verdict:
        lines.append(verdict)
    lines.append(f"report: {html_path}")
    return lines


def report_after_study(layout, config: dict, summary: "Summary", workers: int | str = "auto",
                       problems: list[str] | None = None) -> list[str]:
    """The report at the end of ``metaeval sweep`` (unless ``report.enabled`` is false); skipped when the study was
    reused and a report exists.  ``workers``: processes that draw the figures (the sweep passes
    ``calibration.workers``, so ``calibration.workers=1`` forks nothing).  A failure is logged, not fatal: ``metaeval report DIR`` retries it.  Returns the
    sweep's closing lines (:func:`closing_lines`; from ``report.json`` when the report was reused), or [] without
    a report.  A failed report also adds one line to ``problems`` (the sweep then does not exit 0)."""
    import json
    import logging

    if not (config.get("report") or {}).get("enabled", True):
        return []
    if summary.evaluation_reused and layout.report_html.exists() and layout.report_json.exists():
        try:
            return closing_lines(json.loads(layout.report_json.read_text(encoding="utf-8")), layout.report_html)
        except (OSError, ValueError):
            pass  # unreadable: rebuild it below
    from metaeval.report.write import write_report

    try:
        rep, paths = write_report(layout.root, workers=workers)
    except Exception as exc:  # noqa: BLE001 - the sweep's results stand without the report
        logging.getLogger("metaeval.report").warning("report for %s failed (run `metaeval report %s` to retry): %s: %s",
                                                      layout.root, layout.root, type(exc).__name__, exc)
        if problems is not None:
            problems.append(f"the report of {layout.root} failed ({type(exc).__name__}: {exc}); the results are "
                            f"stored: `metaeval report {layout.root}` retries it")
        return []
    return closing_lines(rep.data, paths["html"])
