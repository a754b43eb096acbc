#!/usr/bin/env python3
"""Compare two sweep ``summary.json`` files field by field: are the results the same before and after a change?

    python scripts/compare_summaries.py OLD/summary.json NEW/summary.json [--rtol R] [--atol A] [--ignore KEY ...]

Prints every differing field as ``path: OLD -> NEW`` (numbers with their difference), every field present on one
side only, then a count; exit status 0 when nothing differs, 1 when something does, 2 when a file cannot be read.

* Numbers compare numerically: ``1 == 1.0``, ``NaN == NaN``; equal means ``|a - b| <= atol + rtol * |b|``
  (``math.isclose``), exact by default.  Booleans are not numbers here (``True != 1``).
* Lists of records are matched by their identity field when every record has one with distinct values
  (``cell``, then ``name``, ``filename``, ``run_id``, ``metric``, ``method``, ``judge``), so a reordering is not a
  difference; other lists compare position by position.  Paths read ``cells[lexical__auto_auto].stats.judge_calls``.
* Ignored (they change from run to run without the results changing): timing (keys ending in ``_s``, ``_at``,
  ``_time``, ``_seconds`` and ``elapsed``, ``timestamp``, ``created``, ``started``, ``finished``), paths (``path``,
  ``paths``, ``results_dir``, ``cwd``), versions (``version`` and keys ending in ``_version``, ``git``, ``python``,
  ``platform``, ``host``), ``evaluation_reused`` (whether this run recomputed or reused the study) and
  ``evaluation_key`` (the study cache's key, a hash of the inputs *and* the package version).  ``--ignore KEY``
  adds a key name.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Iterator

IGNORED_KEYS = frozenset({
    "elapsed", "timestamp", "created", "started", "finished",
    "path", "paths", "results_dir", "cwd",
    "version", "git", "python", "platform", "host",
    "evaluation_reused", "evaluation_key",
})
IGNORED_SUFFIXES = ("_s", "_at", "_time", "_seconds", "_version")
IDENTITY_FIELDS = ("cell", "name", "filename", "run_id", "metric", "method", "judge")


def ignored(key: str, extra: frozenset[str] = frozenset()) -> bool:
    return key in IGNORED_KEYS or key in extra or key.endswith(IGNORED_SUFFIXES)


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _same_number(a: float, b: float, rtol: float, atol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=rtol, abs_tol=atol)


def _identity(items: list[Any]) -> str | None:
    """The field that names each record of ``items`` uniquely, or None."""
    if not items or not all(isinstance(x, dict) for x in items):
        return None
    for field in IDENTITY_FIELDS:
        values = [x.get(field) for x in items]
        named = all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values)
        if named and len(set(values)) == len(values):
            return field
    return None


def differences(old: Any, new: Any, rtol: float = 0.0, atol: float = 0.0, extra_ignored: frozenset[str] = frozenset(),
                path: str = "") -> Iterator[str]:
    """One line per differing field between two parsed summaries (see the module docstring)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            if ignored(str(key), extra_ignored):
                continue
            sub = f"{path}.{key}" if path else str(key)
            if key not in new:
                yield f"{sub}: only in OLD ({_show(old[key])})"
            elif key not in old:
                yield f"{sub}: only in NEW ({_show(new[key])})"
            else:
                yield from differences(old[key], new[key], rtol, atol, extra_ignored, sub)
        return
    if isinstance(old, list) and isinstance(new, list):
        field = _identity(old)
        if field is not None and _identity(new) == field:
            olds, news = {x[field]: x for x in old}, {x[field]: x for x in new}
            for ident in [*olds, *(k for k in news if k not in olds)]:
                sub = f"{path}[{ident}]"
                if ident not in news:
                    yield f"{sub}: only in OLD"
                elif ident not in olds:
                    yield f"{sub}: only in NEW"
                else:
                    yield from differences(olds[ident], news[ident], rtol, atol, extra_ignored, sub)
            return
        for i in range(max(len(old), len(new))):
            sub = f"{path}[{i}]"
            if i >= len(new):
                yield f"{sub}: only in OLD ({_show(old[i])})"
            elif i >= len(old):
                yield f"{sub}: only in NEW ({_show(new[i])})"
            else:
                yield from differences(old[i], new[i], rtol, atol, extra_ignored, sub)
        return
    if _number(old) and _number(new):
        if not _same_number(float(old), float(new), rtol, atol):
            yield f"{path}: {old!r} -> {new!r} (difference {float(new) - float(old):+.6g})"
        return
    if type(old) is not type(new) or old != new:
        yield f"{path}: {_show(old)} -> {_show(new)}"


def _show(x: Any, limit: int = 80) -> str:
    text = json.dumps(x, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"compare_summaries: cannot read {path}: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--rtol", type=float, default=0.0, help="relative tolerance for numbers (default 0: exact)")
    ap.add_argument("--atol", type=float, default=0.0, help="absolute tolerance for numbers (default 0: exact)")
    ap.add_argument("--ignore", action="append", default=[], metavar="KEY", help="also ignore this key (repeatable)")
    args = ap.parse_args(argv)
    try:
        old, new = _read(args.old), _read(args.new)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    diffs = list(differences(old, new, args.rtol, args.atol, frozenset(args.ignore)))
    for line in diffs:
        print(line)
    tol = f" (rtol {args.rtol:g}, atol {args.atol:g})" if args.rtol or args.atol else " (numbers exactly)"
    print(f"{len(diffs)} differing field(s) between {args.old} and {args.new}{tol}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
