"""A multi-cell study as Ray tasks on a real two-node Ray cluster (loopback, one CPU per node): the cells run on
both nodes and every figure equals the one-process study's (``metaeval.study.fanout``, issue 34).

The driver is a subprocess joining the cluster with the nodes' environment (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=1``),
the package shipped to the nodes as a sweep ships it (``cluster_runtime_env``); the serial study runs in this
process.  Bounded: every subprocess has a timeout; the fixture kills only the processes it started.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.study_fanout import differences, study_input

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]


def test_study_on_two_nodes_equals_one_process(loopback_cluster, tmp_path):
    from metaeval.study.run import run_study

    run_study(study_input(tmp_path / "serial", 1))
    proc = subprocess.run([sys.executable, "-m", "tests.helpers.study_fanout", str(tmp_path / "cluster"),
                           "--address", loopback_cluster.address], capture_output=True, text=True, timeout=420,
                          env=loopback_cluster.env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runner = json.loads(proc.stdout.strip().splitlines()[-1])["runner"]
    assert len(runner) == 1 and "as Ray tasks on 2 node(s)" in runner[0], runner
    diffs = differences(tmp_path / "serial" / "fan", tmp_path / "cluster" / "fan")
    assert not diffs, diffs[:10]
