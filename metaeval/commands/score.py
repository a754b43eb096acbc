"""``metaeval score``: per-answer nugget scores and a run leaderboard.

Compute A, A_strict, V, V_strict, W, W_strict per answer from NIST / nuggetizer assignment files and print runs
ranked by mean V_strict over topics.  --format nuggetizer writes castorini/nuggetizer's metrics file
(strict_vital_score, vital_score, ... per topic, then qid "all").  nuggetizer metrics files are accepted as inputs
too (their scores are taken as they are).
"""

from __future__ import annotations

import argparse

from metaeval.commands.helptext import command_parser


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "score", __doc__,
                       help="score answers from nugget-assignment files (per-answer table + run leaderboard)")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="assignment JSONL file(s) (NIST or nuggetizer format) or nuggetizer metrics files")
    p.add_argument("--out", help="per-answer scores; .csv, .tsv, .parquet or .jsonl by extension (--format table); the "
                   "metrics file, or a folder of one <run_id>.jsonl per run when there are several runs (--format nuggetizer)")
    p.add_argument("--runs-out", help="run leaderboard table (.csv/.parquet/.jsonl)")
    p.add_argument("--format", default="table", choices=["table", "nuggetizer"],
                   help="what --out holds: table (default: metaeval's per-answer table) or nuggetizer (its metrics JSONL)")
    p.add_argument("--input-format", default=None, choices=["assignments", "metrics"],
                   help="input format (default: auto-detect)")
    p.add_argument("--no-vital", choices=["zero", "exclude"], default="zero", help="answers with no vital nugget score 0 (default, as nuggetizer) or are excluded")
    p.add_argument("--failed-support", choices=["not_support", "exclude", "support"], default="not_support", help="how FAILED assignment labels count (default not_support, as nuggetizer)")
    p.add_argument("--failed-importance", choices=["nuggetizer", "exclude", "as_okay", "as_vital"], default="nuggetizer", help="how FAILED importance labels count (default as nuggetizer: in A, not in V, weight 0 in W)")
    p.add_argument("--common-topics", action="store_true", help="restrict every run to the topics all runs answered")
    p.add_argument("--top", type=int, default=0, help="print only the top N runs (default: all)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from metaeval.errors import ConfigError
    from metaeval.io.outputs import check_output

    if args.format == "nuggetizer" and not args.out:
        raise ConfigError("--format nuggetizer needs --out (the metrics file, or a folder for several runs)")
    if args.out is not None and args.format == "table":  # every output path vetted before any work
        check_output(args.out, kind="file")
    if args.runs_out is not None:
        check_output(args.runs_out, kind="file", option="--runs-out")
    from metaeval.io.outputs import check_not_input

    check_not_input(args.out, args.inputs, option="--out", input_option="an input")  # never replace what is read
    check_not_input(args.runs_out, [*args.inputs, args.out], option="--runs-out", input_option="an input or --out")
    from metaeval.workflow.score import score_and_write

    done = score_and_write(args.inputs, input_format=args.input_format, out=args.out, out_format=args.format,
                           runs_out=args.runs_out, common_topics=args.common_topics, no_vital=args.no_vital,
                           failed_support=args.failed_support, failed_importance=args.failed_importance)
    per_answer = done.scored.per_answer
    print(format_leaderboard(done.runs, top=args.top))
    failed = int(per_answer["n_failed"].sum())
    print(
        f"\n{len(per_answer)} answers, {per_answer['run_id'].nunique()} runs, {per_answer['qid'].nunique()} topics, "
        f"{done.scored.n_labels} labels ({failed} FAILED assignment labels; {done.scored.n_problems} unknown label values)"
        + (f"; wrote {args.out}" if args.out else "")
    )
    return 0


def format_leaderboard(runs, top: int = 0) -> str:
    """Plain-text leaderboard (rank, run, topics, then every measure of ``metaeval.measures`` the table holds:
    V_strict, A_strict, V, A, W_strict, W)."""
    from metaeval.measures import REGISTRY

    cols = [(m.name, m.display) for m in REGISTRY if m.name in runs.columns]
    shown = runs.head(top) if top else runs
    width = max([len("run_id")] + [len(str(r)) for r in shown["run_id"]])
    head = f"{'#':>3}  {'run_id':<{width}}  {'topics':>6}  " + "  ".join(f"{name:>8}" for _, name in cols)
    lines = [head, "-" * len(head)]
    for i, r in enumerate(shown.itertuples(index=False), start=1):
        vals = "  ".join(f"{getattr(r, c):8.4f}" for c, _ in cols)
        lines.append(f"{i:>3}  {r.run_id:<{width}}  {r.n_topics:>6}  {vals}")
    return "\n".join(lines)
