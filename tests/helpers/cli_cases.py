"""Shared by the bad-input corpora (tests/integration/test_bad_inputs*.py): every case's CLI run in parallel, and
the one-line-error contract of exit status 2."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence


def run_all(cases: Sequence[Any], base: Path, run_one: Callable[[Any, Path], Any]) -> dict[str, Any]:
    """``run_one(case, base / case.id)`` for every case, three at a time; case id -> its result."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {c.id: pool.submit(run_one, c, base / c.id) for c in cases}
        return {k: f.result() for k, f in futures.items()}


def assert_no_traceback_and_exit(res: Any, rc: int) -> str:
    """No traceback anywhere and exit status ``rc``; returns stdout + stderr."""
    output = res.stdout + res.stderr
    assert "Traceback" not in output, output[-3000:]
    assert res.rc == rc, f"exit {res.rc}, expected {rc}\n{output[-3000:]}"
    return output


def assert_one_error_line(res: Any, must: Sequence[str]) -> None:
    """Exactly one ``: error: `` line, the last thing on stderr, holding every string of ``must``."""
    errors = [ln for ln in res.stderr.splitlines() if ": error: " in ln]
    assert len(errors) == 1, res.stderr  # exactly one error line ...
    assert res.stderr.rstrip().endswith(errors[0]), res.stderr  # ... and it is the last word, nothing after it
    for s in must:
        assert s in errors[0], f"{s!r} not in {errors[0]!r}"
