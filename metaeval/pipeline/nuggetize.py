"""Nuggetizer-style runs with one judge and no grid: create nuggets for topics, assign nuggets to answers.

The same stages, batching and judge interface as a sweep (``metaeval.pipeline.stages``; Pradeep et al. 2025,
section 4), producing castorini/nuggetizer's JSONL records:

* ``create_records``: per topic, nugget creation over windows of ``creation_window`` documents (at most
  ``max_nuggets``), importance in batches of ``importance_batch``, then vital first (stable) and the first
  ``keep_top`` -> ``{"query", "qid", "nuggets": [{"text", "importance"}]}`` (nuggetizer's creation output);
* ``assign_records``: per answer, assignment of its topic's nuggets in batches of ``assign_batch`` ->
  ``{"query", "qid", "answer_text", "response_length", "run_id", "nuggets": [{"text", "importance",
  "assignment"}]}`` (nuggetizer's assignment output, also NIST's).

Both also return transcript records (``metaeval.judges.transcript``), one per judge unit.  Units run
concurrently, at most ``concurrency`` at a time (a fixed pool of workers over a queue, never an unbounded
gather).  A unit whose reply could not be parsed yields FAILED labels with the raw reply in its transcript;
a nugget with a FAILED assignment is written as ``"assignment": "FAILED"``, never as a default label.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Iterable, Sequence

from metaeval.judges.transcript import unit_record
from metaeval.pipeline.stages import StageSettings, batches, sort_and_keep
from metaeval.types import Answer, Document, Nugget, Topic, parse_importance

#: ``(done, total)`` callback after each finished item
Progress = Callable[[int, int], None]


async def run_bounded(items: Sequence[Any], fn: Callable[[Any], Awaitable[Any]], concurrency: int,
                      progress: Progress | None = None) -> list[Any]:
    """``[await fn(x) for x in items]`` with at most ``concurrency`` running at once; results in input order."""
    results: list[Any] = [None] * len(items)
    queue: asyncio.Queue = asyncio.Queue()
    for i, x in enumerate(items):
        queue.put_nowait((i, x))
    done = 0

    async def worker() -> None:
        nonlocal done
        while True:
            try:
                i, x = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            results[i] = await fn(x)
            done += 1
            if progress:
                progress(done, len(items))

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(items) or 1)))))
    return results


async def create_topic(judge: Any, topic: Topic, docs: Sequence[Document], s: StageSettings) -> tuple[dict, list[dict]]:
    """One topic's creation + importance; returns its nuggetizer record and transcripts."""
    transcripts: list[dict] = []
    nuggets: list[str] = []
    for window in batches(list(docs), s.creation_window):
        res = await judge.create_nuggets(topic, window, nuggets)
        transcripts.append(unit_record(res, stage="create", qid=topic.qid, items=[d.docid for d in window]))
        if not res.failed:
            nuggets = list(res.nuggets)[: s.max_nuggets]
    importance: list[str] = []
    for batch in batches(nuggets, s.importance_batch):
        res = await judge.label_importance(topic, batch, documents=list(docs) or None)
        labels = [lab.value for lab in res.labels] + ["FAILED"] * (len(batch) - len(res.labels))
        importance.extend(labels[: len(batch)])
        transcripts.append(unit_record(res, stage="importance", qid=topic.qid, items=batch))
    kept = sort_and_keep(nuggets, importance, s.keep_top)
    record = {"query": topic.text, "qid": topic.qid, "nuggets": [{"text": t, "importance": imp} for t, imp in kept]}
    return record, transcripts


async def assign_answer(judge: Any, topic: Topic, answer: Answer, nuggets: Sequence[tuple[str, str]],
                        s: StageSettings) -> tuple[dict, list[dict]]:
    """One answer's assignment; ``nuggets`` are ``(text, importance as written in the nugget file)``."""
    transcripts: list[dict] = []
    labels: list[str] = []
    for batch in batches(list(nuggets), s.assign_batch):
        objs = [Nugget(text=t, importance=parse_importance(imp)) for t, imp in batch]
        res = await judge.assign(topic, answer, objs)
        got = [lab.value for lab in res.labels] + ["FAILED"] * (len(batch) - len(res.labels))
        labels.extend(got[: len(batch)])
        transcripts.append(unit_record(res, stage="assign", qid=answer.qid, run_id=answer.run_id,
                                       items=[t for t, _ in batch]))
    record = {
        "query": topic.text, "qid": answer.qid, "answer_text": answer.text,
        "response_length": answer.response_length if answer.response_length is not None else len(answer.text.split()),
        "run_id": answer.run_id,
        "nuggets": [{"text": t, "importance": imp, "assignment": lab} for (t, imp), lab in zip(nuggets, labels)],
    }
    return record, transcripts


def create_records(judge: Any, pool: Iterable[tuple[Topic, Sequence[Document]]], settings: StageSettings | None = None,
                   concurrency: int = 4, progress: Progress | None = None) -> tuple[list[dict], list[dict]]:
    """Nuggetizer creation records for every topic of ``pool``, in order, and all transcripts."""
    s = settings or StageSettings()
    items = list(pool)

    async def one(item):
        return await create_topic(judge, item[0], item[1], s)

    out = _run(judge, run_bounded(items, one, concurrency, progress))
    return [r for r, _ in out], [t for _, ts in out for t in ts]


def assign_records(judge: Any, nuggets: dict[str, tuple[str, list[tuple[str, str]]]], answers: Sequence[Answer],
                   settings: StageSettings | None = None, concurrency: int = 4,
                   progress: Progress | None = None) -> tuple[list[dict], list[dict], list[Answer]]:
    """Assignment records for every answer whose topic has nuggets (``nuggets``: qid -> (query, [(text,
    importance)])), in answer order, all transcripts, and the answers left out (no nuggets for their topic)."""
    s = settings or StageSettings()
    todo = [a for a in answers if a.qid in nuggets]
    skipped = [a for a in answers if a.qid not in nuggets]

    async def one(a: Answer):
        query, items = nuggets[a.qid]
        return await assign_answer(judge, Topic(a.qid, query or a.topic), a, items, s)

    out = _run(judge, run_bounded(todo, one, concurrency, progress))
    return [r for r, _ in out], [t for _, ts in out for t in ts], skipped


def _run(judge: Any, coro: Awaitable[Any]) -> Any:
    """Run ``coro`` in a fresh event loop and close the judge's connections in that same loop."""

    async def main():
        try:
            return await coro
        finally:
            await judge.aclose()

    return asyncio.run(main())
