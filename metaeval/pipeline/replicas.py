"""Replicas of a judge deployment on Ray: how many (``replicas: auto`` or as configured), each one's share of the
deployment's limits, its Ray resources and actor options."""

from __future__ import annotations

from typing import Any, Mapping

from metaeval.errors import ConfigError


def judge_config_dict(cfg: Any) -> dict[str, Any]:
    return dict(getattr(cfg, "config", cfg) or {})


def deployment_dict(cfg: Any) -> dict[str, Any]:
    """The judge's deployment mapping (an llm judge), else the judge config itself (replicas/resources top level)."""
    conf = judge_config_dict(cfg)
    dep = conf.get("deployment")
    return dict(dep) if isinstance(dep, Mapping) else conf


def with_config(cfg: Any, conf: dict[str, Any]) -> Any:
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


def resource_list(dep: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``resources`` as a list (a single mapping -> one entry shared by every replica)."""
    res = dep.get("resources") or {}
    return [res] if isinstance(res, Mapping) else list(res)


def is_auto_replicas(cfg: Any) -> bool:
    """Whether the judge's replica count is left to ``auto_replicas`` (``replicas`` absent or ``"auto"`` and no
    per-replica ``resources`` list)."""
    dep = deployment_dict(cfg)
    return dep.get("replicas") in (None, "auto") and len(resource_list(dep)) <= 1


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
    dep = deployment_dict(cfg)
    if dep.get("backend") not in HTTP_BACKENDS or dep.get("mode", "sync") != "sync" or any(resource_list(dep)):
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
    conf = judge_config_dict(cfg)
    dep = deployment_dict(cfg)
    res = resource_list(dep)
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
                    with_config(cfg, rconf) if rconf is not conf else cfg))
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
