"""One sweep per results folder: an exclusive ``fcntl.flock`` on ``<results>/<name>/.lock``.

The lock file records who holds it (``pid``, ``host``, start time) so a second sweep on the same name fails
at once with one line naming the holder.  The kernel drops a ``flock`` when its holder dies (``kill -9``
included), so a lock file left behind by a dead sweep is *stale*: the next sweep takes it over and logs whose it
was.  The lock is advisory and local to one machine's file system (flock on NFS is not reliable).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import time
from pathlib import Path
from typing import Any

from metaeval.errors import MetaevalError

log = logging.getLogger(__name__)


class RunLocked(MetaevalError):
    """Another live process holds the results folder's lock."""


class RunLock:
    """``RunLock(path).acquire()`` ... ``release()`` (or a context manager).  Not re-entrant."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._fd: int | None = None
        self.stale: dict[str, Any] | None = None  # the previous holder's record when a stale lock was taken over

    def acquire(self) -> "RunLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            who = (f"pid {holder.get('pid')} on {holder.get('host')}, started {holder.get('started')}"
                   if holder else "another process")
            raise RunLocked(f"{self.path.parent} is in use by another sweep ({who}); wait for it to finish or "
                            f"choose another name=") from None
        previous = _read(fd)
        if previous:  # the kernel released the lock, so its holder is gone: a stale lock from a killed sweep
            self.stale = previous
            alive = previous.get("host") == socket.gethostname() and _pid_alive(previous.get("pid"))
            log.warning("%s: taking over a stale lock left by pid %s on %s (started %s)%s", self.path,
                        previous.get("pid"), previous.get("host"), previous.get("started"),
                        "" if not alive else "; that pid is running but does not hold the lock")
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        os.fsync(fd)
        self._fd = fd
        return self

    def release(self) -> None:
        """Clear the holder record and drop the lock (a clean exit leaves no stale record)."""
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __del__(self) -> None:  # pragma: no cover - safety net; the kernel would release it at exit anyway
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass


def _read(fd: int) -> dict[str, Any]:
    try:
        data = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
        rec = json.loads(data) if data else {}
        return rec if isinstance(rec, dict) else {}
    except (OSError, ValueError):
        return {}


def _pid_alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError, TypeError):
        return False
    except PermissionError:
        return True
    return True
