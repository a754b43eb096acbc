"""``fork_map``: the same function over independent items in forked worker processes, results in item order.

For CPU-bound work made of many small numpy calls (Python-bound, so threads do not help), e.g. the repeats of
the calibration's cross-fitting (:func:`metaeval.calibration.crossfit.repeated_crossfit`).  Each worker is a
``fork`` of the caller: it inherits the function and its arguments (closures included, nothing is pickled on the
way in) and sends back only its result.  The items must not share state that the order of evaluation could move
(a random generator consumed across items, say): then the results are the same numbers as a serial loop's, in the
same order, whatever the number of workers.

Runs serially (the plain loop, in this process) when ``workers`` <= 1, with one item, where ``fork`` is not the
platform's safe default (not Linux), or inside a daemonic worker process (which may not have children).

Also here: :class:`WarmWorkers` (workers started before their items are known), :func:`start_forkserver` (the
process they can be forked from) and :func:`call_in_fork` (one function in a forked child while this process does
something else).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Sequence

#: the (function, items) of the map in progress; set before forking so that the children inherit it
_WORK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
_LOCK = threading.Lock()


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def resolve_workers(workers: int | str | None, items: int) -> int:
    """``auto``/None -> the available CPUs; never more than ``items``, never fewer than 1."""
    from metaeval.errors import ConfigError

    if workers in (None, "auto"):
        n = available_cpus()
    else:
        try:
            n = int(workers)
        except (TypeError, ValueError):
            raise ConfigError(f"workers={workers!r}: expected 'auto' or a whole number >= 1") from None
        if n < 1 or isinstance(workers, bool) or n != float(workers):
            raise ConfigError(f"workers={workers!r}: expected 'auto' or a whole number >= 1")
    return max(1, min(n, items))


def can_fork() -> bool:
    import multiprocessing

    return sys.platform.startswith("linux") and not multiprocessing.current_process().daemon


def _init_worker() -> None:
    """Worker initializer.  Signals: the parent's handlers are not the worker's (a sweep's SIGTERM handler raises
    KeyboardInterrupt, which would print a traceback from every worker the pool ends): SIGTERM ends a worker quietly
    and Ctrl-C reaches the parent, which stops the pool.  Threads: one BLAS/OpenMP thread per worker, so that
    ``workers`` processes do not each run the parent's BLAS thread pool on the same cores (OpenBLAS threads spin
    while they wait: oversubscribed, a 16x NIST calibration took twice as long on 2 cores)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def one_blas_thread():
    """Context manager: one BLAS/OpenMP thread in this process while it is open (``threadpoolctl``), restored after.

    For the study, whose numpy products are many and tiny (``(1000, 21) @ (21, 45)``): OpenBLAS threads cost 25x
    the CPU of one thread on such products and spin while the forked workers run, and they change no figure
    (``scripts/compare_summaries.py`` on the demo, NIST and the full-track benchmark).  Measured with
    ``benchmarks.bench_grid --cells 1`` side by side on 2 cores, load 1-1.5: 20.5-20.9 -> 19.0-19.2 CPU s."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def preload(modules: Sequence[str], skip_failures: bool = False) -> None:
    """Import ``modules`` in this process before a map forks its workers, so that each worker inherits them instead
    of importing its own copy on its first task (``scipy.special`` alone is about 0.15 s per process).
    ``skip_failures``: a module that does not import (an optional extra missing) is passed over, not raised (for
    imports made ahead of time only: the code that needs the module says so when it runs)."""
    import importlib

    for name in modules:
        if skip_failures:
            best_effort(lambda: importlib.import_module(name))
        else:
            importlib.import_module(name)


def _run_item(i: int) -> Any:
    fn, items = _WORK  # type: ignore[misc]
    return fn(items[i])


def fork_map(fn: Callable[[Any], Any], items: Sequence[Any], workers: int | str | None = "auto") -> list[Any]:
    """``[fn(x) for x in items]``, over ``resolve_workers(workers)`` forked processes (see the module docstring).

    An exception raised by ``fn`` in a worker is raised here."""
    global _WORK
    items = list(items)
    n = resolve_workers(workers, len(items))
    if n <= 1 or not can_fork():
        return [fn(x) for x in items]
    import multiprocessing

    with _LOCK:  # one map in progress at a time (the children read the module-level _WORK)
        _WORK = (fn, items)
        pool = multiprocessing.get_context("fork").Pool(n, initializer=_init_worker)
        try:
            results = pool.map(_run_item, range(len(items)), chunksize=1)
            pool.close()  # the workers exit on their own, not by a signal
            pool.join()
            return results
        finally:
            pool.terminate()  # after an error or Ctrl-C: end the workers (a no-op once they have exited)
            _WORK = None


def start_forkserver(preload: Sequence[str]) -> bool:
    """Start ``multiprocessing``'s fork server of this process now, importing the modules ``preload`` (a fresh
    interpreter that imports them once, in the background: this call returns at once), so that workers asked of it
    later (:class:`WarmWorkers` with ``server=True``) are forks of a process that has them already.  Returns
    whether it runs (False where forking is not safe: not Linux, or a daemonic caller).  Once started, the server
    keeps the modules of its first start; it ends when this process does."""
    if not can_fork():
        return False
    import multiprocessing
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(list(preload))
    forkserver.ensure_running()
    return True


class WarmWorkers:
    """Worker processes started *before* the work is known, each running ``warm()`` once (imports, say) while the
    caller prepares the items; :meth:`map` then sends the items (pickled: unlike :func:`fork_map`'s, they need not
    exist at the fork) and returns the results in order.  For work whose set-up cost (matplotlib's import: 0.25 s)
    would otherwise sit on the caller's critical path before a :func:`fork_map`: the workers pay it side by side
    while the caller builds what they will draw.  ``server``: the workers are forks of the fork server that
    :func:`start_forkserver` started (earlier, with the imports ``warm`` needs: then ``warm`` costs nothing here),
    else forks of this process.  Use as a context manager; ``workers`` <= 1, a platform without a safe ``fork`` or a
    daemonic caller start no process and :meth:`map` runs in this process (``warm`` included).  The same numbers as
    a plain loop: each item is computed from itself alone."""

    def __init__(self, workers: int | str | None, warm: Callable[[], Any], server: bool = False):
        self.warm = warm
        n = resolve_workers(workers, 1 << 30)  # the items are not known yet: no cap by their number
        self._pool, self._used = None, False
        if n > 1 and can_fork():
            import multiprocessing

            context = multiprocessing.get_context("forkserver" if server else "fork")
            self._pool = context.Pool(n, initializer=_init_warm, initargs=(warm,))

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        items = list(items)
        if self._pool is None or len(items) <= 1:
            if items:
                self.warm()
            return [fn(x) for x in items]
        self._used = True
        return self._pool.map(fn, items, chunksize=1)

    def submit(self, fn: Callable[[Any], Any], item: Any):
        """Start ``fn(item)`` in a worker now (the item is pickled later, by the pool's own thread: it must not change
        meanwhile); returns its ``multiprocessing`` result (``.get()``), or None without workers (the caller then
        computes it itself)."""
        if self._pool is None:
            return None
        self._used = True
        return self._pool.apply_async(fn, (item,))

    def close(self, stop: bool = False) -> None:
        """End the workers: after a map they exit on their own; never used, or ``stop`` (an error), they are
        stopped (their warm-up is not waited for)."""
        if self._pool is not None:
            if self._used and not stop:
                self._pool.close()
            else:
                self._pool.terminate()
            self._pool.join()
            self._pool = None

    def __enter__(self) -> "WarmWorkers":
        return self

    def __exit__(self, *exc) -> None:
        self.close(stop=exc[0] is not None)


def _init_warm(warm: Callable[[], Any]) -> None:
    _init_worker()
    warm()


def call_in_fork(fn: Callable[[], Any], meanwhile: Callable[[], Any] | None = None) -> Any:
    """``fn()``, computed in a forked child while this process runs ``meanwhile()`` (imports it will need next,
    say): two cores work at once where one would do both in turn.  For a pure function of this process's state
    (the sweep's Hydra composition: 0.4 s, beside numpy's and pandas' imports: 0.4 s), whose result and errors
    pickle.  Returns ``fn()``'s result; a :class:`~metaeval.errors.MetaevalError` it raises is raised here (its
    one-line message is the user's answer).  Anything else - another exception (its traceback belongs to this
    process), a child that ended without an answer, a result that does not pickle - and ``fn()`` is computed
    again here, so the outcome is always what a plain call gives.  ``meanwhile`` is best effort (an exception in
    it is ignored: what it prepares is done again when needed).  Without a safe ``fork`` (not Linux, a daemonic
    process) it is the plain call, after ``meanwhile``."""
    if not can_fork():
        best_effort(meanwhile)
        return fn()
    import pickle

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, leave without running the parent's exit handlers
        try:
            os.close(read_end)
            _answer(fn, write_end)
        finally:
            os._exit(0)  # whatever happened (a parent gone, Ctrl-C): never return into the parent's code
    os.close(write_end)
    done = False
    try:
        best_effort(meanwhile)
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
        os.waitpid(pid, 0)
        done = True
    finally:
        if not done:  # interrupted (Ctrl-C, SIGTERM): the child goes too
            import signal

            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
    try:
        kind, value = pickle.loads(data)
    except Exception:  # noqa: BLE001 - no answer (the child died, or its answer did not pickle): compute it here
        kind, value = "again", None
    if kind == "ok":
        return value
    if kind == "error":
        raise value
    return fn()


def _answer(fn: Callable[[], Any], fd: int) -> None:
    """The child's half of :func:`call_in_fork`: ``fn()``'s result, or its ``MetaevalError``, pickled to ``fd``;
    ``("again", None)`` for anything else."""
    import pickle

    from metaeval.errors import MetaevalError

    try:
        answer: tuple[str, Any] = ("ok", fn())
    except MetaevalError as exc:
        answer = ("error", exc)
    except BaseException:  # noqa: BLE001 - the parent computes it again, with its own traceback
        answer = ("again", None)
    try:
        data = pickle.dumps(answer)
        if answer[0] == "error" and str(pickle.loads(data)[1]) != str(answer[1]):
            raise ValueError("the error does not pickle to itself")
    except Exception:  # noqa: BLE001
        data = pickle.dumps(("again", None))
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    with os.fdopen(fd, "wb") as pipe:
        pipe.write(data)


def best_effort(fn: Callable[[], Any] | None) -> None:
    """``fn()`` (when given) with its exceptions logged at debug level and dropped: for preparations only (imports
    made ahead of time), whose work is done again, and reported, where it is needed."""
    if fn is None:
        return
    try:
        fn()
    except Exception:  # noqa: BLE001 - see the docstring
        import logging

        logging.getLogger(__name__).debug("preparation failed", exc_info=True)
