#!/usr/bin/env python3
"""Walk a metaeval command: which rooms (subpackages) its call path enters, and how often it returns to a room it
had left.

    python scripts/walk.py [--json OUT] [--top N] -- sweep results_dir=/tmp/walk   # any `metaeval` arguments

The command runs in this process (``metaeval.cli.main``) under a profiler hook (``sys.setprofile``) that sees
every Python call of this thread.  Definitions:

* a *room* is a subpackage or top-level module of the package: ``metaeval.commands``, ``metaeval.workflow``,
  ``metaeval.pipeline``, ``metaeval.study``, ``metaeval.report``, ``metaeval.judges``, ``metaeval.layout`` ...;
  a frame outside the package (the standard library, pandas) stays in the room of the package frame that called
  it, and so does everything an import runs (a module body, its class bodies and dataclass decorators: where a lazy
  import happens is not a move), a finalizer (``__del__``, run wherever the collector runs) and a
  call into the core utilities (``--core``, default the layer-0 modules of ``tests/unit/test_layering.py``:
  ``types``, ``errors``, ``hashing``, ``measures`` ...: every layer may use them; they are not a room one walks to);
* a call *enters* a room when the callee's room differs from the caller's;
* an entry is a *return to a room already left* when the walk had entered that room before (to be in another
  room now, the call stack left it for that room).  Counted twice: every such entry (``dynamic``: loops over
  cells and topics repeat it) and each distinct ``from room -> to room`` move (``distinct``);
* the *orchestration walk*: the rooms that the orchestrating rooms (``--orchestration``, default ``metaeval.cli``,
  ``metaeval.commands``, ``metaeval.workflow``, ``metaeval.api``) call into directly, in call order, with
  consecutive repeats collapsed (``commands, workflow, pipeline, workflow, study, ...``); its *returns* are the
  steps to a room that appears earlier in that walk: how often the command's driver goes back to a room, counted
  per step (a loop over judges repeats them) and as distinct ``from -> to`` steps.

Worker processes and other threads are not walked (``runtime=serial`` keeps the judging in this process).
Prints the rooms in order of first entry, the counts and the most frequent return moves; ``--json OUT`` writes
the same as JSON.  Exit status: the command's.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any


def room_of(module: str) -> str | None:
    """``metaeval.study.run`` -> ``metaeval.study``; ``metaeval.layout`` -> itself; outside the package: None."""
    parts = module.split(".")
    if parts[0] != "metaeval":
        return None
    return ".".join(parts[:2])


class Walk:
    """The profiler hook: a stack of the room each live frame is in, and every entry into a room."""

    def __init__(self, orchestration: frozenset[str] = frozenset(), core: frozenset[str] = frozenset()) -> None:
        self.orchestration, self.core = orchestration, core
        self.path: list[str] = []  # the orchestration walk (consecutive repeats collapsed)
        self.stack: list[str | None] = []
        self.modules: list[bool] = []  # per live frame: is it a module body (an import running)?
        self.importing = 0
        self.order: list[str] = []  # rooms in order of first entry
        self.entries = 0
        self.returns: Counter[tuple[str | None, str]] = Counter()
        self.moves: Counter[tuple[str | None, str]] = Counter()  # every entry, first ones too

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            here = self.stack[-1] if self.stack else None
            is_module = frame.f_code.co_name == "<module>"
            self.modules.append(is_module)
            self.importing += is_module
            room = room_of(frame.f_globals.get("__name__") or "")
            if room is None or room in self.core or self.importing or frame.f_code.co_name == "__del__":
                self.stack.append(here)
                return
            if room != here:
                if (here in self.orchestration or here is None) and (not self.path or self.path[-1] != room):
                    self.path.append(room)
                self.entries += 1
                self.moves[(here, room)] += 1
                if room in self.order:
                    self.returns[(here, room)] += 1
                else:
                    self.order.append(room)
            self.stack.append(room)
        elif event == "return" and self.stack:
            self.stack.pop()
            self.importing -= self.modules.pop()

    def figures(self) -> dict[str, Any]:
        back = [(self.path[i - 1], r) for i, r in enumerate(self.path) if r in self.path[:i]]
        return {"rooms": self.order, "room_entries": self.entries,
                "orchestration_walk": self.path, "orchestration_returns": len(back),
                "orchestration_returns_distinct": len(set(back)),
                "called_from": {src: sorted({b for (a, b) in self.moves if a == src})
                                for src in sorted({a for (a, _) in self.moves if a in self.orchestration})},
                "returns_dynamic": sum(self.returns.values()), "returns_distinct": len(self.returns),
                "return_moves": [{"from": a, "to": b, "count": n} for (a, b), n in self.returns.most_common()]}


#: the rooms whose direct calls make the orchestration walk
ORCHESTRATION = ("metaeval.cli", "metaeval.commands", "metaeval.workflow", "metaeval.api")
#: the core utilities (layer 0 of tests/unit/test_layering.py): not rooms
CORE = ("types", "errors", "paths", "hashing", "version", "schema", "simulation", "seeded_uniform", "paper",
        "random_streams", "forked", "quick_exit", "measures")


def walk(argv: list[str], orchestration: tuple[str, ...] = ORCHESTRATION,
         core: tuple[str, ...] = CORE) -> tuple[int, dict[str, Any]]:
    """Run ``metaeval ARGV`` in this process under :class:`Walk`; (its exit status, the figures)."""
    from metaeval.cli import main

    w = Walk(frozenset(orchestration), frozenset(f"metaeval.{c}" for c in core))
    sys.setprofile(w)
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse errors
        rc = int(exc.code or 0)
    finally:
        sys.setprofile(None)
    return rc, w.figures()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    ap.add_argument("--top", type=int, default=12, help="return moves listed (default 12)")
    ap.add_argument("--orchestration", default=",".join(ORCHESTRATION),
                    help="comma-separated rooms whose direct calls make the orchestration walk")
    ap.add_argument("--core", default=",".join(CORE),
                    help="comma-separated core modules that are not rooms ('' for none)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the metaeval arguments (after --)")
    args = ap.parse_args(argv)
    cmd = [a for a in args.command if a != "--"] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("name the metaeval command to walk, e.g. -- sweep results_dir=/tmp/walk")
    import metaeval

    rc, fig = walk(cmd, tuple(r.strip() for r in args.orchestration.split(",") if r.strip()),
                   tuple(c.strip() for c in args.core.split(",") if c.strip()))
    out = sys.stderr  # the command's own output went to stdout
    print(f"walk of `metaeval {' '.join(cmd)}` ({Path(metaeval.__file__).parent}), exit {rc}", file=out)
    print(f"rooms entered ({len(fig['rooms'])}, in order of first entry): {', '.join(fig['rooms'])}", file=out)
    print(f"room entries: {fig['room_entries']}; returns to a room already left: {fig['returns_dynamic']} "
          f"(every entry), {fig['returns_distinct']} (distinct from -> to moves)", file=out)
    for m in fig["return_moves"][: args.top]:
        print(f"  {m['from']} -> {m['to']}: {m['count']}", file=out)
    for src, rooms in fig["called_from"].items():
        print(f"{src} calls into ({len(rooms)}): {', '.join(r.removeprefix('metaeval.') for r in rooms)}", file=out)
    steps = fig["orchestration_walk"]
    print(f"orchestration walk ({len(steps)} steps; returns to a room already left: {fig['orchestration_returns']}, "
          f"{fig['orchestration_returns_distinct']} distinct): "
          + " > ".join(r.removeprefix("metaeval.") for r in steps), file=out)
    if args.json:
        Path(args.json).write_text(json.dumps({"argv": cmd, "exit": rc, **fig}, indent=2) + "\n", encoding="utf-8")
    return rc


if __name__ == "__main__":
    sys.exit(main())
