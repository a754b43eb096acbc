"""Executors: run job payloads on per-judge workers and stream results back to the driver.

A *worker* is any object with ``async def run(stage: str, payload: dict) -> dict`` built by a picklable factory
``make_worker(judge_config) -> worker``.  One worker per judge deployment owns that deployment's client (its
cache, rate limits and retries); the executor only decides where workers live:

* ``AsyncioExecutor`` (``runtime=serial``): every worker in the driver's event loop.  Bounded fan-out: one
  queue per worker drained by ``concurrency`` tasks (never an unbounded ``gather``).
* ``RayExecutor`` (``runtime=ray_local`` / ``ray_cluster``): one async Ray actor per deployment with
  ``max_concurrency`` = its limit; the driver keeps at most ``2 x concurrency`` jobs in flight per actor
  (backpressure via ``ray.wait``), sent in chunks (``RayExecutor._chunk``: one remote call per few jobs, so
  Ray's per-call cost is not paid per job), streams results to the store as chunks finish, and resubmits the
  unfinished jobs of an actor that died (the actor is restarted by Ray, ``max_restarts``).

Both call ``on_result(job, result_or_exception)`` in the driver, in completion order.

``prefetch[worker_id]`` (optional): jobs a worker may hold *beyond* its concurrency.  The sweep gives it to judges
whose client enforces the deployment's concurrency itself (``ChatClient``'s limiter): a job runs its batches one
after the other, so with exactly ``concurrency`` jobs in progress the deployment's slots idle while each job
parses a reply, stores it and renders its next prompt; with more jobs in progress than slots another job's call
takes a freed slot at once (the number of requests on the wire never exceeds the limit).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence



log = logging.getLogger(__name__)


class Worker(Protocol):
    async def run(self, stage: str, payload: dict[str, Any]) -> dict[str, Any]: ...


@dataclass
class Job:
    """A job for one worker: ``worker_id`` selects the judge deployment; ``key`` is the spec key."""

    key: str
    worker_id: str
    stage: str
    payload: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)


OnResult = Callable[[Job, Any], None]


class AsyncioExecutor:
    """Workers in the driver's event loop; ``concurrency[worker_id]`` tasks per worker."""

    name = "serial"

    def __init__(self, make_worker: Callable[[dict[str, Any]], Worker], worker_configs: dict[str, dict[str, Any]],
                 concurrency: dict[str, int], prefetch: Mapping[str, int] | None = None):
        self.make_worker = make_worker
        self.worker_configs = worker_configs
        self.concurrency = concurrency
        self.prefetch = dict(prefetch or {})
        self._workers: dict[str, Worker] = {}
        #: seconds spent importing the judges' provider SDKs before the first jobs (the in-process part of a
        #: runtime's start, as a Ray actor imports them while it starts); the sweep reports it apart from judging
        self.runtime_start_s = 0.0
        self.runtime_start_what = "judge SDK imports"
        #: seconds the stages waited, after their last job, for ``when_draining`` to finish (its imports outlasted
        #: the replies still in flight: a fast server); not judging, and the sweep does not count it as such
        self.preparation_wait_s = 0.0
        self._started = False

    def run(self, jobs: Sequence[Job], on_result: OnResult, when_draining: Callable[[], Any] | None = None) -> None:
        """Run ``jobs``, calling ``on_result`` for each.  ``when_draining``: called once, in a thread of its own,
        when the last job has been taken and only the ones in flight remain (the event loop then mostly waits on
        the server: the driver gives it the imports of what follows the judging, which would otherwise run after
        it); its exceptions are ignored, and it has finished when this returns (no thread outlives the stage): the
        time waited for it after the last job is added to :attr:`preparation_wait_s`.  Only when a job's judge calls a
        model server: offline judges keep the loop busy computing: there is no wait to overlap."""
        if not self._started and jobs:
            self._started = True
            deployments = [d for c in self.worker_configs.values() if (d := getattr(c, "deployment", None)) is not None]
            if deployments:  # offline judges import no SDK
                import time

                from metaeval.judges.backends import import_sdks

                t = time.perf_counter()
                import_sdks(deployments)
                self.runtime_start_s += time.perf_counter() - t
        waits = any(getattr(self.worker_configs.get(w), "deployment", None) is not None
                    for w in {j.worker_id for j in jobs})
        asyncio.run(self._run(jobs, on_result, when_draining if waits else None))

    async def _run(self, jobs: Sequence[Job], on_result: OnResult,
                   when_draining: Callable[[], Any] | None = None) -> None:
        pending = [when_draining] if when_draining is not None else []
        started: list[asyncio.Future] = []

        def draining() -> None:  # the first drain task to find its queue empty starts it, once
            if pending:
                from metaeval.forked import best_effort

                started.append(asyncio.get_running_loop().run_in_executor(None, best_effort, pending.pop()))

        queues: dict[str, asyncio.Queue] = {}
        for job in jobs:
            queues.setdefault(job.worker_id, asyncio.Queue()).put_nowait(job)
        tasks = []
        for wid, q in queues.items():
            if wid not in self._workers:
                self._workers[wid] = self.make_worker(self.worker_configs[wid])
            worker = self._workers[wid]
            for _ in range(max(1, self.concurrency.get(wid, 1)) + max(0, int(self.prefetch.get(wid, 0)))):
                tasks.append(asyncio.create_task(self._drain(worker, q, on_result, draining)))
        try:
            await asyncio.gather(*tasks)
            if started:  # the jobs are done; the preparation may not be
                import time

                t0 = time.perf_counter()
                await started[0]
                self.preparation_wait_s += time.perf_counter() - t0
        finally:
            for t in tasks:
                t.cancel()
            for w in self._workers.values():
                close = getattr(w, "aclose", None)
                if close is not None:
                    await close()
            self._workers.clear()

    @staticmethod
    async def _drain(worker: Worker, q: asyncio.Queue, on_result: OnResult,
                     draining: Callable[[], None] = lambda: None) -> None:
        while True:
            try:
                job = q.get_nowait()
            except asyncio.QueueEmpty:
                draining()
                return
            try:
                result: Any = await worker.run(job.stage, job.payload)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a failed job is data: the driver records it
                result = exc
            on_result(job, result)

    def shutdown(self) -> None:
        pass

