"""Executor ``prefetch`` (issue 15, overhead at the ceiling): judges whose client holds the deployment's concurrency
get as many jobs again in progress, so a freed request slot is taken at once; the requests on the wire never
exceed the limit, every job runs once, and the stored results are those of a run without prefetch."""

from __future__ import annotations

import asyncio
import json

from metaeval.pipeline.executors import AsyncioExecutor, Job


class _Worker:
    """Each job makes two sequential "calls" under a shared semaphore (the client's limiter)."""

    def __init__(self, limit: int, seen: dict):
        self.limit = limit
        self.seen = seen
        self.sem: asyncio.Semaphore | None = None

    async def run(self, stage, payload):
        if self.sem is None:
            self.sem = asyncio.Semaphore(self.limit)
        s = self.seen
        s["jobs"] += 1
        s["max_jobs"] = max(s["max_jobs"], s["jobs"])
        try:
            for _ in range(2):
                async with self.sem:
                    s["calls"] += 1
                    s["max_calls"] = max(s["max_calls"], s["calls"])
                    await asyncio.sleep(0.002)
                    s["calls"] -= 1
                await asyncio.sleep(0)  # the job's own work between its calls
        finally:
            s["jobs"] -= 1
        return {"i": payload["i"]}


def _run(prefetch):
    seen = {"jobs": 0, "max_jobs": 0, "calls": 0, "max_calls": 0}
    got = []
    ex = AsyncioExecutor(lambda cfg: _Worker(3, seen), {"w": {}}, {"w": 3}, prefetch=prefetch)
    ex.run([Job(key=f"k{i}", worker_id="w", stage="assign", payload={"i": i}) for i in range(40)],
           lambda job, res: got.append((job.key, res["i"])))
    return seen, got


def test_prefetch_holds_more_jobs_but_never_more_calls():
    seen, got = _run({"w": 3})
    assert seen["max_jobs"] == 6 and seen["max_calls"] == 3
    assert sorted(got) == sorted((f"k{i}", i) for i in range(40))


def test_without_prefetch_exactly_concurrency_jobs():
    seen, got = _run(None)
    assert seen["max_jobs"] == 3 and seen["max_calls"] == 3 and len(got) == 40


def _records(root):
    out = {}
    for line in (root / "jobs.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        for unit in rec["output"].get("transcripts", []):
            for call in unit["calls"]:
                call.pop("latency_s")
        rec.pop("finished_at")
        out[rec["key"]] = rec
    return out


def test_sweep_with_prefetch_stores_what_it_stored_without(tmp_path, monkeypatch):
    """The test-server judge at concurrency 2 on the demo: requests in flight never above 2 with prefetch, and
    jobs.jsonl (minus timings) and the labels equal a run without it."""
    from metaeval.workflow.compose import compose_sweep
    from metaeval.judges.backends import openai_backend
    from metaeval.pipeline import sweep as sweep_mod
    from metaeval.testing.server import ChatTestServer, Faults

    real = openai_backend.OpenAIBackend.complete
    live = {"n": 0, "max": 0}

    async def counting(self, request):
        live["n"] += 1
        live["max"] = max(live["max"], live["n"])
        try:
            return await real(self, request)
        finally:
            live["n"] -= 1

    monkeypatch.setattr(openai_backend.OpenAIBackend, "complete", counting)
    results = {}
    with ChatTestServer(faults=Faults(latency_s=0.01)) as srv:
        for mode in ("prefetch", "plain"):
            if mode == "plain":
                orig = sweep_mod.Sweep._executor

                def no_prefetch(self):
                    ex = orig(self)
                    ex.prefetch = {}
                    return ex

                monkeypatch.setattr(sweep_mod.Sweep, "_executor", no_prefetch)
            config, cells = compose_sweep([
                "grid=single", "judge=testserver", f"judge.deployment.base_url={srv.openai_base_url}",
                "judge.deployment.limits.concurrency=2", "strategy=human_auto", "runtime=serial",
                f"results_dir={tmp_path / mode}", "name=x", "sweep.progress=false", "calibration.enabled=false"])
            out = sweep_mod.run_sweep(config.pipeline, cells)
            results[mode] = (_records(tmp_path / mode / "x"), {k: v.labels for k, v in out.label_sets.items()})
            if mode == "prefetch":
                assert live["max"] == 2, live
    (rec_a, lab_a), (rec_b, lab_b) = results["prefetch"], results["plain"]
    assert rec_a == rec_b and len(rec_a) == 64
    for k in lab_a:
        assert lab_a[k].equals(lab_b[k])
