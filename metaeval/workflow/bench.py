"""The benchmark workflow of ``metaeval bench``: find the repository checkout's benchmark suite
(``benchmarks/runner.py``: not part of the installed package) and run it with the runner's own arguments.
"""

from __future__ import annotations

from typing import Any, Sequence


def benchmark_runner() -> Any:
    """``benchmarks.runner`` from the current directory / sys.path, else from the checkout this package lives in;
    neither is one :class:`~metaeval.errors.MetaevalError` line saying where the suite lives."""
    import importlib
    import importlib.util
    import sys
    from pathlib import Path

    spec = importlib.util.find_spec("benchmarks.runner") if importlib.util.find_spec("benchmarks") else None
    if spec is None:
        checkout = Path(__file__).resolve().parents[2]
        if (checkout / "benchmarks" / "runner.py").is_file():
            sys.path.insert(0, str(checkout))
            spec = importlib.util.find_spec("benchmarks.runner")
    if spec is None:
        from metaeval.errors import MetaevalError

        raise MetaevalError(
            "the benchmark suite is not part of the installed package: it lives in the repository's benchmarks/ "
            "folder (benchmarks/runner.py). Clone the repository and run `metaeval bench` or "
            "`python -m benchmarks` from its root.")
    return importlib.import_module("benchmarks.runner")


def run_benchmarks(argv: Sequence[str], prog: str = "metaeval bench") -> int:
    """The suite run with the runner's arguments ``argv`` (``--reps``, ``--out``, ``--quick`` ...); its exit status."""
    return benchmark_runner().main(list(argv), prog=prog)
