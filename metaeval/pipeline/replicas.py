"""Replicas of a judge deployment on Ray: how many (``replicas: auto`` or as configured), each one's share of the
deployment's limits, its Ray resources and actor options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from metaeval.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.judges.config import Deployment


def judge_config_dict(cfg: Any) -> dict[str, Any]:
    return dict(getattr(cfg, "config", cfg) or {})


def deployment_of(cfg: Any) -> "Deployment | None":
    """The typed deployment of a worker config: a ``JudgeSpec``'s (the catalog typed it once), or - for a plain
    config mapping holding a ``deployment`` mapping - that mapping typed; None for a judge without one."""
    dep = getattr(cfg, "deployment", None)
    if dep is not None or not isinstance(cfg, Mapping):
        return dep
    raw = cfg.get("deployment")
    if raw is None:
        return None
    from metaeval.judges.config import Deployment

    return Deployment.from_dict(raw, where=f"judge {cfg.get('name', '?')}: deployment")


def _placement(cfg: Any) -> tuple[Any, list[Mapping[str, Any]], bool]:
    """(``replicas`` as configured, ``resources`` as a list, whether ``replicas: auto`` may spread it): from the typed
    deployment, or the top-level keys of a judge without one (an in-process or offline judge: never spread)."""
    dep = deployment_of(cfg)
    if dep is None:
        conf = judge_config_dict(cfg)
        res = conf.get("resources") or {}
        return conf.get("replicas"), [res] if isinstance(res, Mapping) else list(res), False
    from metaeval.judges.backends import backend_named

    res = dep.resources or {}
    res_list = [res] if isinstance(res, Mapping) else list(res)
    spreadable = backend_named(dep.backend).http and dep.mode == "sync" and not any(res_list)
    return dep.replicas, res_list, spreadable


def with_config(cfg: Any, conf: dict[str, Any]) -> Any:
    """``cfg`` (a plain dict or a ``JudgeSpec``) with its config replaced (a spec's ``deployment`` stays typed)."""
    if isinstance(cfg, Mapping):
        return conf
    import dataclasses

    return dataclasses.replace(cfg, config=conf)


#: ``replicas: auto``: one actor per this many requests in flight (an HTTP deployment in sync mode)
REQUESTS_PER_REPLICA = 32


def is_auto_replicas(cfg: Any) -> bool:
    """Whether the judge's replica count is left to ``auto_replicas`` (``replicas`` absent or ``"auto"`` and no
    per-replica ``resources`` list)."""
    replicas, res, _ = _placement(cfg)
    return replicas in (None, "auto") and len(res) <= 1


def auto_replicas(cfg: Any, concurrency: int, limit: int) -> int:
    """Replicas for ``replicas: auto``: ``max(1, min(concurrency // REQUESTS_PER_REPLICA, limit))`` for a deployment
    whose backend calls a server over HTTP (the backend's ``http``) in sync mode and asks for no Ray resources; 1
    for everything else (batch mode, offline and in-process judges, a deployment holding GPUs).

    Why: the SDK client's own work (building, sending and parsing each request: ~1-3 ms of CPU per call through
    openai/httpx/pydantic) makes one process the bottleneck at a few hundred requests per second.  Measured with
    ``benchmarks.bench_scale`` (NIST, 1,721 calls at 200 ms): one actor's judging time is 1.10x the bare script's at
    32 in flight but 1.24-1.26x at 64-128, where two replicas give 1.07x and 0.85x.  ``limit`` is the executor's
    share of the CPUs Ray reports (``RayExecutor``: CPUs // deployments), so auto never puts more actors than
    cores on the machine or cluster for this reason.  A replica costs one actor start (in parallel, ~1 s) and a
    process (~150 MB)."""
    if not _placement(cfg)[2]:
        return 1
    return max(1, min(int(concurrency) // REQUESTS_PER_REPLICA, int(limit)))


def _share(cfg: Any, conc: int, n: int) -> Any:
    """The worker config of one of ``n`` replicas: the deployment's concurrency ``conc`` and ``rpm``/``tpm``
    divided by ``n`` (a spec: its typed deployment replaced; a plain mapping: its deployment mapping)."""
    dep = deployment_of(cfg)
    if dep is None:
        return cfg
    share: dict[str, Any] = {"concurrency": conc}
    for k in ("rpm", "tpm"):
        if getattr(dep.limits, k):
            share[k] = float(getattr(dep.limits, k)) / n
    if not isinstance(cfg, Mapping):
        return cfg.with_deployment(limits=share)
    conf = dict(cfg)
    d = dict(conf["deployment"])
    d["limits"] = {**dict(d.get("limits") or {}), **share}
    return {**conf, "deployment": d}


def replica_plan(cfg: Any, concurrency: int, auto_limit: int = 1) -> list[tuple[dict[str, float], int, Any]]:
    """One (ray resources, max_concurrency, worker config) per replica of a judge deployment.

    The deployment's limits are *shared*: its ``concurrency`` is split so the replicas' sum equals it (each at
    least 1: replica ``i`` gets ``C // N + (i < C % N)``), and ``rpm``/``tpm`` are divided by ``N``; so N
    replicas never send more than the one deployment would.  ``resources`` is a mapping for every replica or a
    list with one mapping per replica (custom node resources pin replicas to nodes); CPUs default to 0.
    ``replicas: auto`` (the default) is ``auto_replicas(cfg, concurrency, auto_limit)``.
    """
    conf = judge_config_dict(cfg)
    replicas, res, _ = _placement(cfg)
    if is_auto_replicas(cfg):
        n = auto_replicas(cfg, concurrency, auto_limit)
    else:
        n = len(res) if replicas in (None, "auto") else replicas  # a per-replica resources list: one per mapping
        if isinstance(n, bool) or not isinstance(n, int):
            raise ConfigError(f"judge {conf.get('name', '?')}: replicas must be an integer >= 1 or 'auto', got {n!r}")
    if n < 1 or len(res) not in (1, n):
        raise ConfigError(f"judge {conf.get('name', '?')}: replicas={n} with {len(res)} resource mappings")
    out = []
    for i in range(n):
        conc = max(1, concurrency // n + (1 if i < concurrency % n else 0))
        out.append(({k: float(v) for k, v in dict(res[i] if len(res) > 1 else res[0]).items()}, conc,
                    _share(cfg, conc, n) if n > 1 else cfg))
    return out


def actor_options(resources: Mapping[str, float], conc: int) -> dict[str, Any]:
    res = dict(resources)
    opts: dict[str, Any] = {"max_concurrency": max(1, conc), "max_restarts": 3,
                            "num_cpus": res.pop("num_cpus", 0), "num_gpus": res.pop("num_gpus", 0)}
    if "memory" in res:
        opts["memory"] = res.pop("memory")
    if res:
        opts["resources"] = res
    return opts
