"""A sweep on a real two-node Ray cluster (loopback): replicas pinned to both nodes, the worker node killed
mid-run, labels equal to the serial executor's, and a rerun that makes no call thanks to the driver's cache.

Bounded: the cluster starts in ~30 s on a loaded 2-core machine; every subprocess has a timeout; the fixture
kills only the process groups it started (see conftest.py).
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from metaeval.testing.server import ChatTestServer, Faults

pytestmark = pytest.mark.cluster

CELL = "testserver__v1__human_auto"


def sweep_cmd(results: Path, name: str, base_url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "grid=single", "judge=testserver",
            "strategy=human_auto", f"judge.deployment.base_url={base_url}", "calibration.enabled=false",
            "analysis.bootstrap=0", f"results_dir={results}", f"name={name}", *extra]


def job_records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # the line being written
            pass
    return out


def _files_containing(root: Path, needle: bytes) -> list[str]:
    hits = []
    for p in root.rglob("*"):
        try:
            if p.is_file() and not p.is_symlink() and needle in p.read_bytes():
                hits.append(str(p))
        except OSError:
            pass
    return hits


def test_sweep_on_two_nodes_survives_losing_the_worker(loopback_cluster, tmp_path):
    # the API key: only in the DRIVER's environment (the nodes were started without it); the server accepts only it
    key = "sk-h8cluster-" + uuid.uuid4().hex
    env = {**loopback_cluster.env, "H8_CLUSTER_KEY": key}
    keyed = ["judge.deployment.api_key_env=H8_CLUSTER_KEY"]
    with ChatTestServer(faults=Faults(latency_s=0.25), expected_key=key) as srv:
        # the reference: the serial executor, its own results folder and cache
        ref = subprocess.run(sweep_cmd(tmp_path / "serial", "s", srv.openai_base_url, "runtime=serial", *keyed),
                             capture_output=True, text=True, timeout=300, env=env)
        assert ref.returncode == 0, ref.stderr[-3000:]
        n_jobs = len(job_records(tmp_path / "serial" / "s" / "jobs.jsonl"))
        assert n_jobs >= 40

        # two replicas, one pinned to each node, one request in flight each (so the run lasts a few seconds)
        srv.reset_counts()
        cluster = ["runtime=ray_cluster", f"runtime.address={loopback_cluster.address}", "runtime.restart_timeout_s=30",
                   "+judge.deployment.resources=[{head_node:0.01},{worker_node:0.01}]",
                   "judge.deployment.limits.concurrency=2", *keyed]
        jobs = tmp_path / "cluster" / "c" / "jobs.jsonl"
        # a RELATIVE results_dir (so a relative cache path): actors opening it themselves would write into their
        # own working folders; the driver-owned cache actor resolves it in the driver's (tmp_path)
        proc = subprocess.Popen(sweep_cmd(Path("cluster"), "c", srv.openai_base_url, *cluster), cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        killed_at = None
        deadline = time.monotonic() + 300
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                recs = job_records(jobs)
                replicas = {r["stats"].get("ray", {}).get("replica", "")[-2:] for r in recs}
                if killed_at is None and len(recs) >= n_jobs // 4 and {"#0", "#1"} <= replicas:
                    loopback_cluster.kill("worker")  # the worker node dies with jobs in flight
                    killed_at = len(job_records(jobs))
                time.sleep(0.2)
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, err[-3000:]
        assert killed_at is not None and killed_at < n_jobs, "the worker node was not killed mid-run"

        recs = job_records(jobs)
        per_key = collections.Counter(r["key"] for r in recs)
        assert len(per_key) == n_jobs and set(per_key.values()) == {1}  # none lost, none recorded twice
        assert all(r["status"] == "done" for r in recs)
        nodes = collections.Counter(r["stats"]["ray"]["node"] for r in recs)
        assert len(nodes) == 2, nodes  # actors ran on both nodes
        after = [r["stats"]["ray"]["replica"] for r in recs[killed_at + 2:]]
        assert after and all(rep.endswith("#0") for rep in after)  # after the kill: the head's replica only
        serial_labels = (tmp_path / "serial" / "s" / "cells" / CELL / "labels.jsonl").read_text(encoding="utf-8")
        cluster_labels = (tmp_path / "cluster" / "c" / "cells" / CELL / "labels.jsonl").read_text(encoding="utf-8")
        assert cluster_labels == serial_labels

        # a new sweep folder on the (now head-only) cluster: every reply, including those fetched by the dead
        # worker's actor, is in the driver's cache -> no request reaches the server
        srv.reset_counts()
        rerun = subprocess.run(sweep_cmd(Path("cluster"), "c2", srv.openai_base_url, *cluster[:3], *keyed,
                                         "+judge.deployment.resources={head_node:0.01}"),
                               capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert srv.counts["requests"] == 0, dict(srv.counts)
        again = (tmp_path / "cluster" / "c2" / "cells" / CELL / "labels.jsonl").read_text(encoding="utf-8")
        assert again == serial_labels
        assert srv.counts["401"] == 0  # every actor, on both nodes, had the key

    # the key reached the actors as an argument, not through a runtime_env: no Ray log or file on either node (the
    # worker node writes under the head's temp dir) and nothing in the results holds it
    temp = Path(loopback_cluster.temp_dir)
    assert len(list(temp.rglob("raylet*.out"))) >= 2  # both nodes' logs are under the scanned folder
    assert _files_containing(temp, key.encode()) == []
    assert _files_containing(tmp_path, key.encode()) == []
