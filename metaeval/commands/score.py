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
    import pandas as pd

    from metaeval.errors import ConfigError, FormatError
    from metaeval.io import detect_format, load_labels
    from metaeval.io.scores import write_table
    from metaeval.scoring import ScoringPolicy, run_scores, score_answers

    from metaeval.io.outputs import check_output

    policy = ScoringPolicy(no_vital=args.no_vital, failed_support=args.failed_support, failed_importance=args.failed_importance)
    if args.format == "nuggetizer" and not args.out:
        raise ConfigError("--format nuggetizer needs --out (the metrics file, or a folder for several runs)")
    if args.out is not None and args.format == "table":  # every output path vetted before any work
        check_output(args.out, kind="file")
    if args.runs_out is not None:
        check_output(args.runs_out, kind="file", option="--runs-out")
    from metaeval.io.outputs import check_not_input

    check_not_input(args.out, args.inputs, option="--out", input_option="an input")  # never replace what is read
    check_not_input(args.runs_out, [*args.inputs, args.out], option="--runs-out", input_option="an input or --out")
    frames, n_problems, n_labels = [], 0, 0
    for path in args.inputs:
        fmt = args.input_format or detect_format(path)
        if fmt == "metrics":
            from metaeval.io.metrics import read_metrics

            frames.append(read_metrics(path).assign(n_failed=0))
            continue
        labels = load_labels(path, format=fmt)
        frames.append(score_answers(labels, policy))
        n_problems += len(labels.problems)
        n_labels += len(labels.labels)
    per_answer = pd.concat(frames, ignore_index=True)
    dup = per_answer.duplicated(["run_id", "qid"])
    if dup.any():
        r = per_answer[dup].iloc[0]
        raise FormatError(", ".join(args.inputs), 0, "qid/run_id", f"({r.qid}, {r.run_id}) appears in more than one input file")
    if args.out and args.format == "nuggetizer":
        _write_nuggetizer(per_answer, args.out)  # names checked before the first file
    elif args.out:
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


#: suffixes that say "a file": a multi-run nuggetizer --out with one of them is refused, never made a folder
FILE_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".txt", ".gz", ".parquet")


def nuggetizer_paths(run_ids, out: str) -> dict[str, str]:
    """run_id -> the metrics file it is written to, every name checked before anything is written.

    One run: ``out`` is the metrics file (or a folder holding ``<run_id>.jsonl``).  Several runs: ``out`` is a
    folder with one ``<run_id>.jsonl`` per run; a name that looks like a file (``metrics.jsonl``) is refused rather
    than silently made a folder.  A run id is used as a file name as it is (TREC ids such as
    ``cohere+post_processing`` hold '+'), unless it cannot be one (``/``, NUL, ``.``/``..``, a leading ``-`` or
    ``.``, over 200 bytes): then ``ConfigError`` naming it, before any file is written."""
    import os

    from metaeval.errors import ConfigError
    from metaeval.io.outputs import check_output

    runs = list(dict.fromkeys(run_ids))
    if len(runs) == 1 and not os.path.isdir(out):
        check_output(out, kind="file")
        return {runs[0]: out}
    if not os.path.isdir(out) and out.lower().endswith(FILE_SUFFIXES):
        raise ConfigError(f"--out {out}: {len(runs)} runs are written one <run_id>.jsonl per run into a folder, but "
                          f"{out!r} names a file; give a folder (e.g. --out {out.rsplit('.', 1)[0]}/) or score one run")
    check_output(out, kind="dir")
    paths: dict[str, str] = {}
    for run_id in runs:
        name = str(run_id)
        if (not name or "/" in name or "\x00" in name or name in (".", "..") or name[0] in "-."
                or len(os.fsencode(name)) > 200):
            raise ConfigError(f"run_id {name[:80]!r} cannot be a file name in {out} (a '/', NUL, leading '.' or "
                              "'-', or over 200 bytes); nothing was written")
        paths[run_id] = os.path.join(out, f"{name}.jsonl")
    return paths


def _write_nuggetizer(per_answer, out: str) -> None:
    """One run: ``out`` is the metrics file.  Several runs: ``out`` is a folder with ``<run_id>.jsonl`` per run
    (every name checked by ``nuggetizer_paths`` before the first file is written)."""
    from metaeval.io.metrics import write_metrics

    paths = nuggetizer_paths(per_answer["run_id"], out)
    if len(paths) == 1 and next(iter(paths.values())) == out:
        write_metrics(per_answer, out)
        return
    for run_id, path in paths.items():
        write_metrics(per_answer[per_answer["run_id"] == run_id], path)


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
