"""One sweep per results folder: an exclusive ``fcntl.flock`` on ``<results>/<name>/.lock``.

The lock file records who holds it (``pid``, ``host``, start time) so a second sweep on the same name fails
at once with one line naming the holder.  The kernel drops a ``flock`` when its holder dies (``kill -9``
included), so a lock file left behind by a dead sweep is *stale*: the next sweep takes it over and logs whose it
was.  The lock file keeps the list of such killed runs (``interrupted_runs``): the requests they had in flight
were sent but never stored, so request totals over the folder are lower bounds once the list is non-empty.
The lock is advisory and local to one machine's file system (flock on NFS is not reliable).  The lock file is
opened without following links (``metaeval.layout.open_nofollow``): a ``.lock`` that is a symbolic link is refused
with one line, never written through.
"""

from __future__ import annotations

import atexit
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
        #: every earlier sweep of this folder that was killed while holding the lock (pid, host, started): their
        #: requests in flight at the kill were never stored, so request totals over the folder are lower bounds
        self.interrupted_runs: list[dict[str, Any]] = []

    def acquire(self) -> "RunLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        from metaeval.layout import open_nofollow

        fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT, 0o644, root=self.path.parent)  # a link: one line
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            who = (f"pid {holder.get('pid')} on {holder.get('host')}, started {holder.get('started')}"
                   if holder else "another process")
            raise RunLocked(f"{self.path.parent} is in use by another sweep ({who}); wait for it to finish or "
                            f"choose another name=") from None
        previous = _read(fd)
        history = previous.get("interrupted_runs")
        self.interrupted_runs = list(history) if isinstance(history, list) else []
        if previous.get("pid") is not None:  # the kernel released the lock, so its holder is gone: a killed sweep
            self.stale = {k: previous.get(k) for k in ("pid", "host", "started")}
            self.interrupted_runs.append(self.stale)
            alive = previous.get("host") == socket.gethostname() and _pid_alive(previous.get("pid"))
            log.warning("%s: taking over a stale lock left by pid %s on %s (started %s)%s", self.path,
                        previous.get("pid"), previous.get("host"), previous.get("started"),
                        "" if not alive else "; that pid is running but does not hold the lock")
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "interrupted_runs": self.interrupted_runs}
        _write(fd, me)
        self._fd = fd
        _HELD.add(self)
        return self

    def release(self, interrupted: bool = False) -> None:
        """Clear the holder record (keeping the list of interrupted runs) and drop the lock; a clean exit leaves
        no stale record.  ``interrupted=True`` (a run stopped by Ctrl-C or SIGTERM) puts this run on that list."""
        if self._fd is None:
            return
        if interrupted:
            me = _read(self._fd)
            self.interrupted_runs.append({k: me.get(k) for k in ("pid", "host", "started")})
        try:
            _write(self._fd, {"interrupted_runs": self.interrupted_runs})
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
            _HELD.discard(self)

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


#: how long a refused sweep waits for the holder to write its record (it takes the lock, then writes)
HOLDER_WAIT_S = 1.0


def _holder(fd: int) -> dict[str, Any]:
    """The record of the process that holds the lock on ``fd``.  A sweep started at the same moment may find the
    lock taken but the record not yet written (or half written): read again until it names a pid, for at most
    :data:`HOLDER_WAIT_S`; an empty dict when it never does."""
    deadline = time.monotonic() + HOLDER_WAIT_S
    while True:
        rec = _read(fd)
        if rec.get("pid") is not None or time.monotonic() >= deadline:
            return rec if rec.get("pid") is not None else {}
        time.sleep(0.01)


#: locks held by this process; at exit any still held belong to a run that did not finish (Ctrl-C, SIGTERM, an
#: error): they are released with the run put on record (``kill -9`` skips this; the next run finds it stale)
_HELD: set[RunLock] = set()


@atexit.register
def _release_held_at_exit() -> None:
    for lock in list(_HELD):
        try:
            lock.release(interrupted=True)
        except OSError:  # pragma: no cover - nothing more to do at exit
            pass


def _write(fd: int, rec: dict[str, Any]) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(rec) + "\n").encode(), 0)
    os.fsync(fd)


def _read(fd: int) -> dict[str, Any]:
    """The whole record (it grows with ``interrupted_runs``: a fixed-size read would cut it and lose the holder)."""
    try:
        size = os.fstat(fd).st_size
        chunks, pos = [], 0
        while pos < size:
            chunk = os.pread(fd, size - pos, pos)
            if not chunk:
                break
            chunks.append(chunk)
            pos += len(chunk)
        data = b"".join(chunks).decode("utf-8", "replace").strip()
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
