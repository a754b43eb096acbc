"""The cluster tier's fixture: a real two-node Ray cluster on loopback (``metaeval.testing.cluster``), stopped
at the end by killing only the processes it started; the test fails if any of them is left running."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaeval.testing.cluster import LoopbackCluster, group_pids


@pytest.fixture
def loopback_cluster(tmp_path):
    if not Path("/proc/self/stat").exists():  # pragma: no cover - the process bookkeeping reads /proc (Linux)
        pytest.skip("the loopback cluster finds its processes through /proc (Linux only)")
    cluster = LoopbackCluster(tmp_path).start()
    try:
        yield cluster
    finally:
        cluster.stop()
        leftovers = {n: group_pids(g) for n, g in cluster.groups.items()}
        leftovers["naming its temp dir"] = cluster.cluster_pids()
        assert not any(leftovers.values()), f"processes of the test cluster left running: {leftovers}"
