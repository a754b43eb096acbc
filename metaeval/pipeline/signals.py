"""SIGTERM ends a run the way Ctrl-C does: the handler notes it and raises SIGINT, so every place that already
stops cleanly on Ctrl-C does the same here - ``asyncio.run`` cancels its main task (no task dies with a stray
exception), Ray's ``ray.wait`` returns with ``KeyboardInterrupt``, every finished job is already in ``jobs.jsonl``
(flushed per record) - and the CLI, seeing ``terminated()``, prints one line and exits 143 (128 + 15).  A rerun
resumes.

A process started with SIGINT ignored (``nohup``, a background job of a non-interactive shell: POSIX shells start
``&`` jobs that way) keeps ignoring Ctrl-C, but SIGTERM must still stop it: there the handler raises
``KeyboardInterrupt`` itself (raising an ignored SIGINT would do nothing), which ends ``ray.wait`` the same way.
Inside a running event loop it is raised from a loop callback instead (``call_soon_threadsafe``), never in the
middle of a task's step: a task that died of it would keep the exception, and ``asyncio.run`` would log its
traceback ("Task exception was never retrieved") while shutting down; raised between callbacks, it ends
``asyncio.run`` the way Ctrl-C in ``select`` does and the tasks are cancelled cleanly.

Ray's ``ray.init`` installs its own SIGTERM handler (``sys.exit(15)`` from inside a blocking ``ray.wait``, which
ends with a C++ stack dump); ``RayExecutor`` re-installs this one right after starting Ray.

A forked child inherits the handler.  Only the process that installed it takes the Ctrl-C path; in any other (a
pool worker forked by :mod:`metaeval.forked`, stopped by ``Pool.terminate`` before its initializer has reset
SIGTERM) the handler does what SIGTERM does by default: the process ends, quietly, killed by the signal.  Without
that, a worker terminated in the instant after its fork raised ``KeyboardInterrupt`` and printed a traceback
(seen from ``metaeval report`` on a folder without ``summary.json``, which stops its drawing workers unused).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

#: exit status after SIGTERM (128 + signal number, as a shell reports it)
EXIT_TERMINATED = 128 + signal.SIGTERM

_state: dict[str, Any] = {"terminated": False, "pid": None}


def _raise_interrupt() -> None:
    raise KeyboardInterrupt


def _on_sigterm(signum: int, frame: Any) -> None:
    if _state["pid"] is not None and os.getpid() != _state["pid"]:  # a forked child: SIGTERM's default action
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    _state["terminated"] = True
    if signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, None):
        signal.raise_signal(signal.SIGINT)  # the Ctrl-C path: asyncio's Runner or Python's default handler
        return
    # SIGINT ignored (nohup, '&' in a script): raising it would be a no-op and SIGTERM would be lost
    asyncio = sys.modules.get("asyncio")  # no asyncio imported: no loop running
    loop = asyncio._get_running_loop() if asyncio is not None else None
    if loop is not None:
        loop.call_soon_threadsafe(_raise_interrupt)  # between callbacks, never inside a task's step
        return
    raise KeyboardInterrupt


def terminated() -> bool:
    """Whether this process received SIGTERM (the CLI turns the resulting KeyboardInterrupt into exit 143)."""
    return _state["terminated"]


def install_sigterm() -> bool:
    """Route SIGTERM through the Ctrl-C path; returns False (and does nothing) outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return False
    _state["pid"] = os.getpid()
    signal.signal(signal.SIGTERM, _on_sigterm)
    return True
