"""The cluster tier's fixture: a real two-node Ray cluster on loopback (``metaeval.testing.cluster``), stopped
at the end by killing only the processes it started; the test fails if any of them is left running."""

from __future__ import annotations

import pytest

from metaeval.testing.cluster import LoopbackCluster, group_pids


@pytest.fixture
def loopback_cluster(tmp_path):
    cluster = LoopbackCluster(tmp_path).start()
    try:
        yield cluster
    finally:
        cluster.stop()
        leftovers = {n: group_pids(g) for n, g in cluster.groups.items()}
        leftovers["naming its temp dir"] = cluster.cluster_pids()
        assert not any(leftovers.values()), f"processes of the test cluster left running: {leftovers}"
