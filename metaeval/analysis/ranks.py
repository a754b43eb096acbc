"""Ranks of runs by score: the package's one ranking rule.

**Competition ranks, 1 = best** ("1224" ranking): a run's rank is ``1 + #{runs with a strictly higher score}``,
so equal scores share the best rank of their group and the next rank is skipped.  This is
``scipy.stats.rankdata(-v, method="min")`` on the defined scores (``tests/unit/test_analysis_ranks.py`` checks
it).  Undefined scores (NaN, e.g. a run with no scored topic) are either kept undefined (``nan="keep"``) or all
ranked after every defined score (``nan="last"``: rank ``1 + #defined``).

:func:`ranks` ranks a ``{run_id: score}`` mapping (leaderboards); :func:`rank_array` an array (diagnostics).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

__all__ = ["rank_array", "ranks"]


def rank_array(values: np.ndarray, nan: str = "keep") -> np.ndarray:
    """Competition ranks (float array, 1 = highest) of ``values``; NaN scores NaN (``nan="keep"``) or ranked last
    (``nan="last"``, all sharing rank ``1 + #defined``)."""
    if nan not in ("keep", "last"):
        raise ValueError(f"nan must be 'keep' or 'last', got {nan!r}")
    v = np.asarray(values, dtype=float).reshape(-1)
    ok = ~np.isnan(v)
    d = v[ok]
    out = np.full(len(v), np.nan if nan == "keep" else 1.0 + ok.sum())
    out[ok] = 1.0 + (d[None, :] > d[:, None]).sum(axis=1)  # runs strictly better
    return out


def ranks(values: Mapping[str, float]) -> dict[str, int]:
    """``{run: competition rank}`` of a ``{run: score}`` mapping, 1 = highest; NaN / None last (see module)."""
    keys = list(values)
    v = np.array([np.nan if values[k] is None else float(values[k]) for k in keys], dtype=float)
    return {k: int(r) for k, r in zip(keys, rank_array(v, nan="last"))}
