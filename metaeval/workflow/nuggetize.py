"""The one-judge workflow of ``metaeval create`` and ``metaeval assign``: build the judge (resolved as ``metaeval
sweep judge=NAME`` resolves it, with the sweep's prompts, cache and client), run nugget creation + importance
(:func:`metaeval.pipeline.nuggetize.create_records`) or assignment
(:func:`metaeval.pipeline.nuggetize.assign_records`) over castorini/nuggetizer's file formats, and write the records
and the transcript of every judge unit.  A stage whose labels are all unusable (every one FAILED, nothing created)
is reported as ``problem`` (:func:`metaeval.pipeline.health.unusable_stage`): written, but not a success.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence


@dataclass(frozen=True)
class JudgeRun:
    """What ``create`` / ``assign`` did: the records written to ``out`` (nuggetizer JSONL), the transcripts written
    to ``transcripts_path``, the judge's name, answers ``skipped`` (assign: their topic has no nuggets), model
    ``calls`` and the health ``problem`` (None when the stage produced usable labels)."""

    records: list
    transcripts: list
    judge: str
    out: str
    transcripts_path: Path
    calls: int
    problem: str | None
    skipped: list


def transcripts_path(out: str, transcripts: str | None = None) -> Path:
    """The transcript file: ``transcripts`` as given, else ``out`` with ``.transcripts.jsonl`` for ``.jsonl``."""
    if transcripts:
        return Path(transcripts)
    path = Path(out)
    stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name
    return path.with_name(stem + ".transcripts.jsonl")


def prepare_judge(name: str, stages: tuple[str, ...], *, config_dirs: Sequence[str] = (), prompt: str = "v1",
                  cache: str | None = None) -> tuple[Any, Any]:
    """``(spec, judge)``: the judge ``name`` resolved, checked for ``stages`` (stage, extra, API-key variable) and
    built; a prompted judge gets the prompt version ``prompt`` and the response cache ``cache`` (None: no cache)
    unless its config names them."""
    from metaeval.judges import build_judge, check_available, resolve_judge
    from metaeval.judges.catalog import PACKAGE_CONF, default_config_dirs

    dirs = default_config_dirs(config_dirs or ())
    spec = resolve_judge(name, config_dirs=dirs)
    check_available(spec, stages)
    if spec.prompted:
        options: dict[str, Any] = {}
        if "prompts" not in spec.config:
            options["prompts"] = prompt_config(prompt, [*dirs, PACKAGE_CONF])
        if "cache" not in spec.config:
            options["cache"] = cache
        if options.get("cache"):
            Path(options["cache"]).parent.mkdir(parents=True, exist_ok=True)
        spec = spec.with_options(**options)
    return spec, build_judge(spec)


def prompt_config(name: str, dirs: list) -> dict[str, str]:
    """The templates of prompt version ``name`` (``prompt/<name>.yaml`` in the first of ``dirs`` holding one)."""
    from metaeval.errors import ConfigError

    for d in dirs:
        p = Path(d) / "prompt" / f"{name}.yaml"
        if p.is_file():
            from metaeval.io.yamlsafe import load_yaml, read_yaml_text

            cfg = load_yaml(read_yaml_text(p), str(p)) or {}
            return {k: v for k, v in cfg.items() if k in ("relevance", "create", "importance", "assign") and v}
    raise ConfigError(f"--prompt {name}: no prompt/{name}.yaml in {', '.join(str(d) for d in dirs)}")


def answer_files(items: Sequence[str]) -> list[Path]:
    """Files as given; a folder contributes its ``*.jsonl`` / ``*.jsonl.gz`` / ``*.jl`` files (sorted)."""
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


def _progress(stage: str, total: int):
    from metaeval.workflow.progress import stage_progress

    bar = stage_progress(stage, total)
    state = {"done": 0}

    def update(done: int, _total: int) -> None:
        bar.update(done - state["done"])
        state["done"] = done

    return bar, update


def _write(records: list, transcripts: list, out: str, tpath: Path) -> None:
    from metaeval.io.jsonl import write_jsonl

    write_jsonl(out, records)
    write_jsonl(tpath, transcripts)


def _problem(stage: str, usable: int, total: int, transcripts: list) -> str | None:
    from metaeval.pipeline.health import unusable_stage

    return unusable_stage(stage, usable=usable, total=total, calls=sum(len(t["calls"]) for t in transcripts),
                          errors=[c.get("error") for t in transcripts for c in t["calls"]])


def read_topic_nuggets(path: str) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """qid -> (query, [(nugget, importance)]) of a nuggetizer nugget file, in nugget order (importance ``vital``
    where the file gives none)."""
    from metaeval.io.nuggets import read_nuggets

    table = read_nuggets(path)
    topics = table.attrs.get("topics", {})
    nuggets: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    for qid, g in table.groupby("qid", sort=False):
        items = [(r.nugget, r.importance_raw if isinstance(r.importance_raw, str) else "vital")
                 for r in g.sort_values("nugget_id").itertuples(index=False)]
        nuggets[str(qid)] = (topics.get(qid, ""), items)
    return nuggets


def assign_files(nuggets_path: str, answers: Sequence[str], judge: str, *, out: str, transcripts: str | None = None,
                 batch: int = 10, concurrency: int | None = None, **judge_options: Any) -> JudgeRun:
    """``metaeval assign``: the nuggets of ``nuggets_path`` assigned to the answers of the runs ``answers`` (files
    or folders, :func:`answer_files`) by ``judge`` (``judge_options``: :func:`prepare_judge`'s), ``batch`` nuggets
    per call, ``concurrency`` units at once (None: the judge's); records to ``out``, transcripts beside it."""
    from metaeval.io.answers import read_answers
    from metaeval.pipeline.nuggetize import assign_records
    from metaeval.pipeline.stages import StageSettings

    nuggets = read_topic_nuggets(nuggets_path)
    items = [a for f in answer_files(answers) for a in read_answers(f)]
    spec, built = prepare_judge(judge, ("assign",), **judge_options)
    bar, update = _progress("assign", sum(1 for a in items if a.qid in nuggets))
    try:
        records, trans, skipped = assign_records(built, nuggets, items, StageSettings(assign_batch=batch),
                                                 concurrency=concurrency or spec.concurrency, progress=update)
    finally:
        bar.close()
    tpath = transcripts_path(out, transcripts)
    _write(records, trans, out, tpath)
    n_failed = sum(1 for r in records for n in r["nuggets"] if n["assignment"] == "FAILED")
    n_labels = sum(len(r["nuggets"]) for r in records)
    return JudgeRun(records, trans, spec.name, out, tpath, sum(len(t["calls"]) for t in trans),
                    _problem("assignment", n_labels - n_failed, n_labels, trans), list(skipped))


def create_files(pool_path: str, judge: str, *, out: str, transcripts: str | None = None, window: int = 10,
                 max_nuggets: int = 30, keep_top: int = 20, concurrency: int | None = None,
                 **judge_options: Any) -> JudgeRun:
    """``metaeval create``: nuggets created over windows of ``window`` documents (at most ``max_nuggets``), their
    importance labelled and the first ``keep_top`` kept (vital first), per topic of the candidate pool at
    ``pool_path``, by ``judge``; records to ``out``, transcripts beside it."""
    from metaeval.io.pool import read_pool
    from metaeval.pipeline.nuggetize import create_records
    from metaeval.pipeline.stages import StageSettings

    pool = read_pool(pool_path)
    spec, built = prepare_judge(judge, ("create", "importance"), **judge_options)
    settings = StageSettings(creation_window=window, max_nuggets=max_nuggets, keep_top=keep_top)
    bar, update = _progress("create", len(pool))
    try:
        records, trans = create_records(built, pool, settings, concurrency=concurrency or spec.concurrency,
                                        progress=update)
    finally:
        bar.close()
    tpath = transcripts_path(out, transcripts)
    _write(records, trans, out, tpath)
    n = sum(len(r["nuggets"]) for r in records)
    return JudgeRun(records, trans, spec.name, out, tpath, sum(len(t["calls"]) for t in trans),
                    _problem("creation", n, n if n else len(records), trans), [])
