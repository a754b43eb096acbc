"""What the ``metaeval`` command's own process sets for itself: the garbage collector and numpy's huge pages
(issue 34: fixed costs).

Only in that process (:func:`for_command`, called by ``metaeval.cli.entry`` as it calls
``metaeval.quick_exit.exit_quickly``): a program or a test that calls ``metaeval.cli.main`` or the library keeps
its interpreter's settings, and :func:`settle` does nothing there.  What this changes is time only; no number
depends on when the collector runs or how pages are mapped (the demo sweep's and a NIST cell's files compared
exactly with and without it, and a NIST sweep's study: ``docs/benchmarks.md``, session 17).

**The cyclic garbage collector.**  CPython runs a young collection every 700 net container allocations
(``gc.get_threshold()``) and, every tenth middle one, a full collection that traverses every tracked container of
the oldest generation.  A sweep's process holds the configuration, the dataset and, once judged, the label sets,
whose pandas object columns numpy traverses element by element, so a full collection there took 0.11-0.23 s; six
of them took 0.54-0.64 s, and the young and middle ones another 0.3 s, of a 21 s run of the harness's serial sweep
(``benchmarks/harness_at.sh``, 32 requests in flight; timed with ``gc.callbacks``), the largest after judging,
where nothing waits on the network.  So, in the command's process:

* young collections every :data:`YOUNG_THRESHOLD` net allocations (the middle and full ones keep their factors):
  fewer, larger collections of the same young objects;
* :func:`settle` where a phase starts (the first job about to go out; the study about to start): what is alive then
  is long-lived (modules, configuration, dataset, jobs, label sets) and ``gc.freeze()`` moves it to the permanent
  generation, which later collections do not traverse.  Workers forked after it (the study's calibration splits)
  start with it frozen, so their collections do not write to those pages either (the advice of the ``gc``
  module's documentation for a process that forks without exec).  An object is still freed by reference counting
  when its last reference goes, frozen or not; only a reference cycle among frozen objects that becomes garbage
  waits for the process's end, seconds after the command's last phase.

**numpy's huge-page advice.**  numpy asks the kernel for transparent huge pages on every array of 4 MB or more
(``madvise(MADV_HUGEPAGE)``).  Where the kernel then compacts memory synchronously to find them
(``/sys/kernel/mm/transparent_hugepage/defrag`` is ``always``, ``defer+madvise`` or ``madvise``, the common
default), a fresh large array can stall: the rank sets' bootstrap (2,000 replicates x 990 run pairs, 16 MB arrays)
took 0.93-1.13 s in a forked worker of the harness's sweep with the advice and 0.24 s without it (two runs each).
So the command sets ``NUMPY_MADVISE_HUGEPAGE=0`` (numpy's own switch, read when numpy is imported; a value the user
set is kept) on such kernels, before anything imports numpy; the processes it starts inherit it.
"""

from __future__ import annotations

import gc
import os

#: young collections every this many net container allocations in the command's process (CPython's default: 700)
YOUNG_THRESHOLD = 10_000

#: the kernel's transparent-huge-page defrag setting (the bracketed word is the one in force)
THP_DEFRAG = "/sys/kernel/mm/transparent_hugepage/defrag"

#: defrag settings under which a region numpy advised gets no synchronous compaction (its huge pages are free)
NO_STALL_DEFRAG = ("defer", "never")

_enabled = False


def for_command() -> None:
    """Apply the policy (module docstring) to this process: the ``metaeval`` command's own, before its work."""
    global _enabled
    _enabled = True
    _, middle, full = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, full)
    if huge_pages_stall():
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def huge_pages_stall(path: str = THP_DEFRAG) -> bool:
    """Whether the kernel compacts memory synchronously for regions advised ``MADV_HUGEPAGE`` (``path``'s
    bracketed setting is not one of :data:`NO_STALL_DEFRAG`); False where it cannot be read (not Linux)."""
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return False
    start, end = text.find("["), text.find("]")
    if start < 0 or end <= start:
        return False
    return text[start + 1:end] not in NO_STALL_DEFRAG


def settle() -> None:
    """A phase starts: in the command's process (:func:`for_command`), freeze what is alive now (``gc.freeze``);
    elsewhere nothing."""
    if _enabled:
        gc.freeze()


def enabled() -> bool:
    """Whether this process applies the policy (:func:`for_command` was called)."""
    return _enabled
