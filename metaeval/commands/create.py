"""``metaeval create``: create and label nuggets for topics with one judge, in castorini/nuggetizer's formats.

    metaeval create --pool pool.jsonl --judge lexical --out nuggets.jsonl

Input: a candidate pool in nuggetizer's request format (``{query: {qid, text}, candidates: [{docid, doc:
{segment}, judgment?}]}``; candidates judged 0 are left out, as nuggetizer does).  Per topic: nugget creation over
windows of 10 documents (at most 30 nuggets), importance in batches of 10, vital first, the first 20 kept (the
paper's method, as in a sweep).  Output: nuggetizer's nugget file ``{query, qid, nuggets: [{text, importance}]}``
and a transcript of every judge unit.
"""

from __future__ import annotations

import argparse

from metaeval.commands.helptext import command_parser


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "create", __doc__, help="create nuggets with importance for topics with one judge (nuggetizer JSONL)")
    p.add_argument("--pool", required=True, metavar="FILE", help="candidate pool JSONL (nuggetizer/Ragnarok request format)")
    p.add_argument("--window", type=int, default=10, help="documents per creation call (default 10)")
    p.add_argument("--max-nuggets", type=int, default=30, help="nuggets kept while creating (default 30)")
    p.add_argument("--keep-top", type=int, default=20, help="nuggets kept after importance, vital first (default 20)")
    from metaeval.commands.assign import add_common

    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from metaeval.commands.assign import check_outputs, failed_stage, judge_options
    from metaeval.errors import ConfigError

    if min(args.window, args.max_nuggets, args.keep_top) < 1:
        raise ConfigError("--window, --max-nuggets and --keep-top must be >= 1")
    if args.window > 10:
        raise ConfigError("--window: at most 10 documents per call (the judges' batch limit)")
    check_outputs(args)
    from metaeval.workflow.nuggetize import create_files

    done = create_files(args.pool, args.judge, out=args.out, transcripts=args.transcripts, window=args.window,
                        max_nuggets=args.max_nuggets, keep_top=args.keep_top, concurrency=args.concurrency,
                        **judge_options(args))
    records = done.records
    n = sum(len(r["nuggets"]) for r in records)
    vital = sum(1 for r in records for x in r["nuggets"] if x["importance"] == "vital")
    empty = [r["qid"] for r in records if not r["nuggets"]]
    print(f"{len(records)} topics, {n} nuggets ({vital} vital, {100 * vital / n if n else 0:.0f}%) by judge {done.judge}; "
          f"{len(done.transcripts)} judge units, {done.calls} model calls")
    if empty:
        print(f"{len(empty)} topics got no nugget: {', '.join(empty[:5])}")
    print(f"wrote {args.out} and {done.transcripts_path}")
    return failed_stage("create", done.problem)
