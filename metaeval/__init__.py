"""metaeval: how far can you trust an LLM judge of RAG answers, and how to correct it.

The Python API (``metaeval.api``) is available at the top level, imported on first use so that ``import
metaeval`` and ``metaeval --help`` stay fast::

    import metaeval
    nist = metaeval.load("nugget_assignment.20241108.jl")
    metaeval.leaderboard(metaeval.score(nist))

``load, load_dataset, score, leaderboard, analyze, compare, run_pairs, calibrate, sweep, register_judge, to_latex``
and the result types ``AnalysisResult, CalibrationResult, SweepResult``; the layers underneath are importable directly
(``metaeval.io``, ``metaeval.scoring``, ``metaeval.analysis`` ...).  ``dir(metaeval)`` lists these names and the
subpackages already imported (no typing helpers).
"""

from metaeval.version import __version__

_API = ("load", "load_dataset", "score", "leaderboard", "analyze", "compare", "run_pairs", "calibrate", "sweep",
        "register_judge", "to_latex", "AnalysisResult", "CalibrationResult", "SweepResult")

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> object:
    if name in _API:
        import importlib

        value = getattr(importlib.import_module("metaeval.api"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'metaeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public API and the subpackages already imported (never helpers such as ``Any`` or ``annotations``)."""
    import types

    subpackages = [k for k, v in globals().items() if isinstance(v, types.ModuleType) and not k.startswith("_")]
    return sorted({"__version__", *_API, *subpackages})
