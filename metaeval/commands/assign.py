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


def prepare_judge(args: argparse.Namespace, stages: tuple[str, ...]) -> tuple[Any, Any]:
    """Resolve, check and build the judge (prompted judges get the prompt version and the cache)."""
    from metaeval.judges import build_judge, check_available, resolve_judge
    from metaeval.judges.catalog import PACKAGE_CONF, default_config_dirs

    dirs = default_config_dirs(args.config_dir or ())
    spec = resolve_judge(args.judge, config_dirs=dirs)
    check_available(spec, stages)
    if spec.prompted:
        options: dict[str, Any] = {}
        if "prompts" not in spec.config:
            options["prompts"] = _prompt_config(args.prompt, [*dirs, PACKAGE_CONF])
        if "cache" not in spec.config:
            options["cache"] = None if args.no_cache else args.cache
        if options.get("cache"):
            Path(options["cache"]).parent.mkdir(parents=True, exist_ok=True)
        spec = spec.with_options(**options)
    return spec, build_judge(spec)


def _prompt_config(name: str, dirs: list) -> dict[str, str]:
    from metaeval.errors import ConfigError

    for d in dirs:
        p = Path(d) / "prompt" / f"{name}.yaml"
        if p.is_file():
            from metaeval.io.yamlsafe import load_yaml, read_yaml_text

            cfg = load_yaml(read_yaml_text(p), str(p)) or {}
            return {k: v for k, v in cfg.items() if k in ("relevance", "create", "importance", "assign") and v}
    raise ConfigError(f"--prompt {name}: no prompt/{name}.yaml in {', '.join(str(d) for d in dirs)}")


def transcripts_path(args: argparse.Namespace) -> Path:
    if args.transcripts:
        return Path(args.transcripts)
    out = Path(args.out)
    stem = out.name[: -len(".jsonl")] if out.name.endswith(".jsonl") else out.name
    return out.with_name(stem + ".transcripts.jsonl")


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


def progress_callback(stage: str, total: int):
    from metaeval.workflow.progress import stage_progress

    bar = stage_progress(stage, total)
    state = {"done": 0}

    def update(done: int, _total: int) -> None:
        bar.update(done - state["done"])
        state["done"] = done

    return bar, update


def answer_files(items: list[str]) -> list[Path]:
    """Files as given; a folder contributes its ``*.jsonl`` / ``*.jsonl.gz`` files (sorted)."""
    from metaeval.errors import FormatError

    out: list[Path] = []
    for it in items:
        p = Path(it)
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.name.endswith((".jsonl", ".jsonl.gz", ".jl")))
            if not found:
                raise FormatError(str(p), 0, "", "folder holds no .jsonl answer runs")
            out.extend(found)
        elif p.exists():
            out.append(p)
        else:
            raise FormatError(str(p), 0, "", "no such file or folder")
    return out


def run(args: argparse.Namespace) -> int:
    from metaeval.errors import ConfigError
    from metaeval.io.answers import read_answers
    from metaeval.io.jsonl import write_jsonl
    from metaeval.io.nuggets import read_nuggets
    from metaeval.pipeline.nuggetize import assign_records
    from metaeval.pipeline.stages import StageSettings

    if args.batch < 1:
        raise ConfigError("--batch must be >= 1")
    check_outputs(args)
    table = read_nuggets(args.nuggets)
    topics = table.attrs.get("topics", {})
    nuggets: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    for qid, g in table.groupby("qid", sort=False):
        items = [(r.nugget, r.importance_raw if isinstance(r.importance_raw, str) else "vital")
                 for r in g.sort_values("nugget_id").itertuples(index=False)]
        nuggets[str(qid)] = (topics.get(qid, ""), items)
    answers = [a for f in answer_files(args.answers) for a in read_answers(f)]
    spec, judge = prepare_judge(args, ("assign",))
    n_todo = sum(1 for a in answers if a.qid in nuggets)
    bar, update = progress_callback("assign", n_todo)
    try:
        records, transcripts, skipped = assign_records(judge, nuggets, answers, StageSettings(assign_batch=args.batch),
                                                       concurrency=args.concurrency or spec.concurrency, progress=update)
    finally:
        bar.close()
    write_jsonl(args.out, records)
    tpath = transcripts_path(args)
    write_jsonl(tpath, transcripts)
    n_failed = sum(1 for r in records for n in r["nuggets"] if n["assignment"] == "FAILED")
    n_labels = sum(len(r["nuggets"]) for r in records)
    calls = sum(len(t["calls"]) for t in transcripts)
    print(f"{len(records)} answers ({len({r['run_id'] for r in records})} runs, {len({r['qid'] for r in records})} topics), "
          f"{n_labels} labels ({n_failed} FAILED) by judge {spec.name}; {len(transcripts)} judge units, {calls} model calls")
    if skipped:
        print(f"{len(skipped)} answers skipped: their topics have no nuggets in {args.nuggets} "
              f"(e.g. {', '.join(sorted({a.qid for a in skipped})[:3])})")
    print(f"wrote {args.out} and {tpath}")
    from metaeval.pipeline.health import EXIT_FAILED_RATE, unusable_stage

    problem = unusable_stage("assignment", usable=n_labels - n_failed, total=n_labels, calls=calls,
                             errors=[c.get("error") for t in transcripts for c in t["calls"]])
    if problem:  # written (nothing is lost), but a run where every label FAILED is not a success
        import sys

        print(f"metaeval assign: {problem}", file=sys.stderr)
        return EXIT_FAILED_RATE
    return 0
