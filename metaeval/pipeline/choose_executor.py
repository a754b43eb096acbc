"""Which executor runs a sweep's jobs, and the executor itself built from the typed runtime settings."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from metaeval.errors import ConfigError
from metaeval.pipeline.executors import AsyncioExecutor
from metaeval.pipeline.ray_executor import RayExecutor
from metaeval.pipeline.settings import RuntimeSettings

#: ``runtime.executor`` -> executor class (``auto`` is resolved first: :func:`resolve_executor`)
EXECUTORS: dict[str, type] = {"serial": AsyncioExecutor, "ray": RayExecutor}


def resolve_executor(kind: str, judges: Sequence[Any]) -> str:
    """``runtime.executor=auto`` (the default runtime) on one machine: Ray when the grid's judges call two or more
    model-server deployments (one actor process per deployment) or a deployment asks for what only Ray gives
    (``replicas`` > 1, ``resources`` such as GPUs); otherwise the in-process asyncio executor.  One deployment's
    network-bound calls need no second process: measured with ``benchmarks.bench_scale`` (NIST, 1,721 calls,
    32/64/128 in flight), the serial executor's judging time is 0.96-1.02x the bare SDK script's and Ray's
    0.85-1.09x (``replicas: auto``), before Ray's own start (4-6 s on 2 cores); offline judges (lexical,
    simulated, embedding, local LLM) would likewise only pay that start."""
    if kind != "auto":
        return kind
    deps = [j.deployment for j in judges if getattr(j, "deployment", None) is not None]
    # replicas: auto never asks for Ray by itself (it adds actors only on a Ray runtime)
    needs_ray = any(isinstance(r := getattr(d, "replicas", 1), int) and r > 1 or getattr(d, "resources", None)
                    for d in deps)
    return "ray" if needs_ray or len({getattr(d, "name", id(d)) for d in deps}) >= 2 else "serial"


def make_executor(runtime: RuntimeSettings, cells: Sequence[Any], make_worker: Callable[[Any], Any]):
    """The executor for ``cells`` (the active cells of a sweep): ``runtime.executor`` (``auto``: see
    :func:`resolve_executor`), one worker per judge deployment built from its typed ``JudgeSpec``."""
    kind = resolve_executor(runtime.executor, [c.judge for c in cells])
    if kind not in EXECUTORS:
        raise ConfigError(f"runtime.executor={kind!r}; expected one of {', '.join(EXECUTORS)}")
    configs = {c.worker_id: c.judge for c in cells}  # typed JudgeSpecs: the workers build from them
    conc = {c.worker_id: c.judge.concurrency for c in cells}
    # judges calling a deployment in sync mode: the client's limiter holds the requests to the deployment's
    # concurrency, so as many jobs again may be in progress (executors: ``prefetch``); others run exactly
    # ``concurrency`` jobs at once
    prefetch = {c.worker_id: c.judge.concurrency for c in cells
                if getattr(c.judge, "deployment", None) is not None
                and getattr(c.judge.deployment, "mode", "sync") == "sync"}
    if kind == "ray":  # replicas, runtime_env, cache actor
        return EXECUTORS[kind].from_runtime(make_worker, configs, conc, runtime, prefetch=prefetch)
    return EXECUTORS[kind](make_worker, configs, conc, prefetch=prefetch)
