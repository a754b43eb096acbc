"""Independent CPU-bound tasks on the sweep's executor: :func:`map_tasks` runs ``fn(shared, item)`` for every item and
returns the results in item order, with where each ran.

The runner (:func:`choose_runner`), from ``workers`` (``auto`` or a whole number >= 1) and the number of items:

* ``ray`` - Ray is already up in this process (the sweep judged on ``runtime=ray_local`` / ``ray_cluster``; Ray is
  never started for this) and ``workers`` is not 1: one Ray task per item asking for one CPU, so Ray's scheduler
  places them over the nodes' CPUs; ``shared`` is put in the object store once.  In flight at once: ``workers``,
  or with ``auto`` twice the CPUs Ray reports (the rest wait in the driver, so their arguments are not all in the
  object store at once).  ``fn`` must be a module-level function of the package (Ray pickles it by name; on a
  cluster the package reaches the nodes in the job's runtime env, ``ray_setup.cluster_runtime_env``).
* ``pool`` - :func:`metaeval.forked.fork_map` over ``resolve_workers(workers, items)`` forked processes when that is
  more than one (Linux): ``fn``, ``shared`` and the items are inherited, only the results are pickled back.  Ray up
  in this process is never forked (its threads would not survive the fork).
* ``serial`` - the plain loop in this process (``workers`` 1, a single item, or no ``fork``).

An exception raised by ``fn`` is raised here, as itself (from a Ray task too, not wrapped in Ray's error).  Nothing
here knows what the tasks compute: the study's cells (``metaeval.study.fanout``) are one user.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Sequence

RUNNERS = ("serial", "pool", "ray")


@dataclass
class TaskRun:
    """What :func:`map_tasks` did: the runner, its parallelism (processes, or tasks in flight), the results in item
    order and, per item, ``(node, pid)`` of the process that ran it (node: Ray's node id, ``""`` off Ray)."""

    runner: str
    workers: int
    results: list[Any]
    where: list[tuple[str, int]] = field(default_factory=list)

    @property
    def nodes(self) -> int:
        """Distinct nodes the items ran on (1 off Ray)."""
        return len({n for n, _ in self.where}) or 1

    @property
    def processes(self) -> int:
        return len(set(self.where)) or 1

    def describe(self) -> str:
        """``4 task(s) in 2 forked process(es)`` / ``... as Ray tasks on 2 node(s)`` / ``... in this process``."""
        n = len(self.results)
        if self.runner == "ray":
            return f"{n} task(s) as Ray tasks on {self.nodes} node(s), {self.processes} process(es)"
        if self.runner == "pool":
            return f"{n} task(s) in {self.processes} forked process(es)"
        return f"{n} task(s) in this process"


def ray_is_up() -> bool:
    """Whether Ray is initialised in this process (never imports Ray)."""
    ray = sys.modules.get("ray")
    return bool(ray is not None and getattr(ray, "is_initialized", lambda: False)())


def choose_runner(workers: int | str | None, n_items: int) -> tuple[str, int]:
    """``(runner, parallelism)`` for ``n_items`` tasks (see the module docstring); a bad ``workers`` is one
    ``ConfigError`` line."""
    from metaeval.forked import can_fork, resolve_workers

    n = resolve_workers(workers, max(1, n_items))  # validates workers too
    if workers not in (None, "auto") and int(workers) == 1 or n_items <= 1:
        return "serial", 1
    if ray_is_up():
        if workers in (None, "auto"):
            import ray

            return "ray", max(1, 2 * int(ray.cluster_resources().get("CPU", 1)))
        return "ray", int(workers)
    if n > 1 and can_fork():
        return "pool", n
    return "serial", 1


def _located(fn: Callable[[Any, Any], Any], shared: Any, item: Any) -> tuple[Any, str, int]:
    """``fn(shared, item)`` with the node (Ray's id, "" off Ray) and pid of the process that ran it."""
    node = ""
    if ray_is_up():
        import ray

        node = ray.get_runtime_context().get_node_id()
    return fn(shared, item), node, os.getpid()


def map_tasks(fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any],
              workers: int | str | None = "auto") -> TaskRun:
    """``[fn(shared, x) for x in items]`` on the runner :func:`choose_runner` picks (see the module docstring)."""
    items = list(items)
    runner, n = choose_runner(workers, len(items))
    if runner == "ray":
        out = _ray_map(fn, shared, items, n)
    elif runner == "pool":
        from metaeval.forked import fork_map

        out = fork_map(partial(_located, fn, shared), items, n)
    else:
        out = [_located(fn, shared, x) for x in items]
    return TaskRun(runner, n, [r for r, _, _ in out], [(node, pid) for _, node, pid in out])


def _ray_map(fn: Callable[[Any, Any], Any], shared: Any, items: list[Any], limit: int) -> list[tuple[Any, str, int]]:
    """The items as Ray tasks (one CPU each), at most ``limit`` in flight; results in item order."""
    import ray
    from ray.exceptions import RayTaskError

    remote = ray.remote(num_cpus=1)(_located)
    shared_ref = ray.put(shared)
    results: list[Any] = [None] * len(items)
    in_flight: dict[Any, int] = {}
    nxt = 0
    try:
        while nxt < len(items) or in_flight:
            while nxt < len(items) and len(in_flight) < limit:
                in_flight[remote.remote(fn, shared_ref, items[nxt])] = nxt
                nxt += 1
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                i = in_flight.pop(ref)
                try:
                    results[i] = ray.get(ref)
                except RayTaskError as exc:  # the task's own exception, not Ray's wrapper (one line stays one line)
                    cause = getattr(exc, "cause", None)
                    raise (cause if isinstance(cause, BaseException) else exc) from None
    finally:
        for ref in in_flight:  # an error or Ctrl-C: the tasks still running are not needed
            try:
                ray.cancel(ref)
            except Exception:  # noqa: BLE001 - finished meanwhile
                pass
    return results
