"""The paper's stages as jobs (Pradeep et al. 2025, section 4), and the worker that runs them on a judge.

* ``relevance`` (optional, ``sweep.relevance=judge``): per topic, grade every candidate document 0-3 on
  UMBRELA's scale in batches of ``relevance_batch`` (10) - one judge call per batch; creation then uses the
  documents the judge graded >= ``min_grade`` (FAILED grades are excluded and counted, ``relevant_documents``);
* ``create``: per topic, iterate over windows of ``creation_window`` (10) documents graded >= ``min_grade``,
  updating a list of at most ``max_nuggets`` (30) nuggets - one judge call per window;
* ``importance``: per topic, label the nugget list vital/okay in batches of ``importance_batch`` (10);
  then sort vital first (stable) and keep the top ``keep_top`` (20);
* ``assign``: per answer, label the nuggets support / partial_support / not_support, listwise, in batches of
  ``assign_batch`` (10).

So the number of judge calls is exactly ceil(candidate documents/10) per topic for relevance grading,
ceil(documents/10) per topic for creation, ceil(nuggets/10) per topic
for importance and ceil(nuggets/10) per answer for assignment (re-asks of an unparseable reply come on top and
are traced).  A job is one of those per-topic / per-answer units; its spec hashes the judge, the prompts and
everything the judge reads, so shared work runs once across grid cells and finished work is never sent again.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Sequence

from metaeval.hashing import content_hash
from metaeval.pipeline.settings import SweepSettings
from metaeval.pipeline.specs import JobSpec
from metaeval.types import IMPORTANCE_ORDER, Answer, Document, Nugget, Topic


#: the settings of every stage job (batch sizes, caps): the ``sweep`` section, whose defaults are THE defaults
StageSettings = SweepSettings


def batches(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def expected_calls(stage: str, n_items: int, settings: StageSettings) -> int:
    """Judge calls a job makes without re-asks: ceil(n / batch)."""
    size = {"relevance": settings.relevance_batch, "create": settings.creation_window,
            "importance": settings.importance_batch, "assign": settings.assign_batch}[stage]
    return math.ceil(n_items / size) if n_items else 0


#: dry-run token model: prompt overhead per call and output tokens per call (a typical reply; the cost of a
#: reply at ``max_tokens`` would be an upper bound far above what the paper's short list replies use)
PROMPT_OVERHEAD_TOKENS = 350
OUTPUT_TOKENS: dict[str, int] = {"relevance": 30, "create": 300, "importance": 40, "assign": 50}


def estimate_job(stage: str, n_items: int, payload: dict[str, Any], settings: StageSettings, prices: Any) -> tuple[int, int, int, float]:
    """THE cost estimate (dry run and budget cap): ``(calls, input tokens, output tokens, USD)`` of one job.

    calls = ceil(n / batch) (``expected_calls``, re-asks not included); input tokens = calls x prompt overhead +
    the payload's text at ~4 characters per token (``metaeval.judges.config.estimate_tokens``); output tokens =
    calls x a typical reply for the stage; USD from the deployment's ``Prices`` (``prices.cost``)."""
    from metaeval.judges.config import estimate_tokens

    calls = expected_calls(stage, n_items, settings)
    tin = calls * PROMPT_OVERHEAD_TOKENS + estimate_tokens(payload)
    tout = calls * OUTPUT_TOKENS[stage]
    return calls, tin, tout, prices.cost(tin, tout)


def placeholder_nuggets(n: int) -> list[str]:
    """Stand-ins for nuggets a judge has not created yet (dry run: importance/assignment counted at the caps)."""
    return [f"(nugget {i + 1} the judge would create for this topic)" for i in range(n)]


# ------------------------------------------------------------------ job specs and payloads
def relevance_job(judge_id: str, prompt_id: str, topic: Topic, docs: Sequence[Document], s: StageSettings) -> tuple[JobSpec, dict]:
    payload = {"topic": [topic.qid, topic.text], "documents": [[d.docid, d.text, d.title] for d in docs],
               "batch": s.relevance_batch}
    inputs = content_hash([payload["topic"], payload["documents"], s.relevance_batch])
    return JobSpec("relevance", judge_id, prompt_id, topic.qid, inputs), payload


def relevant_documents(docs: Sequence[Document], output: dict[str, Any], min_grade: int) -> tuple[list[Document], int]:
    """The documents a relevance job's ``output`` graded >= ``min_grade`` (in the given order), and how many had
    no grade (FAILED, or missing because the job failed): those are excluded, never defaulted."""
    graded = dict(zip(output.get("docids", []), output.get("grades", [])))
    kept = [d for d in docs if graded.get(d.docid) is not None and int(graded[d.docid]) >= min_grade]
    n_failed = sum(1 for d in docs if graded.get(d.docid) is None)
    return kept, n_failed


def create_job(judge_id: str, prompt_id: str, topic: Topic, docs: Sequence[Document], s: StageSettings) -> tuple[JobSpec, dict]:
    payload = {"topic": [topic.qid, topic.text], "documents": [[d.docid, d.text, d.title] for d in docs],
               "window": s.creation_window, "max_nuggets": s.max_nuggets}
    inputs = content_hash([payload["topic"], payload["documents"], s.creation_window, s.max_nuggets])
    return JobSpec("create", judge_id, prompt_id, topic.qid, inputs), payload


def importance_job(judge_id: str, prompt_id: str, topic: Topic, nuggets: Sequence[str], docs: Sequence[Document],
                   s: StageSettings) -> tuple[JobSpec, dict]:
    payload = {"topic": [topic.qid, topic.text], "nuggets": list(nuggets), "batch": s.importance_batch,
               "documents": [[d.docid, d.text, d.title] for d in docs]}
    inputs = content_hash([payload["topic"], payload["nuggets"], [d[0] for d in payload["documents"]], s.importance_batch])
    return JobSpec("importance", judge_id, prompt_id, topic.qid, inputs), payload


def assign_job(judge_id: str, prompt_id: str, topic: Topic, answer: Answer, nuggets: Sequence[tuple[str, str]],
               s: StageSettings, sample: int = 0) -> tuple[JobSpec, dict]:
    """One answer's assignment job; ``sample`` s > 0 is the judge's s-th draw of the same calls
    (``sweep.samples``): its own job (``sample`` in the payload and the inputs hash; sample 0's key is unchanged)."""
    payload = {"topic": [topic.qid, topic.text],
               "answer": {"run_id": answer.run_id, "qid": answer.qid, "text": answer.text, "sentences": list(answer.sentences)},
               "nuggets": [list(n) for n in nuggets], "batch": s.assign_batch}
    parts: list[Any] = [payload["topic"], payload["answer"], payload["nuggets"], s.assign_batch]
    if sample:
        payload["sample"] = int(sample)
        parts.append({"sample": int(sample)})
    inputs = content_hash(parts)
    return JobSpec("assign", judge_id, prompt_id, topic.qid, inputs, run_id=answer.run_id), payload


def sort_and_keep(nuggets: Sequence[str], importance: Sequence[str], keep_top: int) -> list[tuple[str, str]]:
    """Vital first (stable within each class; FAILED importance last), then the first ``keep_top``."""
    rank = {name: -code for code, name in enumerate(IMPORTANCE_ORDER)}  # the highest importance first
    ranked = sorted(zip(nuggets, importance), key=lambda p: rank.get(p[1], 1))
    return ranked[:keep_top]


# ------------------------------------------------------------------ the worker
class JudgeWorker:
    """Runs stage payloads on one judge (built from its typed ``JudgeSpec``) and summarises the calls made."""

    def __init__(self, spec: Any):
        from metaeval.judges.catalog import build_judge

        self.spec = spec
        self.judge = build_judge(spec)

    #: stage -> method name
    METHODS = {"relevance": "_relevance", "create": "_create", "importance": "_importance", "assign": "_assign"}

    async def run(self, stage: str, payload: dict[str, Any]) -> dict[str, Any]:
        topic = Topic(*payload["topic"])
        if stage not in self.METHODS:
            raise ValueError(f"unknown stage {stage!r}")
        return await getattr(self, self.METHODS[stage])(topic, payload)

    async def _relevance(self, topic: Topic, p: dict[str, Any]) -> dict[str, Any]:
        docs = [Document(docid=d[0], text=d[1], title=d[2]) for d in p["documents"]]
        grades: list[int | None] = []
        results, raws, units = [], [], []
        for batch in batches(docs, p["batch"]):
            res = await self.judge.grade_relevance(topic, batch)
            results.append(res)
            units.append([d.docid for d in batch])
            got = list(res.grades) + [None] * (len(batch) - len(res.grades))
            grades.extend(got[: len(batch)])
            if res.status != "ok":
                raws.append({"reason": res.reason, "raw": res.raw})
        return {"docids": [d.docid for d in docs], "grades": grades, "failed_grades": sum(g is None for g in grades),
                "failures": raws, "transport_failures": _transport(results), **_stats(results),
                "transcripts": _transcripts("relevance", topic.qid, None, results, units)}

    async def _create(self, topic: Topic, p: dict[str, Any]) -> dict[str, Any]:
        docs = [Document(docid=d[0], text=d[1], title=d[2]) for d in p["documents"]]
        nuggets: list[str] = []
        results, reasons, units = [], [], []
        for window in batches(docs, p["window"]):
            res = await self.judge.create_nuggets(topic, window, nuggets)
            results.append(res)
            units.append([d.docid for d in window])
            if res.failed:
                reasons.append(res.reason or "failed")
            else:
                nuggets = list(res.nuggets)[: p["max_nuggets"]]
        status = "failed" if results and len(reasons) == len(results) else ("partial" if reasons else "ok")
        return {"nuggets": nuggets, "status": status, "reasons": reasons, "transport_failures": _transport(results),
                **_stats(results), "transcripts": _transcripts("create", topic.qid, None, results, units)}

    async def _importance(self, topic: Topic, p: dict[str, Any]) -> dict[str, Any]:
        docs = [Document(docid=d[0], text=d[1], title=d[2]) for d in p.get("documents", [])]
        labels: list[str] = []
        results, raws, units = [], [], []
        for batch in batches(p["nuggets"], p["batch"]):
            res = await self.judge.label_importance(topic, batch, documents=docs or None)
            results.append(res)
            units.append(list(batch))
            labels.extend(lab.value for lab in res.labels)
            if res.status != "ok":
                raws.append({"reason": res.reason, "raw": res.raw})
        return {"importance": labels, "failures": raws, "transport_failures": _transport(results), **_stats(results),
                "transcripts": _transcripts("importance", topic.qid, None, results, units)}

    async def _assign(self, topic: Topic, p: dict[str, Any]) -> dict[str, Any]:
        a = p["answer"]
        answer = Answer(run_id=a["run_id"], qid=a["qid"], text=a["text"], sentences=tuple(a.get("sentences") or ()))
        labels: list[str] = []
        results, raws, units = [], [], []
        judge = self.judge.for_sample(int(p.get("sample", 0)))  # sweep.samples: draw s of the same judge
        for batch in batches(p["nuggets"], p["batch"]):
            nuggets = [Nugget(text=t, importance=_importance(imp)) for t, imp in batch]
            res = await judge.assign(topic, answer, nuggets)
            results.append(res)
            units.append([t for t, _ in batch])
            labels.extend(lab.value for lab in res.labels)
            if res.status != "ok":
                raws.append({"reason": res.reason, "raw": res.raw})
        return {"labels": labels, "failures": raws, "transport_failures": _transport(results), **_stats(results),
                "transcripts": _transcripts("assign", topic.qid, a["run_id"], results, units)}

    async def aclose(self) -> None:
        await self.judge.aclose()

    def warm(self) -> None:
        """``Judge.warm``: a Ray actor calls it while it is being constructed, so it reports ready when it is."""
        self.judge.warm()


def make_worker(spec: Any) -> JudgeWorker:
    """The executors' worker factory: one worker per ``JudgeSpec`` (picklable, sent to Ray actors as is)."""
    return JudgeWorker(spec)


def _importance(value: Any):
    """``parse_importance`` (memoised for the few strings a nugget list holds: it is called once per nugget)."""
    if isinstance(value, str):
        return _importance_of(value)
    from metaeval.types import parse_importance

    return parse_importance(value)


@functools.lru_cache(maxsize=1024)
def _importance_of(value: str):
    from metaeval.types import parse_importance

    return parse_importance(value)


def _transcripts(stage: str, qid: str, run_id: str | None, results: Sequence[Any], units: Sequence[Any]) -> list[dict]:
    """One transcript record per judge unit (``metaeval.judges.transcript``); the sweep writes a cell's records to
    ``layout.transcripts(cell)``."""
    from metaeval.judges.transcript import unit_record

    return [unit_record(r, stage=stage, qid=qid, run_id=run_id, items=u) for r, u in zip(results, units)]


def _transport(results: Sequence[Any]) -> int:
    """Units that got no reply at all (the call failed after its retries: server down, timeouts...).

    Such a job is stored as ``failed`` so that a rerun tries it again; a reply that could not be parsed is a
    judgment (FAILED labels with the raw reply) and is stored as done.
    """
    return sum(1 for r in results if (getattr(r, "reason", None) or "").startswith("call failed"))


def _stats(results: Sequence[Any]) -> dict[str, Any]:
    """Judge calls (units: one per window/batch), model requests on the wire (``calls``: every attempt of every
    trace that was not a cache hit - first attempts, retries and re-asks; an offline-replay miss sends nothing),
    cache hits, retries, re-asks, tokens and cost, summed over ``results``."""
    calls = hits = retries = tin = tout = 0
    cost = replayed = 0.0
    prompts: set[str] = set()
    for res in results:
        for t in res.traces:
            if t.cache_hit:
                hits += 1
            elif not (t.error or "").startswith("offline:"):
                calls += 1 + t.retries  # the first attempt and each retry is one request sent
            retries += t.retries
            tin += t.input_tokens
            tout += t.output_tokens
            cost += t.cost_usd
            replayed += getattr(t, "replayed_cost_usd", 0.0)
            if t.prompt_id:
                prompts.add(f"{t.prompt_id}@{t.prompt_version}:{t.prompt_sha}")
    return {"stats": {"units": len(results), "judge_calls": len(results), "calls": calls, "cache_hits": hits, "retries": retries,
                      "reasks": sum(getattr(r, "reasks", 0) for r in results), "input_tokens": tin,
                      "output_tokens": tout, "cost_usd": cost, "replayed_cost_usd": replayed,
                      "prompts": sorted(prompts)}}
