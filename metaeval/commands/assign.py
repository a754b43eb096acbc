"""``metaeval assign``: assign nuggets to answers with one judge, in castorini/nuggetizer's file formats.

    metaeval assign --nuggets nuggets.jsonl --answers runs/ --judge lexical --out assignments.jsonl

Input: a nuggetizer nugget file (``{qid, query, nuggets: [{text, importance}]}``) and TREC RAG answer runs (files
or a folder of ``*.jsonl``, read as published).  Output: nuggetizer's assignment JSONL (also NIST's schema), one
line per answer whose topic has nuggets, plus a transcript (one record per judge unit with the prompts, raw replies,
parsed labels, re-asks, latency, tokens and cost of each call).  The judge is a catalog name (as in ``metaeval
sweep judge=NAME``), with the sweep's client, cache and transcripts.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from metaeval.commands.helptext import command_parser


def add_common(p: argparse.ArgumentParser) -> None:
    """Options shared by ``create`` and ``assign``."""
    p.add_argument("--judge", required=True, metavar="NAME",
                   help="judge config name (gpt-4o, lexical, ...; see `metaeval judge list`), registry name or YAML file")
    p.add_argument("--out", required=True, help="output JSONL (nuggetizer format)")
    p.add_argument("--transcripts", metavar="FILE", help="transcript JSONL (default: OUT with .transcripts.jsonl)")
    p.add_argument("--prompt", default="v1", metavar="NAME", help="prompt version for prompted judges (default v1)")
    p.add_argument("--cache", default="results/.cache/responses.sqlite", metavar="PATH",
                   help="response cache shared with sweeps (default results/.cache/responses.sqlite)")
    p.add_argument("--no-cache", action="store_true", help="send every call (no cache)")
    p.add_argument("--concurrency", type=int, default=None, metavar="N", help="units at once (default: the judge's)")
    p.add_argument("--config-dir", action="append", metavar="DIR", help="a config folder overlaying the package's")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "assign", __doc__, help="assign nuggets to answers with one judge (nuggetizer JSONL in and out)")
    p.add_argument("--nuggets", required=True, metavar="FILE", help="nuggetizer nugget file {qid, query, nuggets}")
    p.add_argument("--answers", required=True, nargs="+", metavar="RUN",
                   help="TREC RAG answer run file(s) or a folder of them (e.g. a track's runs/)")
    p.add_argument("--batch", type=int, default=10, help="nuggets per judge call (default 10, as the paper)")
    add_common(p)
    p.set_defaults(func=run)


def judge_options(args: argparse.Namespace) -> dict[str, Any]:
    """The judge options shared by ``create`` and ``assign`` (:func:`metaeval.workflow.nuggetize.prepare_judge`)."""
    return {"config_dirs": args.config_dir or (), "prompt": args.prompt,
            "cache": None if args.no_cache else args.cache}


def transcripts_path(args: argparse.Namespace) -> Path:
    from metaeval.workflow.nuggetize import transcripts_path as path_of

    return path_of(args.out, args.transcripts)


def check_outputs(args: argparse.Namespace) -> None:
    """``--out`` and the transcript path vetted before any judge call (``metaeval.io.outputs``)."""
    from metaeval.io.outputs import check_output

    check_output(args.out, kind="file")
    check_output(transcripts_path(args), kind="file", option="--transcripts")
    if getattr(args, "cache", None) and not getattr(args, "no_cache", False):
        check_output(args.cache, kind="file", option="--cache")
    from metaeval.io.outputs import check_not_input

    inputs = [*(getattr(args, "answers", None) or []), getattr(args, "nuggets", None), getattr(args, "pool", None),
              getattr(args, "documents", None), getattr(args, "judge", None)]
    inputs = [p for p in inputs if isinstance(p, str) and os.path.exists(p)]
    for path, option in ((args.out, "--out"), (transcripts_path(args), "--transcripts")):
        check_not_input(path, inputs, option=option, input_option="an input")


def run(args: argparse.Namespace) -> int:
    from metaeval.errors import ConfigError

    if args.batch < 1:
        raise ConfigError("--batch must be >= 1")
    check_outputs(args)
    from metaeval.workflow.nuggetize import assign_files

    done = assign_files(args.nuggets, args.answers, args.judge, out=args.out, transcripts=args.transcripts,
                        batch=args.batch, concurrency=args.concurrency, **judge_options(args))
    records = done.records
    n_failed = sum(1 for r in records for n in r["nuggets"] if n["assignment"] == "FAILED")
    n_labels = sum(len(r["nuggets"]) for r in records)
    print(f"{len(records)} answers ({len({r['run_id'] for r in records})} runs, {len({r['qid'] for r in records})} topics), "
          f"{n_labels} labels ({n_failed} FAILED) by judge {done.judge}; {len(done.transcripts)} judge units, "
          f"{done.calls} model calls")
    if done.skipped:
        print(f"{len(done.skipped)} answers skipped: their topics have no nuggets in {args.nuggets} "
              f"(e.g. {', '.join(sorted({a.qid for a in done.skipped})[:3])})")
    print(f"wrote {args.out} and {done.transcripts_path}")
    return failed_stage("assign", done.problem)


def failed_stage(command: str, problem: str | None) -> int:
    """Exit status of a stage that wrote everything: 0, or (its labels unusable) the failed-rate status with the
    problem on stderr."""
    if not problem:
        return 0
    import sys

    from metaeval.workflow.exit_status import EXIT_FAILED_RATE

    print(f"metaeval {command}: {problem}", file=sys.stderr)  # written (nothing is lost), but not a success
    return EXIT_FAILED_RATE
