"""SIGTERM ends a run the way Ctrl-C does: ``Terminated`` (a ``KeyboardInterrupt``) is raised in the main thread,
executors stop dispatching, every finished job is already in ``jobs.jsonl`` (flushed per record), and the CLI
prints one line and exits 143 (128 + 15).  A rerun resumes.

Ray's ``ray.init`` installs its own SIGTERM handler (``sys.exit(15)`` from inside a blocking ``ray.wait``, which
ends with a C++ stack dump); ``RayExecutor`` re-installs this one right after starting Ray.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

#: exit status after SIGTERM (128 + signal number, as a shell reports it)
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated(f"signal {signum}")


def install_sigterm() -> bool:
    """Make SIGTERM raise ``Terminated`` in the main thread; returns False (and does nothing) elsewhere."""
    if threading.current_thread() is not threading.main_thread():
        return False
    signal.signal(signal.SIGTERM, _raise_terminated)
    return True
