"""``metaeval.pipeline.ray_reaper.session_processes``: which processes belong to one Ray session (a fake /proc)."""

from __future__ import annotations

import os

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
