"""Kendall-type rank correlations, vectorised over leading axes so they run inside a bootstrap.

All functions take a *reference* ``x`` and a *candidate* ``y`` of shape ``(..., n)`` and return one value per
leading index.  ``NaN`` marks a missing item: a pair is used only when both items are present on both sides.
Pairs are formed with O(n^2) sign matrices, which is fast for the sizes of meta-evaluation (tens of runs) and
lets one call handle a whole ``(B, n)`` bootstrap matrix; pooled correlations over thousands of cells use the
block form in :mod:`metaeval.analysis.pooled` instead.

For a pair ``(i, j)`` let ``sx = sign(x_i - x_j)``, ``sy = sign(y_i - y_j)``; ``n0`` is the number of usable
pairs, ``S = sum sx * sy`` (concordant minus discordant), ``n1`` / ``n2`` the pairs tied in ``x`` / ``y``.

* **tau-b** (Kendall 1945, "The treatment of ties in ranking problems", Biometrika 33:239-251; the default,
  as ``scipy.stats.kendalltau`` and the Great Nugget Recall paper)::

      tau_b = S / sqrt((n0 - n1) * (n0 - n2))        (NaN when either side is constant)

* **tau-a** (Kendall 1938): ``tau_a = S / n0`` (ties count as neither concordant nor discordant).

* **tau_AP** (Yilmaz, Aslam and Robertson 2008, "A new rank correlation coefficient for information
  retrieval", SIGIR), top-weighted.  Items are positioned by the **candidate** (the estimated ranking) and
  judged against the **reference** (the true ranking)::

      tau_AP = 2/(n-1) * sum_{i=2..n} C(i)/(i-1) - 1  =  mean_{i=2..n} (2 p_i - 1),   p_i = C(i)/(i-1)

  where ``C(i)`` counts the items above position ``i`` in the candidate that are also above it in the
  reference.  **Tie policy** (the original is defined for rankings without ties): the items "above" ``i`` are
  those with a strictly higher candidate score, so pairs tied in the candidate are ignored; an item with
  nothing strictly above it (e.g. the candidate's top group) is left out of the mean; a pair above ``i`` in
  the candidate but tied with ``i`` in the reference counts 1/2 in ``C(i)``.  Without ties this is exactly
  Yilmaz et al.'s formula; NaN when the candidate is constant.  ``ap`` is this asymmetric
  ``tau_AP(candidate | reference)``; ``ap_sym`` is the mean of both directions.

``TAU_VARIANTS`` maps a variant name to its batch function; :func:`kendall` dispatches on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from metaeval.errors import ConfigError

__all__ = ["TAU_VARIANTS", "TauVariant", "get_variant", "kendall", "tau_a", "tau_ap", "tau_ap_sym", "tau_b"]


def _pairs(x: np.ndarray, y: np.ndarray):
    """Sign matrices ``sx[..., i, j] = sign(x_i - x_j)`` and the usable-pair mask (both present, i != j)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"reference and candidate shapes differ: {x.shape} vs {y.shape}")
    ok = ~(np.isnan(x) | np.isnan(y))
    valid = ok[..., :, None] & ok[..., None, :]
    n = x.shape[-1]
    valid &= ~np.eye(n, dtype=bool)
    with np.errstate(invalid="ignore"):
        sx = np.sign(x[..., :, None] - x[..., None, :])
        sy = np.sign(y[..., :, None] - y[..., None, :])
    return np.where(valid, sx, 0.0), np.where(valid, sy, 0.0), valid


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


_CHUNK_ELEMENTS = 4_000_000  # pair-matrix elements per chunk: bounds memory for many runs x many replicates


def _chunked(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Apply a pairwise batch function in slices of the flattened leading axes (same result, bounded memory)."""

    def wrapper(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.shape != y.shape:
            raise ValueError(f"reference and candidate shapes differ: {x.shape} vs {y.shape}")
        n = x.shape[-1] if x.ndim else 1
        lead = x.shape[:-1]
        rows = int(np.prod(lead)) if lead else 1
        step = max(1, _CHUNK_ELEMENTS // max(n * n, 1))
        if rows <= step:
            return fn(x, y)
        xf, yf = x.reshape(rows, n), y.reshape(rows, n)
        out = np.concatenate([fn(xf[s:s + step], yf[s:s + step]) for s in range(0, rows, step)])
        return out.reshape(lead)

    wrapper.__doc__ = fn.__doc__
    wrapper.__name__ = fn.__name__
    return wrapper


@_chunked
def tau_b_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b along the last axis (equals ``scipy.stats.kendalltau(x, y).statistic`` per row)."""
    sx, sy, valid = _pairs(x, y)
    n0 = valid.sum(axis=(-2, -1)) / 2.0
    s = (sx * sy).sum(axis=(-2, -1)) / 2.0
    n1 = ((sx == 0) & valid).sum(axis=(-2, -1)) / 2.0
    n2 = ((sy == 0) & valid).sum(axis=(-2, -1)) / 2.0
    return _div(s, np.sqrt((n0 - n1) * (n0 - n2)))


@_chunked
def tau_a_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-a along the last axis: (concordant - discordant) / all usable pairs."""
    sx, sy, valid = _pairs(x, y)
    return _div((sx * sy).sum(axis=(-2, -1)) / 2.0, valid.sum(axis=(-2, -1)) / 2.0)


@_chunked
def tau_ap_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """AP correlation ``tau_AP(candidate y | reference x)`` along the last axis, with the module's tie policy."""
    sx, sy, valid = _pairs(x, y)
    # above[..., i, j]: j is strictly above i in the candidate
    above = (sy < 0) & valid
    p_count = above.sum(axis=-1)
    credit = (above * np.where(sx < 0, 1.0, np.where(sx == 0, 0.5, 0.0))).sum(axis=-1)
    used = p_count > 0
    per_item = np.where(used, 2.0 * _div(credit, p_count) - 1.0, 0.0)
    return _div(per_item.sum(axis=-1), used.sum(axis=-1))


def tau_ap_sym_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Symmetric AP correlation: mean of ``tau_AP(y | x)`` and ``tau_AP(x | y)``."""
    return 0.5 * (tau_ap_batch(x, y) + tau_ap_batch(y, x))


@dataclass(frozen=True)
class TauVariant:
    """A rank-correlation variant: ``batch(x, y)`` over the last axis; ``kind`` selects the pooled kernel."""

    name: str
    label: str
    batch: Callable[[np.ndarray, np.ndarray], np.ndarray]
    kind: str  # "pairs" (tau-a/b family) or "ap" (tau_AP family)
    symmetric: bool


#: variant name -> definition.  ``b`` is the default everywhere.
TAU_VARIANTS: dict[str, TauVariant] = {
    "b": TauVariant("b", "Kendall tau-b", tau_b_batch, "pairs", True),
    "a": TauVariant("a", "Kendall tau-a", tau_a_batch, "pairs", True),
    "ap": TauVariant("ap", "tau_AP(candidate | reference)", tau_ap_batch, "ap", False),
    "ap_sym": TauVariant("ap_sym", "tau_AP symmetric (mean of both directions)", tau_ap_sym_batch, "ap", True),
}

_ALIASES = {"tau_b": "b", "taub": "b", "tau-b": "b", "tau_a": "a", "taua": "a", "tau-a": "a",
            "tau_ap": "ap", "tauap": "ap", "tau-ap": "ap", "tau_ap_sym": "ap_sym"}


def get_variant(name: str) -> TauVariant:
    """Look up a variant by name (``b``, ``a``, ``ap``, ``ap_sym``; ``tau_b`` etc. accepted)."""
    key = _ALIASES.get(str(name).strip().lower(), str(name).strip().lower())
    if key not in TAU_VARIANTS:
        raise ConfigError(f"unknown tau variant {name!r}; expected one of {', '.join(TAU_VARIANTS)}")
    return TAU_VARIANTS[key]


def kendall(x, y, variant: str = "b") -> float | np.ndarray:
    """Rank correlation of ``y`` (candidate) with ``x`` (reference); a float for 1-D input."""
    out = get_variant(variant).batch(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    return float(out) if np.ndim(out) == 0 else out


def tau_b(x, y) -> float:
    return kendall(x, y, "b")


def tau_a(x, y) -> float:
    return kendall(x, y, "a")


def tau_ap(x, y) -> float:
    """``tau_AP(y | x)``: positions from ``y`` (candidate), truth from ``x`` (reference)."""
    return kendall(x, y, "ap")


def tau_ap_sym(x, y) -> float:
    return kendall(x, y, "ap_sym")
