"""``metaeval bench [--reps N] [--quick] [--only NAMES] [--out FILE]``: the benchmark suite of a repository
checkout (``benchmarks/runner.py``), one table and a JSON file.  The benchmarks are not part of the installed
package; from an installed copy without the repository this says where to find them."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run every benchmark (scoring, analysis, calibration, judge client, sweep) and print one table",
        description="Run the repository's benchmarks/ suite: each benchmark in a subprocess, medians over --reps "
        "runs, peak memory per benchmark; prints one table and writes JSON (same as `python -m benchmarks`).",
    )
    p.add_argument("--reps", type=int, default=3, help="repetitions per benchmark; figures are medians (default 3)")
    p.add_argument("--quick", action="store_true", help="smoke mode: 1 repetition")
    p.add_argument("--only", default=None, help="comma-separated subset: scoring, analysis, calibration, client, sweep")
    p.add_argument("--out", default="results/bench.json", help="JSON output (default results/bench.json)")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per benchmark start (default 1800)")
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.list:  # vetted before any benchmark runs (a folder, /proc, read-only...: one line)
        from metaeval.io.outputs import check_output

        check_output(args.out, kind="file")
    argv = ["--reps", str(args.reps), "--out", args.out, "--timeout", str(args.timeout)]
    if args.quick:
        argv.append("--quick")
    if args.only:
        argv += ["--only", args.only]
    if args.list:
        argv.append("--list")
    from metaeval.workflow.bench import run_benchmarks

    return run_benchmarks(argv, prog="metaeval bench")
