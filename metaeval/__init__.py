"""metaeval: how far can you trust an LLM judge of RAG answers, and how to correct it.

The Python API (``metaeval.api``) is available at the top level, imported on first use so that ``import
metaeval`` and ``metaeval --help`` stay fast::

    import metaeval
    nist = metaeval.load("nugget_assignment.20241108.jl")
    metaeval.leaderboard(metaeval.score(nist))

``load, load_dataset, score, leaderboard, analyze, compare, calibrate, sweep, register_judge, to_latex``; the
layers underneath are importable directly (``metaeval.io``, ``metaeval.scoring``, ``metaeval.analysis`` ...).
"""

from __future__ import annotations

from typing import Any

from metaeval.version import __version__

_API = ("load", "load_dataset", "score", "leaderboard", "analyze", "compare", "calibrate", "sweep",
        "register_judge", "to_latex")

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        import importlib

        value = getattr(importlib.import_module("metaeval.api"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'metaeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
