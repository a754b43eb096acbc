"""``metaeval score``: per-answer nugget scores and a run leaderboard."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score answers from nugget-assignment files (per-answer table + run leaderboard)",
        description="Compute A, A_strict, V, V_strict, W, W_strict per answer from NIST / nuggetizer assignment files "
        "and print runs ranked by mean V_strict over topics.",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="assignment JSONL file(s) (NIST or nuggetizer format)")
    p.add_argument("--out", help="per-answer scores; .csv, .tsv, .parquet or .jsonl by extension")
    p.add_argument("--runs-out", help="run leaderboard table (.csv/.parquet/.jsonl)")
    p.add_argument("--format", default=None, help="input format (default: auto-detect); only 'assignments' carries labels")
    p.add_argument("--no-vital", choices=["zero", "exclude"], default="zero", help="answers with no vital nugget score 0 (default, as nuggetizer) or are excluded")
    p.add_argument("--failed-support", choices=["not_support", "exclude", "support"], default="not_support", help="how FAILED assignment labels count (default not_support, as nuggetizer)")
    p.add_argument("--failed-importance", choices=["nuggetizer", "exclude", "as_okay", "as_vital"], default="nuggetizer", help="how FAILED importance labels count (default as nuggetizer: in A, not in V, weight 0 in W)")
    p.add_argument("--common-topics", action="store_true", help="restrict every run to the topics all runs answered")
    p.add_argument("--top", type=int, default=0, help="print only the top N runs (default: all)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from metaeval.errors import FormatError
    from metaeval.io import load_labels
    from metaeval.io.scores import write_table
    from metaeval.scoring import ScoringPolicy, run_scores, score_answers

    policy = ScoringPolicy(no_vital=args.no_vital, failed_support=args.failed_support, failed_importance=args.failed_importance)
    frames, n_problems, n_labels = [], 0, 0
    for path in args.inputs:
        labels = load_labels(path, format=args.format)
        frames.append(score_answers(labels, policy))
        n_problems += len(labels.problems)
        n_labels += len(labels.labels)
    per_answer = pd.concat(frames, ignore_index=True)
    dup = per_answer.duplicated(["run_id", "qid"])
    if dup.any():
        r = per_answer[dup].iloc[0]
        raise FormatError(", ".join(args.inputs), 0, "qid/run_id", f"({r.qid}, {r.run_id}) appears in more than one input file")
    if args.out:
        write_table(per_answer, args.out)
    runs = run_scores(per_answer, common_topics=args.common_topics)
    if args.runs_out:
        write_table(runs, args.runs_out)
    print(format_leaderboard(runs, top=args.top))
    failed = int(per_answer["n_failed"].sum())
    print(
        f"\n{len(per_answer)} answers, {per_answer['run_id'].nunique()} runs, {per_answer['qid'].nunique()} topics, "
        f"{n_labels} labels ({failed} FAILED assignment labels; {n_problems} unknown label values)"
        + (f"; wrote {args.out}" if args.out else "")
    )
    return 0


def format_leaderboard(runs, top: int = 0) -> str:
    """Plain-text leaderboard (rank, run, topics, V_strict, A_strict, V, A, W_strict, W)."""
    cols = [("v_strict", "V_strict"), ("a_strict", "A_strict"), ("v", "V"), ("a", "A"), ("w_strict", "W_strict"), ("w", "W")]
    shown = runs.head(top) if top else runs
    width = max([len("run_id")] + [len(str(r)) for r in shown["run_id"]])
    head = f"{'#':>3}  {'run_id':<{width}}  {'topics':>6}  " + "  ".join(f"{name:>8}" for _, name in cols)
    lines = [head, "-" * len(head)]
    for i, r in enumerate(shown.itertuples(index=False), start=1):
        vals = "  ".join(f"{getattr(r, c):8.4f}" for c, _ in cols)
        lines.append(f"{i:>3}  {r.run_id:<{width}}  {r.n_topics:>6}  {vals}")
    return "\n".join(lines)
