"""``RayExecutor``: async Ray actors per judge deployment (``runtime=ray_local`` / ``ray_cluster``); see
``metaeval.pipeline.executors`` for the executor contract."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence


from metaeval.pipeline.executors import Job, OnResult, Worker
from metaeval.pipeline.ray_setup import FORWARDED_ENV, _Secrets, cluster_runtime_env, init_ray
from metaeval.pipeline.replicas import actor_options, judge_config_dict, deployment_of, with_config, is_auto_replicas, replica_plan
from metaeval.pipeline.signals import install_sigterm

log = logging.getLogger(__name__)


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


def _actor_errors() -> tuple[type, ...]:
    """Ray's errors for an actor that died or cannot be reached."""
    from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

    return (ActorDiedError, ActorUnavailableError, RayActorError)


@dataclass
class _RunState:
    """One ``RayExecutor.run``: jobs not sent yet per deployment, chunks in flight, probes, resend times, retries."""

    on_result: OnResult
    pending: dict[str, list[Job]] = field(default_factory=dict)
    #: remote call -> (its jobs, the replica, when sent)
    in_flight: dict[Any, tuple[list[Job], Any, float]] = field(default_factory=dict)
    probes: dict[Any, Any] = field(default_factory=dict)
    #: (when, replica): probes answered "unavailable", to resend
    reprobe: list[tuple[float, Any]] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)


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
        #: seconds this executor spent starting (or joining) Ray itself (``init_ray``: GCS, raylet, agents); the
        #: sweep reports it apart from judging, as the runtime's start-up, not work on the jobs
        self.runtime_start_s = 0.0
        self.runtime_start_what = "Ray's start"
        #: the part of ``runtime_start_s`` spent waiting for the actors: from their launch until the first
        #: replica of a deployment with jobs is up (its worker process started, its judge built and the judge's
        #: SDK imported, what the bare-SDK baselines and the in-process executor do before their timers); 0 once
        #: they are up
        self.actors_start_s = 0.0
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
        dep = deployment_of(cfg)
        names = [n for n in (dep.api_key_env if dep else None, *FORWARDED_ENV) if n and os.environ.get(n)]
        return _Secrets({n: os.environ[n] for n in names})

    def _cached(self, cfg: Any) -> Any:
        """``cfg`` with its cache path replaced by the driver-owned cache actor's proxy (``shared_cache``)."""
        conf = judge_config_dict(cfg)
        path = conf.get("cache")
        if not self.shared_cache or not isinstance(path, (str, os.PathLike)):
            return cfg
        from metaeval.pipeline.ray_cache import start_cache_actor

        key = str(Path(path).expanduser().resolve())
        if key not in self._cache_actors:
            self._cache_actors[key] = start_cache_actor(key)
        return with_config(cfg, {**conf, "cache": self._cache_actors[key][1]})

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
                handle = ray.remote(_WorkerActor).options(**actor_options(res, slots), **spread).remote(
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
    def run(self, jobs: Sequence[Job], on_result: OnResult, when_draining: Callable[[], Any] | None = None) -> None:
        """Run ``jobs`` on the actors, calling ``on_result`` for each.  ``when_draining`` (the in-process
        executor's preparation for what follows the judging) is not called: this driver is not the one judging,
        and its imports do not wait on the judges' replies."""
        import ray

        t = time.perf_counter()
        init_ray(self.address, self.num_cpus,
                 cluster_runtime_env(self.ship_package, self.runtime_env) if self.address else None)
        self.runtime_start_s += time.perf_counter() - t
        install_sigterm()  # ray.init replaced our SIGTERM handler with sys.exit (a C++ stack dump mid-ray.wait)
        st = _RunState(on_result=on_result)
        for job in jobs:
            st.pending.setdefault(job.worker_id, []).append(job)
        for lst in st.pending.values():
            lst.reverse()  # pop() from the end keeps submission order
        for wid in st.pending:
            for rep in self._start(wid):
                st.probes[rep.handle.where.remote()] = rep
        t = time.perf_counter()
        self._await_first_replicas(st)
        waited = time.perf_counter() - t
        self.actors_start_s += waited
        self.runtime_start_s += waited
        if self.actors_start_s > 0:
            self.runtime_start_what = "Ray's start and its actors' start"
        self._fill(st)
        while st.in_flight or any(st.pending.values()):
            now = time.monotonic()
            for item in [x for x in st.reprobe if x[0] <= now]:
                st.reprobe.remove(item)
                st.probes[item[1].handle.where.remote()] = item[1]
            refs = list(st.in_flight) + list(st.probes)
            if not refs:  # every replica down, its next probe not due yet
                time.sleep(PROBE_RETRY_S)
            done, rest = ray.wait(refs, num_returns=1, timeout=1.0) if refs else ([], [])
            if done and rest:  # everything else already finished too: one round trip instead of one per job
                done += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
            for ref in done:
                if ref in st.probes:
                    self._probed(st, ref)
                else:
                    self._chunk_done(st, ref)
            self._give_up_stalled(st)
            self._fill(st)

    def _await_first_replicas(self, st: "_RunState") -> None:
        """Wait until the first job can go out: some deployment with pending jobs has a replica up, or no probe is
        outstanding (every replica answered dead or "unavailable": the main loop handles those as before), at most
        ``restart_timeout_s``.  This is the actors' start-up (``actors_start_s``), reported with Ray's start and
        not as judging; with replicas already up it costs nothing.  Other deployments' actors and further
        replicas go on starting while the first works (inside judging, as before), so one slow or unplaceable
        deployment holds up no other.  Probes answered meanwhile are handled as in the main loop
        (:meth:`_probed`): nothing differs after it but the clock."""
        import ray

        deadline = time.monotonic() + self.restart_timeout_s

        def waiting() -> bool:
            wanted = [wid for wid, lst in st.pending.items() if lst]
            up = any(r.up for wid in wanted for r in self._replicas.get(wid, []))
            return bool(wanted) and not up and bool(st.probes)

        while waiting() and time.monotonic() < deadline:
            done, _ = ray.wait(list(st.probes), num_returns=1, timeout=1.0)
            for ref in done:
                self._probed(st, ref)

    def _fill(self, st: "_RunState") -> None:
        """Send pending jobs, in chunks, to the least-loaded live replica of their deployment while it has room."""
        for wid, lst in st.pending.items():
            while lst:
                rep = self._pick(wid)
                if rep is None:
                    break
                live = sum(r.up for r in self._replicas[wid])
                k = min(self._chunk(wid, rep, len(lst), live), len(lst), rep.cap - rep.in_flight)
                chunk = [lst.pop() for _ in range(max(1, k))]
                ref = rep.handle.run_many.remote([(j.stage, j.payload) for j in chunk])
                st.in_flight[ref] = (chunk, rep, time.perf_counter())
                self.remote_calls += 1
                rep.in_flight += len(chunk)

    def _give_up_stalled(self, st: "_RunState") -> None:
        """Fail (as data) the jobs of deployments with no replica up for ``restart_timeout_s``."""
        now = time.monotonic()
        for wid, lst in st.pending.items():
            reps = self._replicas.get(wid, [])
            if not lst or any(r.up for r in reps):
                continue
            if all(r.dead for r in reps) or now - max(r.down_since for r in reps) > self.restart_timeout_s:
                err = RuntimeError(f"no replica of {wid} is available (all died or restarting > "
                                   f"{self.restart_timeout_s:g}s); {len(lst)} job(s) not run")
                log.error("%s", err)
                while lst:
                    st.on_result(lst.pop(), err)

    def _probed(self, st: "_RunState", ref: Any) -> None:
        """A probe answered: the replica is up (its placement recorded), restarting (probe again shortly) or dead."""
        import ray
        from ray.exceptions import ActorUnavailableError

        rep = st.probes.pop(ref)
        try:
            node, pid = ray.get(ref)
            placed = self.actor_count
            self.placements.append({"worker": rep.wid, "replica": rep.index, "node": node, "pid": pid})
            first = self.actor_count > placed
            rep.up = True
            if first and self._t_actors is not None:  # a restarted replica is not the actors' start
                self.actor_start_s = time.perf_counter() - self._t_actors
        except ActorUnavailableError:
            # not reachable yet: a probe sent right after a kill can reach the dead process before Ray knows it
            # died; ask again shortly (``_give_up_stalled`` bounds the wait)
            st.reprobe.append((time.monotonic() + PROBE_RETRY_S, rep))
        except _actor_errors():
            rep.dead, rep.up = True, False

    def _chunk_done(self, st: "_RunState", ref: Any) -> None:
        """A chunk finished: its results reported; if its replica died, the replica is probed and the chunk's jobs
        are resubmitted (at most ``max_job_retries`` times each, then reported as failed)."""
        import ray

        chunk, rep, _t0 = st.in_flight.pop(ref)
        rep.in_flight -= len(chunk)
        try:
            results, busy_s = ray.get(ref)
            self._observe(rep.wid, busy_s / len(chunk))
        except _actor_errors() as exc:
            if rep.up:  # stop sending to it; a probe brings it back when Ray has restarted it
                rep.up, rep.down_since = False, time.monotonic()
                log.warning("replica %s#%d of %s failed (%s); probing it", rep.wid, rep.index, rep.wid,
                            type(exc).__name__)
                st.probes[rep.handle.where.remote()] = rep
            for job in chunk:
                st.attempts[job.key] = st.attempts.get(job.key, 0) + 1
                if st.attempts[job.key] <= self.max_job_retries:
                    log.warning("worker %s died during job %s; retrying (%d)", rep.wid, job.key, st.attempts[job.key])
                    st.pending[job.worker_id].append(job)
                else:
                    st.on_result(job, exc)
            return
        except Exception as exc:
            results = [exc] * len(chunk)
        for job, result in zip(chunk, results):
            st.on_result(job, result)

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
