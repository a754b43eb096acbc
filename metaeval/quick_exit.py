"""``exit_quickly``: end the ``metaeval`` command without the interpreter's object-by-object teardown.

A normal exit frees every object the process still holds, one deallocation at a time: after a sweep of the NIST
workload (300 MB, about 210,000 container objects) that took 0.35 s of an 11.7 s process, time in which nothing
happens that a user could see (``benchmarks/harness_at.sh 64``; ``os._exit`` instead: 0.02 s).  Large Python
services skip it the same way (Instagram, "Dismissing Python Garbage Collection at Instagram", 2017:
``atexit.register(os._exit, 0)``).

What a normal exit does that matters is kept, in its order: non-daemon threads are waited for (when one still
runs, the normal exit is taken instead), the ``atexit`` handlers run (Ray's shutdown, ``multiprocessing``'s end of
daemonic children, ``tempfile`` clean-up, coverage), ``logging`` is shut down, every file object still open is
flushed (its buffered bytes would otherwise be lost) and every SQLite connection still open is closed (which
checkpoints its write-ahead log into the database file); the operating system then closes the descriptors and
frees the memory at once.  Only the command-line entry point uses it: ``metaeval.cli.main`` returns as before, so a
program or a test calling it in-process keeps a normal interpreter.
"""

from __future__ import annotations

import sys
from typing import NoReturn


def exit_quickly(rc: int | None) -> NoReturn:
    """Exit with status ``rc`` (None: 0) as described in the module docstring."""
    import atexit
    import logging
    import os
    import threading

    code = int(rc or 0)
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)  # a worker thread still runs: the interpreter's exit waits for it
    atexit._run_exitfuncs()  # noqa: SLF001 - the handlers a normal exit runs, in the same (reverse) order
    logging.shutdown()
    _finish_open_files()
    os._exit(code)


def _finish_open_files() -> None:
    """Flush stdout, stderr and every other open file object, and close every open SQLite connection (what
    finalization does as it frees them: a connection's close checkpoints its write-ahead log into the database
    file, so that the file alone holds what was written)."""
    import gc
    import io

    for fh in (sys.stdout, sys.stderr):
        try:
            if fh is not None:
                fh.flush()
        except (OSError, ValueError):  # a reader that went away, a closed stream: nothing more can be written
            pass
    files = (io.BufferedWriter, io.BufferedRandom, io.TextIOWrapper)
    sqlite = sys.modules.get("sqlite3")
    connection = sqlite.Connection if sqlite is not None else None
    for obj in gc.get_objects():  # by type(): isinstance would also ask each object for __class__ (1 s here)
        kind = type(obj)
        try:
            if issubclass(kind, files):
                if not obj.closed and obj.writable():
                    obj.flush()
            elif connection is not None and issubclass(kind, connection):
                obj.close()
        except Exception:  # closed meanwhile, another thread's connection, a reader that went away: as finalization
            pass
