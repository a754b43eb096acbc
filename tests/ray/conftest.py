"""Shared fixture of the Ray tier: a local Ray runtime on loopback (module-scoped)."""

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def ray_runtime():
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    # actors import tests.helpers from the repository root
    root = str(Path(__file__).resolve().parents[2])
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    from metaeval.pipeline.ray_setup import init_ray

    init_ray(num_cpus=2)
    import ray

    yield ray
    ray.shutdown()
