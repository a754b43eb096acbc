"""Executors: run job payloads on per-judge workers and stream results back to the driver.

A *worker* is any object with ``async def run(stage: str, payload: dict) -> dict`` built by a picklable factory
``make_worker(judge_config) -> worker``.  One worker per judge deployment owns that deployment's client (its
cache, rate limits and retries); the executor only decides where workers live:

* ``AsyncioExecutor`` (``runtime=serial``): every worker in the driver's event loop.  Bounded fan-out: one
  queue per worker drained by ``concurrency`` tasks (never an unbounded ``gather``).
* ``RayExecutor`` (``runtime=ray_local`` / ``ray_cluster``): one async Ray actor per deployment with
  ``max_concurrency`` = its limit; the driver keeps at most ``2 x concurrency`` calls in flight per actor
  (backpressure via ``ray.wait``), streams results to the store as they finish, and resubmits the unfinished
  jobs of an actor that died (the actor is restarted by Ray, ``max_restarts``).

Both call ``on_result(job, result_or_exception)`` in the driver, in completion order.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from metaeval.pipeline.signals import install_sigterm

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
                 concurrency: dict[str, int]):
        self.make_worker = make_worker
        self.worker_configs = worker_configs
        self.concurrency = concurrency
        self._workers: dict[str, Worker] = {}

    def run(self, jobs: Sequence[Job], on_result: OnResult) -> None:
        asyncio.run(self._run(jobs, on_result))

    async def _run(self, jobs: Sequence[Job], on_result: OnResult) -> None:
        queues: dict[str, asyncio.Queue] = {}
        for job in jobs:
            queues.setdefault(job.worker_id, asyncio.Queue()).put_nowait(job)
        tasks = []
        for wid, q in queues.items():
            if wid not in self._workers:
                self._workers[wid] = self.make_worker(self.worker_configs[wid])
            worker = self._workers[wid]
            for _ in range(max(1, self.concurrency.get(wid, 1))):
                tasks.append(asyncio.create_task(self._drain(worker, q, on_result)))
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
            for w in self._workers.values():
                close = getattr(w, "aclose", None)
                if close is not None:
                    await close()
            self._workers.clear()

    @staticmethod
    async def _drain(worker: Worker, q: asyncio.Queue, on_result: OnResult) -> None:
        while True:
            try:
                job = q.get_nowait()
            except asyncio.QueueEmpty:
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


def init_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Start (or join) Ray.  Local runtimes bind to 127.0.0.1 only."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray

    if ray.is_initialized():
        return
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus or 2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                 configure_logging=False)


class RayExecutor:
    """One async Ray actor per judge deployment (see the module docstring)."""

    name = "ray"

    def __init__(self, make_worker: Callable[[dict[str, Any]], Worker], worker_configs: dict[str, dict[str, Any]],
                 concurrency: dict[str, int], address: str | None = None, num_cpus: int | None = None,
                 max_job_retries: int = 3):
        self.make_worker = make_worker
        self.worker_configs = worker_configs
        self.concurrency = concurrency
        self.address = address
        self.num_cpus = num_cpus
        self.max_job_retries = max_job_retries
        self._actors: dict[str, Any] = {}

    def _actor(self, wid: str):
        import ray

        if wid not in self._actors:
            actor_cls = ray.remote(_WorkerActor).options(
                max_concurrency=max(1, self.concurrency.get(wid, 1)), max_restarts=3, num_cpus=0,
            )
            self._actors[wid] = actor_cls.remote(self.make_worker, self.worker_configs[wid])
        return self._actors[wid]

    def run(self, jobs: Sequence[Job], on_result: OnResult) -> None:
        import ray
        from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

        init_ray(self.address, self.num_cpus)
        install_sigterm()  # ray.init replaced our SIGTERM handler with sys.exit (a C++ stack dump mid-ray.wait)
        pending: dict[str, list[Job]] = {}
        for job in jobs:
            pending.setdefault(job.worker_id, []).append(job)
        for lst in pending.values():
            lst.reverse()  # pop() from the end keeps submission order
        in_flight: dict[Any, Job] = {}
        per_worker: dict[str, int] = {w: 0 for w in pending}
        attempts: dict[str, int] = {}

        def fill() -> None:
            for wid, lst in pending.items():
                cap = 2 * max(1, self.concurrency.get(wid, 1))
                while lst and per_worker[wid] < cap:
                    job = lst.pop()
                    ref = self._actor(wid).run.remote(job.stage, job.payload)
                    in_flight[ref] = job
                    per_worker[wid] += 1

        fill()
        while in_flight:
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=None)
            for ref in done:
                job = in_flight.pop(ref)
                per_worker[job.worker_id] -= 1
                try:
                    result: Any = ray.get(ref)
                except (ActorDiedError, ActorUnavailableError, RayActorError) as exc:
                    attempts[job.key] = attempts.get(job.key, 0) + 1
                    if attempts[job.key] <= self.max_job_retries:
                        log.warning("worker %s died during job %s; retrying (%d)", job.worker_id, job.key, attempts[job.key])
                        pending[job.worker_id].append(job)
                        continue
                    result = exc
                except Exception as exc:
                    result = exc
                on_result(job, result)
            fill()

    def shutdown(self) -> None:
        import ray

        for actor in self._actors.values():
            try:
                ray.kill(actor)
            except Exception:  # already gone
                pass
        self._actors.clear()


class _WorkerActor:
    """Ray actor body: builds its worker once and runs payloads on the actor's event loop."""

    def __init__(self, make_worker: Callable[[dict[str, Any]], Worker], config: dict[str, Any]):
        self.worker = make_worker(config)

    async def run(self, stage: str, payload: dict[str, Any]) -> dict[str, Any]:
        return await self.worker.run(stage, payload)

    def pid(self) -> int:
        return os.getpid()


EXECUTORS: dict[str, type] = {"serial": AsyncioExecutor, "ray": RayExecutor}
