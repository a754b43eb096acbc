"""The Ray executor on a local runtime (loopback, 2 CPUs): same results as asyncio, backpressure, actor death."""

from __future__ import annotations

import os

import pytest

from metaeval.pipeline.executors import AsyncioExecutor, Job
from metaeval.pipeline.ray_executor import RayExecutor
from tests.helpers.workers import make_echo_worker

pytestmark = pytest.mark.ray


def _jobs(n, **extra):
    return [Job(key=str(i), worker_id=f"w{i % 2}", stage="assign", payload={"i": i, "sleep": 0.01, **extra}) for i in range(n)]


def test_ray_matches_asyncio(ray_runtime):
    configs = {"w0": {"name": "a"}, "w1": {"name": "b"}}
    conc = {"w0": 3, "w1": 2}
    out_ray, out_async = {}, {}
    RayExecutor(make_echo_worker, configs, conc).run(_jobs(30), lambda j, r: out_ray.__setitem__(j.key, r))
    AsyncioExecutor(make_echo_worker, configs, conc).run(_jobs(30), lambda j, r: out_async.__setitem__(j.key, r))
    strip = lambda d: {k: (v["i"], v["name"]) for k, v in d.items()}  # noqa: E731
    assert strip(out_ray) == strip(out_async) and len(out_ray) == 30
    assert all(v["pid"] != os.getpid() for v in out_ray.values())  # ran in actors
    assert max(v["peak"] for v in out_ray.values() if v["name"] == "b") <= 2


def test_dead_actor_is_restarted_and_its_jobs_retried(ray_runtime, tmp_path):
    marker = tmp_path / "died-once"
    jobs = [Job(key=str(i), worker_id="w", stage="assign", payload={"i": i, "sleep": 0.02, "die": str(marker) if i == 5 else None}) for i in range(12)]
    got = {}
    ex = RayExecutor(make_echo_worker, {"w": {"name": "w"}}, {"w": 2})
    ex.run(jobs, lambda j, r: got.__setitem__(j.key, r))
    assert marker.exists()
    # the restarted actor is placed again but counted once
    assert ex.actor_count == 1 and len(ex.placements) >= 1
    assert sorted(got, key=int) == [str(i) for i in range(12)]
    assert all(isinstance(v, dict) for v in got.values()), [v for v in got.values() if not isinstance(v, dict)]
