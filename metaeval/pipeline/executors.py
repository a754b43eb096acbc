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
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from metaeval.errors import ConfigError

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
                 concurrency: dict[str, int], prefetch: Mapping[str, int] | None = None):
        self.make_worker = make_worker
        self.worker_configs = worker_configs
        self.concurrency = concurrency
        self.prefetch = dict(prefetch or {})
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
            for _ in range(max(1, self.concurrency.get(wid, 1)) + max(0, int(self.prefetch.get(wid, 0)))):
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


def _drop_token_auth_notice(record: logging.LogRecord) -> bool:
    """Logging filter: False for Ray's "Token authentication is enabled for this Ray cluster" notice."""
    return "Token authentication is enabled for this Ray cluster" not in record.getMessage()


def init_ray(address: str | None = None, num_cpus: int | None = None, runtime_env: dict[str, Any] | None = None) -> None:
    """Start (or join) Ray.  Local runtimes bind to 127.0.0.1 only.

    ``address``: an existing cluster's GCS address ``HOST:PORT`` (or ``ray://HOST:10001`` with the Ray Client
    extra, ``pip install 'ray[client]'``); ``runtime_env`` ships code to its workers (``cluster_runtime_env``).
    """
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    if not address and "ray" not in sys.modules:
        # A new local cluster: keep Ray's token authentication on, but say so explicitly - with RAY_AUTH_MODE unset
        # Ray enables it anyway and prints a warning on every run (a user's own setting is respected).  Ray reads
        # the variable when it is imported, so it is set only before the first import (after it, the GCS would ask
        # for a token the driver does not send).
        os.environ.setdefault("RAY_AUTH_MODE", "token")
    import ray

    if ray.is_initialized():
        return
    if address:
        kwargs: dict[str, Any] = {"address": address, "log_to_driver": False}
        if runtime_env:
            kwargs["runtime_env"] = runtime_env
        try:
            ray.init(**kwargs)
        except ValueError as exc:
            if "ray[client]" in str(exc) or "Ray Client" in str(exc):
                raise ConfigError(f"runtime.address={address}: ray:// needs the Ray Client (pip install "
                                  f"'ray[client]'); or give the cluster's GCS address HOST:PORT") from None
            raise
        except ConnectionError as exc:
            raise ConfigError(f"runtime.address={address}: cannot reach a Ray cluster there ({exc})"[:300]) from None
    else:
        # when ray was imported before RAY_AUTH_MODE could be set, Ray still enables token auth and logs a notice
        # on every run: drop that one notice (H6)
        logging.getLogger("ray._private.authentication.authentication_token_setup").addFilter(_drop_token_auth_notice)
        ray.init(num_cpus=num_cpus or 2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                 configure_logging=False)


def cluster_runtime_env(ship_package: bool = True, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The job's ``runtime_env`` on a cluster: the driver's own ``metaeval`` package as a ``py_modules`` entry
    (so every node runs the driver's code; third-party dependencies must be installed on the nodes), plus the
    user's ``runtime.runtime_env``.  API keys are NOT put here: Ray's runtime-env agent logs the serialized
    runtime env at INFO on every node; keys travel as actor arguments instead (``_Secrets``)."""
    env: dict[str, Any] = dict(extra or {})
    if ship_package:
        from metaeval.paths import PACKAGE_DIR

        pkg = str(PACKAGE_DIR)
        env["py_modules"] = [*env.get("py_modules", []), pkg]
        env["excludes"] = [*env.get("excludes", []), "__pycache__", "*.pyc"]
    return env


class _Secrets:
    """Environment variables an actor needs (the judge's key variable, ``METAEVAL_OFFLINE``), as an actor argument.

    Never in a runtime_env (logged by Ray's agent) and never printed: ``repr`` shows the names only."""

    def __init__(self, values: Mapping[str, str]):
        self._values = dict(values)

    def apply(self) -> None:
        os.environ.update(self._values)

    def __repr__(self) -> str:
        return f"_Secrets({sorted(self._values)})"


#: environment variables forwarded to cluster actors when set in the driver (besides each judge's key variable)
FORWARDED_ENV = ("METAEVAL_OFFLINE",)


def _config_dict(cfg: Any) -> dict[str, Any]:
    return dict(getattr(cfg, "config", cfg) or {})


def _deployment_dict(cfg: Any) -> dict[str, Any]:
    """The judge's deployment mapping (an llm judge), else the judge config itself (replicas/resources top level)."""
    conf = _config_dict(cfg)
    dep = conf.get("deployment")
    return dict(dep) if isinstance(dep, Mapping) else conf


def _with_config(cfg: Any, conf: dict[str, Any]) -> Any:
    """``cfg`` (a plain dict or a ``JudgeSpec``) with its config replaced; a spec's typed deployment takes the
    replica's share of the limits (``concurrency``, ``rpm``, ``tpm``) by ``dataclasses.replace``: it is parsed once,
    by the judge catalog, never again."""
    if isinstance(cfg, Mapping):
        return conf
    import dataclasses

    changes: dict[str, Any] = {"config": conf}
    dep = getattr(cfg, "deployment", None)
    if dep is not None and isinstance(conf.get("deployment"), Mapping):
        lim = conf["deployment"].get("limits") or {}
        share = {k: lim[k] for k in ("concurrency", "rpm", "tpm") if k in lim}
        changes["deployment"] = dataclasses.replace(dep, limits=dataclasses.replace(dep.limits, **share))
    return dataclasses.replace(cfg, **changes)


#: ``replicas: auto``: one actor per this many requests in flight (an HTTP deployment in sync mode)
REQUESTS_PER_REPLICA = 32
#: backends whose calls go to a server over HTTP (the client's work is the SDK's request/response handling)
HTTP_BACKENDS = ("openai", "anthropic")


def _resource_list(dep: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``resources`` as a list (a single mapping -> one entry shared by every replica)."""
    res = dep.get("resources") or {}
    return [res] if isinstance(res, Mapping) else list(res)


def is_auto_replicas(cfg: Any) -> bool:
    """Whether the judge's replica count is left to ``auto_replicas`` (``replicas`` absent or ``"auto"`` and no
    per-replica ``resources`` list)."""
    dep = _deployment_dict(cfg)
    return dep.get("replicas") in (None, "auto") and len(_resource_list(dep)) <= 1


def auto_replicas(cfg: Any, concurrency: int, limit: int) -> int:
    """Replicas for ``replicas: auto``: ``max(1, min(concurrency // REQUESTS_PER_REPLICA, limit))`` for a deployment
    that calls a server over HTTP in sync mode and asks for no Ray resources; 1 for everything else (batch mode,
    offline and in-process judges, a deployment holding GPUs).

    Why: the SDK client's own work (building, sending and parsing each request: ~1-3 ms of CPU per call through
    openai/httpx/pydantic) makes one process the bottleneck at a few hundred requests per second.  Measured with
    ``benchmarks.bench_scale`` (NIST, 1,721 calls at 200 ms): one actor's judging time is 1.10x the bare script's at
    32 in flight but 1.24-1.26x at 64-128, where two replicas give 1.07x and 0.85x.  ``limit`` is the executor's
    share of the CPUs Ray reports (``RayExecutor``: CPUs // deployments), so auto never puts more actors than
    cores on the machine or cluster for this reason.  A replica costs one actor start (in parallel, ~1 s) and a
    process (~150 MB)."""
    dep = _deployment_dict(cfg)
    if dep.get("backend") not in HTTP_BACKENDS or dep.get("mode", "sync") != "sync" or any(_resource_list(dep)):
        return 1
    return max(1, min(int(concurrency) // REQUESTS_PER_REPLICA, int(limit)))


def replica_plan(cfg: Any, concurrency: int, auto_limit: int = 1) -> list[tuple[dict[str, float], int, Any]]:
    """One (ray resources, max_concurrency, worker config) per replica of a judge deployment.

    The deployment's limits are *shared*: its ``concurrency`` is split so the replicas' sum equals it (each at
    least 1: replica ``i`` gets ``C // N + (i < C % N)``), and ``rpm``/``tpm`` are divided by ``N``; so N
    replicas never send more than the one deployment would.  ``resources`` is a mapping for every replica or a
    list with one mapping per replica (custom node resources pin replicas to nodes); CPUs default to 0.
    ``replicas: auto`` (the default) is ``auto_replicas(cfg, concurrency, auto_limit)``.
    """
    conf = _config_dict(cfg)
    dep = _deployment_dict(cfg)
    res = _resource_list(dep)
    if is_auto_replicas(cfg):
        n = auto_replicas(cfg, concurrency, auto_limit)
    else:
        n = dep.get("replicas")
        n = len(res) if n in (None, "auto") else n  # a per-replica resources list: one replica per mapping
        if isinstance(n, bool) or not isinstance(n, int):
            raise ConfigError(f"judge {conf.get('name', '?')}: replicas must be an integer >= 1 or 'auto', got {n!r}")
    if n < 1 or len(res) not in (1, n):
        raise ConfigError(f"judge {conf.get('name', '?')}: replicas={n} with {len(res)} resource mappings")
    out = []
    for i in range(n):
        conc = max(1, concurrency // n + (1 if i < concurrency % n else 0))
        rconf = conf
        if n > 1 and isinstance(conf.get("deployment"), Mapping):
            d = dict(conf["deployment"])
            lim = dict(d.get("limits") or {})
            lim["concurrency"] = conc
            for k in ("rpm", "tpm"):
                if lim.get(k):
                    lim[k] = float(lim[k]) / n
            d["limits"] = lim
            rconf = {**conf, "deployment": d}
        out.append(({k: float(v) for k, v in dict(res[i] if len(res) > 1 else res[0]).items()}, conc,
                    _with_config(cfg, rconf) if rconf is not conf else cfg))
    return out


def _actor_options(resources: Mapping[str, float], conc: int) -> dict[str, Any]:
    res = dict(resources)
    opts: dict[str, Any] = {"max_concurrency": max(1, conc), "max_restarts": 3,
                            "num_cpus": res.pop("num_cpus", 0), "num_gpus": res.pop("num_gpus", 0)}
    if "memory" in res:
        opts["memory"] = res.pop("memory")
    if res:
        opts["resources"] = res
    return opts


#: seconds before a probe answered ``ActorUnavailableError`` (a replica restarting) is sent again
PROBE_RETRY_S = 0.5
#: jobs that take an actor less than this (seconds, smoothed) go out in chunks of up to CHUNK_MAX per remote call
CHUNK_BELOW_S = 0.002
CHUNK_MAX = 64
#: other jobs (a model call each) go out in chunks of up to ``cap // SLOW_CHUNK_DIV`` (a replica holding 512 jobs
#: gets them 32 at a time; one holding fewer than 32 gets them one by one)
SLOW_CHUNK_DIV = 16


@dataclass
class _Replica:
    wid: str
    index: int
    handle: Any
    cap: int
    in_flight: int = 0
    #: up once its actor answered a probe (constructed): an actor that cannot be placed gets no work
    up: bool = False
    dead: bool = False
    down_since: float = field(default_factory=time.monotonic)


class RayExecutor:
    """Async Ray actors per judge deployment: ``replicas`` of them (see the module docstring and ``replica_plan``).

    Jobs go to the live replica of their deployment with the fewest in flight (each holds at most
    ``2 x max_concurrency``); a replica is live once its actor has answered a probe, so a replica whose resources
    no node offers (its node is gone) never receives work.  A replica whose call fails with an actor error stops receiving work; its job is
    resubmitted (``max_job_retries``) to another replica; a probe brings it back once Ray has restarted it, and
    it is given up for good when the probe says the actor is dead (``ActorDiedError``; a probe answered
    ``ActorUnavailableError`` - the kill not yet known to Ray - is sent again).  When no replica of a deployment is up for
    ``restart_timeout_s`` the remaining jobs are reported as failed (data: a rerun retries them), never lost.

    On a cluster (``address``) the package is shipped with ``cluster_runtime_env``, each actor receives only its
    judge's key variable (``_Secrets``), and the response cache is the driver's (``metaeval.pipeline.ray_cache``).
    ``placements`` lists (worker id, replica, node id, pid) of the actors this executor started.
    """

    name = "ray"

    def __init__(self, make_worker: Callable[[Any], Worker], worker_configs: dict[str, Any],
                 concurrency: dict[str, int], address: str | None = None, num_cpus: int | None = None,
                 max_job_retries: int = 3, ship_package: bool = True, runtime_env: Mapping[str, Any] | None = None,
                 shared_cache: bool | None = None, restart_timeout_s: float = 60.0,
                 prefetch: Mapping[str, int] | None = None):
        self.make_worker = make_worker
        self.prefetch = dict(prefetch or {})
        self.worker_configs = worker_configs
        self.concurrency = concurrency
        self.address = address
        self.num_cpus = num_cpus
        self.max_job_retries = max_job_retries
        self.ship_package = ship_package
        self.runtime_env = dict(runtime_env or {})
        #: one driver-owned cache actor (default: on a cluster); off -> each actor opens the cache path itself
        self.shared_cache = bool(address) if shared_cache is None else bool(shared_cache)
        self.restart_timeout_s = restart_timeout_s
        self._replicas: dict[str, list[_Replica]] = {}
        self._cache_actors: dict[str, Any] = {}
        self._service: dict[str, float] = {}
        #: remote calls made (a chunk of jobs is one call)
        self.remote_calls = 0
        #: seconds from the first actor started to the last one answering its probe (actor start, all deployments)
        self.actor_start_s: float | None = None
        self._t_actors: float | None = None
        self._auto_cap: int | None = None
        self.placements: list[dict[str, Any]] = []

    @classmethod
    def from_runtime(cls, make_worker: Callable[[Any], Worker], worker_configs: dict[str, Any],
                     concurrency: dict[str, int], runtime: Any,
                     prefetch: Mapping[str, int] | None = None) -> "RayExecutor":
        """From the typed ``runtime`` settings (``metaeval.pipeline.settings.RuntimeSettings``)."""
        return cls(make_worker, worker_configs, concurrency, prefetch=prefetch, address=runtime.address,
                   num_cpus=runtime.num_cpus, max_job_retries=runtime.max_job_retries,
                   ship_package=runtime.ship_package, runtime_env=runtime.runtime_env,
                   shared_cache=runtime.shared_cache, restart_timeout_s=runtime.restart_timeout_s)

    # ------------------------------------------------------------------ actors
    def _secrets(self, cfg: Any) -> _Secrets | None:
        if not self.address:
            return None  # local actors inherit the driver's environment
        dep = _deployment_dict(cfg)
        names = [n for n in (dep.get("api_key_env"), *FORWARDED_ENV) if n and os.environ.get(n)]
        return _Secrets({n: os.environ[n] for n in names})

    def _cached(self, cfg: Any) -> Any:
        """``cfg`` with its cache path replaced by the driver-owned cache actor's proxy (``shared_cache``)."""
        conf = _config_dict(cfg)
        path = conf.get("cache")
        if not self.shared_cache or not isinstance(path, (str, os.PathLike)):
            return cfg
        from metaeval.pipeline.ray_cache import start_cache_actor

        key = str(Path(path).expanduser().resolve())
        if key not in self._cache_actors:
            self._cache_actors[key] = start_cache_actor(key)
        return _with_config(cfg, {**conf, "cache": self._cache_actors[key][1]})

    def _start(self, wid: str) -> list[_Replica]:
        import ray

        if wid not in self._replicas:
            if self._t_actors is None:
                self._t_actors = time.perf_counter()
            cfg = self._cached(self.worker_configs[wid])
            reps = []
            plan = replica_plan(cfg, max(1, self.concurrency.get(wid, 1)), self._auto_limit())
            # auto replicas go to different nodes where there are several (explicit ones follow their resources)
            spread = {"scheduling_strategy": "SPREAD"} if len(plan) > 1 and is_auto_replicas(cfg) else {}
            extra = max(0, int(self.prefetch.get(wid, 0)))
            for i, (res, conc, rcfg) in enumerate(plan):
                # jobs the actor runs at once: its share of the deployment's concurrency (the client's limiter
                # caps the requests) plus its share of the prefetch
                slots = conc + extra // len(plan) + (1 if i < extra % len(plan) else 0)
                handle = ray.remote(_WorkerActor).options(**_actor_options(res, slots), **spread).remote(
                    self.make_worker, rcfg, self._secrets(rcfg), f"{wid}#{i}", slots)
                reps.append(_Replica(wid, i, handle, 2 * slots))
            self._replicas[wid] = reps
        return self._replicas[wid]

    @property
    def actor_count(self) -> int:
        """Actors this executor started and saw ready: each (deployment, replica) once, however often restarted."""
        return len({(p["worker"], p["replica"]) for p in self.placements})

    def _auto_limit(self) -> int:
        """Most replicas ``replicas: auto`` may give one deployment: the CPUs Ray reports (this machine, or the
        whole cluster) shared equally by the executor's deployments, at least 1."""
        if self._auto_cap is None:
            import ray

            cpus = int(ray.cluster_resources().get("CPU", 1))
            self._auto_cap = max(1, cpus // max(1, len(self.worker_configs)))
        return self._auto_cap

    def _observe(self, wid: str, per_job_s: float) -> None:
        """Exponentially weighted mean of the actor-side seconds per job (what chunking keys on)."""
        prev = self._service.get(wid)
        self._service[wid] = per_job_s if prev is None else 0.8 * prev + 0.2 * per_job_s

    def _chunk(self, wid: str, rep: _Replica, remaining: int, live: int) -> int:
        """Jobs per remote call.  Each call costs ~1 ms of CPU across driver and actor (two processes on the
        same cores as the client), which at 64-128 requests in flight is a fifth of the run; so jobs go out in
        chunks the actor runs concurrently (under its slots, the client's limiter capping the requests):

        * cheap jobs (under ``CHUNK_BELOW_S`` each once measured, e.g. an offline or simulated judge): up to
          ``CHUNK_MAX``, at most half the replica's capacity;
        * others (a model call each): ``cap // SLOW_CHUNK_DIV`` (at least 1), so the replica keeps most of its
          capacity in small chunks and its slots stay busy while a chunk waits for its slowest job;
        * never more than an equal share of the remaining jobs over twice the live replicas (the replicas share
          the work, and the last chunks stay small).

        A chunk's results reach the store together, when its last job ends: a stop (Ctrl-C, SIGTERM, a dead
        node) loses the finished jobs of unreturned chunks, whose replies are in the response cache (a rerun
        sends no request for them)."""
        s = self._service.get(wid)
        size = max(1, min(CHUNK_MAX, rep.cap // 2)) if s is not None and s < CHUNK_BELOW_S else rep.cap // SLOW_CHUNK_DIV
        return max(1, min(size, -(-remaining // (2 * max(1, live)))))

    def _pick(self, wid: str) -> _Replica | None:
        live = [r for r in self._start(wid) if r.up and r.in_flight < r.cap]
        return min(live, key=lambda r: (r.in_flight / r.cap, r.index)) if live else None

    # ------------------------------------------------------------------ run
    def run(self, jobs: Sequence[Job], on_result: OnResult) -> None:
        import ray
        from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

        actor_errors = (ActorDiedError, ActorUnavailableError, RayActorError)
        init_ray(self.address, self.num_cpus,
                 cluster_runtime_env(self.ship_package, self.runtime_env) if self.address else None)
        install_sigterm()  # ray.init replaced our SIGTERM handler with sys.exit (a C++ stack dump mid-ray.wait)
        pending: dict[str, list[Job]] = {}
        for job in jobs:
            pending.setdefault(job.worker_id, []).append(job)
        for lst in pending.values():
            lst.reverse()  # pop() from the end keeps submission order
        in_flight: dict[Any, tuple[list[Job], _Replica, float]] = {}
        probes: dict[Any, _Replica] = {}
        reprobe: list[tuple[float, _Replica]] = []  # (when, replica): probes answered "unavailable", to resend
        attempts: dict[str, int] = {}
        for wid in pending:
            for rep in self._start(wid):
                probes[rep.handle.where.remote()] = rep

        def fill() -> None:
            for wid, lst in pending.items():
                while lst:
                    rep = self._pick(wid)
                    if rep is None:
                        break
                    live = sum(r.up for r in self._replicas[wid])
                    k = min(self._chunk(wid, rep, len(lst), live), len(lst), rep.cap - rep.in_flight)
                    chunk = [lst.pop() for _ in range(max(1, k))]
                    ref = rep.handle.run_many.remote([(j.stage, j.payload) for j in chunk])
                    in_flight[ref] = (chunk, rep, time.perf_counter())
                    self.remote_calls += 1
                    rep.in_flight += len(chunk)

        def give_up_stalled() -> None:
            """Fail (as data) the jobs of deployments with no replica up for ``restart_timeout_s``."""
            now = time.monotonic()
            for wid, lst in pending.items():
                reps = self._replicas.get(wid, [])
                if not lst or any(r.up for r in reps):
                    continue
                if all(r.dead for r in reps) or now - max(r.down_since for r in reps) > self.restart_timeout_s:
                    err = RuntimeError(f"no replica of {wid} is available (all died or restarting > "
                                       f"{self.restart_timeout_s:g}s); {len(lst)} job(s) not run")
                    log.error("%s", err)
                    while lst:
                        on_result(lst.pop(), err)

        fill()
        while in_flight or any(pending.values()):
            now = time.monotonic()
            for item in [x for x in reprobe if x[0] <= now]:
                reprobe.remove(item)
                probes[item[1].handle.where.remote()] = item[1]
            refs = list(in_flight) + list(probes)
            if not refs:  # every replica down, its next probe not due yet
                time.sleep(PROBE_RETRY_S)
            done, rest = ray.wait(refs, num_returns=1, timeout=1.0) if refs else ([], [])
            if done and rest:  # everything else already finished too: one round trip instead of one per job
                done += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
            for ref in done:
                if ref in probes:
                    rep = probes.pop(ref)
                    try:
                        node, pid = ray.get(ref)
                        placed = self.actor_count
                        self.placements.append({"worker": rep.wid, "replica": rep.index, "node": node, "pid": pid})
                        first = self.actor_count > placed
                        rep.up = True
                        if first and self._t_actors is not None:  # a restarted replica is not the actors' start
                            self.actor_start_s = time.perf_counter() - self._t_actors
                    except ActorUnavailableError:
                        # not reachable yet: a probe sent right after a kill can reach the dead process before
                        # Ray knows it died; ask again shortly (``give_up_stalled`` bounds the wait)
                        reprobe.append((time.monotonic() + PROBE_RETRY_S, rep))
                    except actor_errors:
                        rep.dead, rep.up = True, False
                    continue
                chunk, rep, _t0 = in_flight.pop(ref)
                rep.in_flight -= len(chunk)
                try:
                    results, busy_s = ray.get(ref)
                    self._observe(rep.wid, busy_s / len(chunk))
                except actor_errors as exc:
                    if rep.up:  # stop sending to it; a probe brings it back when Ray has restarted it
                        rep.up, rep.down_since = False, time.monotonic()
                        log.warning("replica %s#%d of %s failed (%s); probing it", rep.wid, rep.index, rep.wid,
                                    type(exc).__name__)
                        probes[rep.handle.where.remote()] = rep
                    for job in chunk:
                        attempts[job.key] = attempts.get(job.key, 0) + 1
                        if attempts[job.key] <= self.max_job_retries:
                            log.warning("worker %s died during job %s; retrying (%d)", rep.wid, job.key,
                                        attempts[job.key])
                            pending[job.worker_id].append(job)
                        else:
                            on_result(job, exc)
                    continue
                except Exception as exc:
                    results = [exc] * len(chunk)
                for job, result in zip(chunk, results):
                    on_result(job, result)
            give_up_stalled()
            fill()

    def shutdown(self) -> None:
        import ray

        handles = [r.handle for reps in self._replicas.values() for r in reps]
        handles += [h for h, _ in self._cache_actors.values()]
        for actor in handles:
            try:
                ray.kill(actor)
            except Exception:  # already gone
                pass
        self._replicas.clear()
        self._cache_actors.clear()


class _WorkerActor:
    """Ray actor body: builds its worker once and runs payloads on the actor's event loop."""

    def __init__(self, make_worker: Callable[[Any], Worker], config: Any, secrets: _Secrets | None = None,
                 replica: str = "", concurrency: int = 1):
        if secrets is not None:
            secrets.apply()
        self.replica = replica
        self.concurrency = max(1, int(concurrency))
        self._sem: asyncio.Semaphore | None = None
        self.worker = make_worker(config)
        warm = getattr(self.worker, "warm", None)
        if warm is not None:  # the judge's SDK imported now: the probe answers when the actor can take work
            warm()
        import ray

        self.node = ray.get_runtime_context().get_node_id()

    async def run(self, stage: str, payload: dict[str, Any]) -> dict[str, Any]:
        result = await self.worker.run(stage, payload)
        if isinstance(result, dict) and isinstance(result.get("stats"), dict):
            result["stats"]["ray"] = {"node": self.node, "replica": self.replica}  # where it ran (jobs.jsonl)
        return result

    async def run_many(self, items: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], float]:
        """Run a chunk of jobs (at most ``concurrency`` at once over all calls); returns (results, the seconds
        its jobs ran, summed - time waiting for a free slot behind other calls' jobs is not counted, so the
        driver's per-job figure is the job's own service time, which is what chunking keys on).
        A job's exception is returned as its result (a failed job is data), pickle-safe."""
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.concurrency)
        ran = [0.0]

        async def one(stage: str, payload: dict[str, Any]) -> Any:
            async with self._sem:
                t0 = time.perf_counter()
                try:
                    return await self.run(stage, payload)
                except Exception as exc:  # noqa: BLE001 - reported to the driver as data
                    return _portable(exc)
                finally:
                    ran[0] += time.perf_counter() - t0

        results = list(await asyncio.gather(*(one(s, p) for s, p in items)))
        return results, ran[0]

    def where(self) -> tuple[str, int]:
        return self.node, os.getpid()

    def pid(self) -> int:
        return os.getpid()


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives pickling (it crosses to the driver), else a RuntimeError with its type and text."""
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - e.g. an exception whose __init__ takes extra arguments
        return RuntimeError(f"{type(exc).__name__}: {exc}")


EXECUTORS: dict[str, type] = {"serial": AsyncioExecutor, "ray": RayExecutor}
