"""A watchdog that ends a local Ray session's processes when the driver that started it dies, even by kill -9.

Why: a local Ray started by ``ray.init()`` fate-shares its GCS server and raylet with the driver, but the raylet's
children (the dashboard agent and the runtime-env agent) only notice the raylet's death by polling, and then, when
the raylet did not log a SIGTERM, try to publish that error to the (dead) GCS with a 60-second timeout hard-coded
in Ray (``ray._private.utils.publish_error_to_driver``) before they exit: after ``kill -9`` of the driver two agent
processes stay alive for over 60 s.

How: ``start(session_dir)`` (called by ``metaeval.pipeline.ray_setup.init_ray`` after it started a local Ray)
starts ``python -m metaeval.pipeline.ray_reaper SESSION_DIR DRIVER_PID`` in its own session with a pipe on its stdin whose
write end only the driver holds.  The pipe reaches end-of-file when the driver exits, whatever the cause; once
the driver is gone (the watchdog, its child, is reparented), the watchdog sends SIGKILL to every process of that
session (``session_processes``: its command line names the session directory or it holds a file there open;
this Ray session's own processes only, nothing of another session or cluster) and exits.  On a clean exit Ray
has already shut its processes down and there is nothing left to end.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

#: seconds the watchdog waits, after the pipe closed, for the driver to exit (it closes the pipe while finalising)
DRIVER_EXIT_WAIT_S = 60.0
#: session dir -> its watchdog (kept so the pipe's write end stays open while the driver lives)
_WATCHDOGS: dict[str, subprocess.Popen] = {}


def session_processes(session_dir: str, proc_root: str = "/proc") -> list[int]:
    """Process ids of the Ray session in ``session_dir`` (Linux ``/proc``; empty elsewhere), except this one: those
    whose command line names the folder (raylet, GCS server, log monitor) or that hold a file in it open (every
    Ray process writes its log there, also the agents and workers that retitle themselves ``ray::...``)."""
    me, out = os.getpid(), []
    root = Path(proc_root)
    if not root.is_dir():
        return out
    for entry in root.iterdir():
        if entry.name.isdigit() and int(entry.name) != me and _in_session(entry, session_dir):
            out.append(int(entry.name))
    return out


def _in_session(proc: Path, session_dir: str) -> bool:
    try:
        cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        if re.search(re.escape(session_dir) + r"(?=[/\s]|$)", cmdline):  # the folder itself, not a longer name
            return True
        fds = os.listdir(proc / "fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(proc / "fd" / fd).startswith(session_dir + os.sep):
                return True
        except OSError:
            continue
    return False


def start(session_dir: str) -> subprocess.Popen | None:
    """Start the watchdog for ``session_dir`` (once per session); None where there is no ``/proc`` to read."""
    running = _WATCHDOGS.get(session_dir)
    if running is not None and running.poll() is None:
        return running
    if not session_dir or not Path("/proc/self/cmdline").exists():
        return None
    _WATCHDOGS[session_dir] = subprocess.Popen([sys.executable, "-m", "metaeval.pipeline.ray_reaper", session_dir,
                                                str(os.getpid())],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True, close_fds=True)
    return _WATCHDOGS[session_dir]


def main(argv: list[str]) -> int:
    """Block until stdin closes, then until the driver (this process's parent) has exited - a driver that closes the
    pipe while it finalises is never touched, and Ray's own shutdown has run by then - and SIGKILL the session's
    remaining processes."""
    session_dir, driver = argv[0], int(argv[1])  # not getppid(): the driver may be gone before this line runs
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, KeyboardInterrupt):
        pass
    deadline = time.monotonic() + DRIVER_EXIT_WAIT_S
    while os.getppid() == driver and time.monotonic() < deadline:  # orphaned (reparented) once the driver is gone
        time.sleep(0.05)
    if os.getppid() == driver:
        return 0  # the driver lives on (it closed its end itself): its session is its own business
    for pid in session_processes(session_dir):
        if pid == driver:
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
