"""``metaeval report RESULTS_DIR [--thresholds FILE] [--strict] [--print]``: the calibration report of a sweep.

Writes ``report.html`` (self-contained), ``report.md`` (+ ``report_files/``) and ``report.json`` into RESULTS_DIR.
Exit status: 0; with ``--strict`` 1 when any grid cell fails a verdict threshold.
"""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write report.html/.md/.json for a sweep's results folder, with a pass/fail verdict per cell",
        description="Build the calibration report of a sweep's results folder (the one holding summary.json): "
        "provenance, calls/cost, raw and calibrated leaderboards, tau at three levels, per-topic forest plot, "
        "scatter plots, confusion matrices and strictness, descriptive statistics, held-out calibration, the "
        "topics where judge and reference disagree most, and a verdict against thresholds.",
    )
    p.add_argument("results_dir", metavar="RESULTS_DIR", help="a sweep's results folder (<results_dir>/<name>/)")
    p.add_argument("--thresholds", metavar="FILE",
                   help="verdict thresholds, YAML or JSON (default: lower CI of run-level tau on v_strict >= 0.8, "
                   "failure rate <= 1%%; see conf/report/thresholds.yaml)")
    p.add_argument("--strict", action="store_true", help="exit 1 when any cell fails a threshold (for CI pipelines)")
    p.add_argument("--print", dest="print_", action="store_true", help="print the verdict and main tables as plain text")
    p.add_argument("--metric", help="metric of the tables and plots (default: the thresholds' metric, v_strict)")
    p.add_argument("--bootstrap", type=int, default=1000, help="topic-bootstrap resamples for raw leaderboard CIs (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the leaderboard bootstrap (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from metaeval.errors import ConfigError

    metric = None
    if args.metric:
        from metaeval.scoring import METRICS, normalize_metric

        metric = normalize_metric(args.metric)
        if metric not in METRICS:
            raise ConfigError(f"--metric {args.metric!r}: expected one of {', '.join(METRICS)}")
    if args.bootstrap < 1:
        raise ConfigError("--bootstrap must be at least 1")
    from metaeval.report.write import write_report

    rep, paths = write_report(args.results_dir, thresholds=args.thresholds, metric=metric, n_boot=args.bootstrap, seed=args.seed)
    if args.print_:
        from metaeval.report.render_text import render_text

        print(render_text(rep))
    v = rep.verdict
    print(f"verdict: {'PASS' if v['passed'] else 'FAIL'} ({v['n_passed']} cell(s) pass, {v['n_failed']} fail)")
    print(f"wrote {paths['html']}, {paths['md']}, {paths['json']} ({len(rep.figures)} figures in {paths['files']})")
    if args.strict and not v["passed"]:
        return 1
    return 0
