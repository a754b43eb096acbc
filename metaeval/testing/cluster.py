"""A real multi-node Ray cluster on loopback for tests and benchmarks: ``ray start`` processes this code started.

Each node is one ``ray start`` (head: custom resource ``head_node``; worker: ``worker_node``), run in its own
process group (``start_new_session``) with every port chosen free, a private ``--temp-dir`` and 1 CPU each.
Stopping (or killing a node mid-run) signals exactly that process group and the processes it spawned (the raylet
starts its workers in process groups of their own, so descendants are found through /proc) - never ``ray stop``,
which would end every Ray process on the machine.  Linux only (/proc).

    cluster = LoopbackCluster(Path("/tmp/x")).start()   # ~30 s on a loaded 2-core machine
    ... runtime=ray_cluster runtime.address={cluster.address}, env=cluster.env ...
    cluster.kill("worker"); cluster.stop()
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from typing import Any
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_env() -> dict[str, str]:
    env = dict(os.environ)
    env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "1"  # needed on these machines for multi-node clusters
    env["RAY_AUTH_MODE"] = "disabled"  # the driver (a subprocess with the same env) must agree with the nodes
    env.pop("RAY_ADDRESS", None)
    return env


def _procs() -> dict[int, tuple[int, int]]:
    """pid -> (ppid, pgid) of every live (non-zombie) process, from /proc."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            out[int(d.name)] = (int(fields[1]), int(fields[2]))
    return out


def group_pids(pgid: int) -> list[int]:
    """Live processes of a node: its process group ``pgid`` and all their descendants (the raylet starts its
    worker processes in process groups of their own)."""
    procs = _procs()
    found = {pid for pid, (_, g) in procs.items() if g == pgid}
    grew = True
    while grew:
        more = {pid for pid, (pp, _) in procs.items() if pp in found and pid not in found}
        found |= more
        grew = bool(more)
    return sorted(found)


class LoopbackCluster:
    def __init__(self, root: Path):
        self.root = root
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.temp_dir = f"/tmp/rayh8_{self.port}"  # short: Ray's unix socket paths must stay < 108 bytes
        self.groups: dict[str, int] = {}
        #: the environment of the nodes; a driver must use it too (same RAY_AUTH_MODE)
        self.env = node_env()

    def _fresh_port(self) -> int:
        """A free port not handed out before by this cluster (the kernel may give a just-released port again)."""
        used = getattr(self, "_used", None)
        if used is None:
            used = self._used = {self.port}
        for _ in range(100):
            p = free_port()
            if p not in used:
                used.add(p)
                return p
        raise RuntimeError("no fresh loopback port")

    def _ports(self) -> list[str]:
        f = self._fresh_port
        return ["--node-manager-port", str(f()), "--object-manager-port", str(f()),
                "--dashboard-agent-listen-port", str(f()), "--dashboard-agent-grpc-port", str(f()),
                "--runtime-env-agent-port", str(f()), "--metrics-export-port", str(f()),
                "--worker-port-list", ",".join(str(f()) for _ in range(12))]

    #: ``ray start`` attempts per node: a port picked free can be taken by another process before the node binds
    #: it (a race no port choice avoids); the failed node's processes are killed and it starts again on new ports
    START_ATTEMPTS = 3

    def _start(self, name: str, make_args: Any) -> None:
        """``ray start`` node ``name`` with ``make_args()`` (called per attempt, so a retried head gets a new port)."""
        for attempt in range(1, self.START_ATTEMPTS + 1):
            args = make_args()
            log = open(self.root / f"{name}.log", "w")
            proc = subprocess.Popen([RAY, "start", "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats",
                                     "--object-store-memory", str(100 * 1024 * 1024), *self._ports(), *args],
                                    stdout=log, stderr=subprocess.STDOUT, env=node_env(), start_new_session=True)
            self.groups[name] = proc.pid  # session leader: its pid is the group id the node's processes keep
            rc = proc.wait(timeout=180)
            log.close()
            if rc == 0:
                return
            text = (self.root / f"{name}.log").read_text()
            if attempt < self.START_ATTEMPTS:
                self.kill(name)  # only this node's processes; the head (when starting the worker) stays up
                shutil.copy(self.root / f"{name}.log", self.root / f"{name}.attempt{attempt}.log")
                if name == "head":  # a new GCS port too (it may be the one that was taken)
                    self._new_head_port()
                continue
            self.stop()
            raise RuntimeError(f"ray start ({name}) failed (attempt {attempt}): {text[-2000:]}")

    def _new_head_port(self) -> None:
        shutil.rmtree(self.temp_dir, ignore_errors=True)
        self.port = self._fresh_port()
        self.address = f"127.0.0.1:{self.port}"
        self.temp_dir = f"/tmp/rayh8_{self.port}"

    def start(self) -> "LoopbackCluster":
        self._start("head", lambda: ["--head", f"--port={self.port}", "--include-dashboard=false",
                                     f"--temp-dir={self.temp_dir}", '--resources={"head_node": 1}'])
        self._start("worker", lambda: [f"--address={self.address}", '--resources={"worker_node": 1}'])
        return self

    def kill(self, name: str) -> None:
        """SIGKILL every process of node ``name`` (its process group) and wait until they are gone."""
        pgid = self.groups.get(name)
        if pgid is None:
            return
        for pid in group_pids(pgid):  # the group and the workers it spawned (found before anything dies)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 20
        while group_pids(pgid) and time.monotonic() < deadline:
            time.sleep(0.2)

    def cluster_pids(self) -> list[int]:
        """Live processes whose command line names this cluster's private temp dir (every Ray process of both
        nodes does): a second net for anything that left the process groups."""
        out = []
        for pid in _procs():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if self.temp_dir + "/" in cmd or f"--temp-dir={self.temp_dir}" in cmd:
                out.append(pid)
        return out

    def stop(self, remove_temp: bool = True) -> None:
        """Kill both nodes (their process groups, then anything else naming this cluster's temp dir), then
        (``remove_temp``) delete that temp dir (its logs)."""
        for name in ("worker", "head"):
            self.kill(name)
        deadline = time.monotonic() + 20
        while (left := self.cluster_pids()) and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        if remove_temp:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
