"""``metaeval.pipeline.ray_reaper.session_processes``: which processes belong to one Ray session (a fake /proc)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from metaeval.pipeline.ray_reaper import session_processes


def _proc(root, pid, cmdline: bytes, fds: dict[str, str]):
    d = root / str(pid)
    (d / "fd").mkdir(parents=True)
    (d / "cmdline").write_bytes(cmdline)
    for fd, target in fds.items():
        os.symlink(target, d / "fd" / fd)


def test_session_processes_by_command_line_or_open_file(tmp_path):
    session = str(tmp_path / "ray" / "session_2026_1")
    other = str(tmp_path / "ray" / "session_2026_10")  # a name that starts like ours: another session
    proc = tmp_path / "proc"
    _proc(proc, 11, b"raylet\0--session_dir=" + session.encode() + b"\0", {})
    _proc(proc, 12, b"ray::DashboardAgent" + b" " * 40, {"1": f"{session}/logs/dashboard_agent.log", "2": "/dev/null"})
    _proc(proc, 13, b"ray::IDLE", {"1": f"{other}/logs/worker.out"})
    _proc(proc, 14, b"python\0app.py", {"0": "/dev/null"})
    _proc(proc, 15, b"raylet\0--session_dir=" + other.encode() + b"\0", {})
    _proc(proc, os.getpid(), b"python\0-m\0metaeval.pipeline.ray_reaper\0" + session.encode(), {})  # itself
    (proc / "self").mkdir()
    assert sorted(session_processes(session, str(proc))) == [11, 12]


def test_no_proc_folder_no_processes(tmp_path):
    assert session_processes("/tmp/ray/session_x", str(tmp_path / "absent")) == []


DRIVER = """
import subprocess, sys, time
from metaeval.pipeline import ray_reaper
session = sys.argv[1]
log = open(session + "/logs/driver.log", "w")  # a driver holds session files open too (Ray's driver log)
worker = subprocess.Popen(["sleep", "600"], stdout=open(session + "/logs/worker.out", "w"), start_new_session=True)
ray_reaper.start(session)
print(worker.pid, flush=True)
if sys.argv[2] == "wait":
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, bound_s: float = 30) -> bool:
    deadline = time.monotonic() + bound_s
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


@pytest.mark.parametrize("how", ["kill -9", "clean exit"])
def test_the_watchdog_ends_the_session_when_the_driver_goes_and_never_the_driver(tmp_path, how):
    session = tmp_path / "session_x"
    (session / "logs").mkdir(parents=True)
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(session), "wait" if how == "kill -9" else "exit"],
                              stdout=subprocess.PIPE, text=True)
    worker = int(driver.stdout.readline())
    try:
        assert _alive(worker)
        if how == "kill -9":
            driver.kill()
        assert driver.wait(timeout=60) == (-signal.SIGKILL if how == "kill -9" else 0)  # a clean exit stays clean
        assert _wait_gone(worker), "the session's process outlived its driver"
    finally:
        if _alive(worker):
            os.kill(worker, signal.SIGKILL)
