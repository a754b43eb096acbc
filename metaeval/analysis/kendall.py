"""Kendall-type rank correlations, vectorised over leading axes so they run inside a bootstrap.

All functions take a *reference* ``x`` and a *candidate* ``y`` of shape ``(..., n)`` and return one value per
leading index.  ``NaN`` marks a missing item: a pair is used only when both items are present on both sides.
All ``n (n - 1) / 2`` pairs are visited (vectorised over the leading axes), which is fast for the sizes of meta-evaluation (tens of runs) and
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

* **tau_AP-b** (Urbano & Marrero 2017, "The treatment of ties in AP correlation", ICTIR; ``ircor::tauAP_b``
  and pyircor ``tauap_b``, the ``tauap_b`` of TREC AutoJudge's ``autojudge-evaluate``), for two estimated
  rankings that may both hold ties: the mean of both directions of the formula above with tied-in-the-other-
  ranking pairs credited 0 instead of 1/2, ``tau_APb = (tau_AP0(y | x) + tau_AP0(x | y)) / 2``.  Equals
  ``ap_sym`` without ties; checked against pyircor's published test values.

* **kendall@k** (top-heavy, as ``kendall@10`` of ``autojudge-evaluate``): tau-b over the ``k`` items the
  *reference* ranks highest (:func:`kendall_at_k`; ties at the k-th place broken by position, i.e. run id).

**Algorithms.**  The batch functions visit all O(n^2) pairs - fast for tens of runs and for whole ``(B, n)``
bootstrap matrices.  A single long vector (``n > 256``, e.g. a pooled tau over thousands of cells) is computed
from the table of its distinct value pairs with cumulative sums (few distinct values, as nugget scores), else by
Knight's (1966) O(n log n) algorithm as implemented in ``scipy.stats.kendalltau`` (tau-a from the same S and
the tie counts), so :func:`kendall` is the one entry point for every size; the tests check every path against
each other and against scipy.

``TAU_VARIANTS`` maps a variant name to its batch function; :func:`kendall` dispatches on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from metaeval.errors import ConfigError

__all__ = ["TAU_VARIANTS", "TauVariant", "get_variant", "kendall", "kendall_at_k", "tau_a", "tau_ap", "tau_ap_b",
           "tau_ap_sym", "tau_b"]


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


#: scores are rounded to this many decimals before ranking, so values that are equal in exact arithmetic but differ
#: in the last bits (a mean summed in another order, on another machine or BLAS) tie deterministically instead of
#: ordering by floating-point noise; score differences that matter are many orders of magnitude larger
TIE_DECIMALS = 10


def settle(a: np.ndarray) -> np.ndarray:
    """``a`` as float, rounded to ``TIE_DECIMALS`` decimals (NaN stays NaN): the values every tau ranks."""
    return np.round(np.asarray(a, dtype=float), TIE_DECIMALS)


_CHUNK_ELEMENTS = 4_000_000  # pair-matrix elements per chunk: bounds memory for many runs x many replicates


def _chunked(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Apply a pairwise batch function in slices of the flattened leading axes (same result, bounded memory)."""

    def wrapper(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = settle(x)
        y = settle(y)
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


_SMALL = 200_000  # pair-matrix elements below which the one-shot form beats the per-item loop


def _pair_counts(x: np.ndarray, y: np.ndarray):
    """``(S, n0, n1, n2)`` along the last axis: concordant minus discordant, usable pairs, pairs tied in x / y.

    Small inputs form the ``(..., n, n)`` sign matrices at once; larger ones visit pairs ``(i, j > i)`` one ``i``
    at a time (``n - 1`` vectorised slices over the leading axes), which keeps temporaries at ``O(B n)`` and is
    several times faster than forming ``(B, n, n)`` matrices for a ``(1000, 45)`` bootstrap.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"reference and candidate shapes differ: {x.shape} vs {y.shape}")
    n = x.shape[-1]
    lead = x.shape[:-1]
    if int(np.prod(lead)) * n * n <= _SMALL:  # small: one shot over the full (..., n, n) sign matrices
        with np.errstate(invalid="ignore"):
            sx = np.sign(x[..., :, None] - x[..., None, :])
            sy = np.sign(y[..., :, None] - y[..., None, :])
        v = ~(np.isnan(sx) | np.isnan(sy))
        np.einsum("...ii->...i", v)[...] = False  # no pair of an item with itself
        sx, sy = np.where(v, sx, 0.0), np.where(v, sy, 0.0)
        half = lambda a: np.count_nonzero(a, axis=(-2, -1)) / 2.0  # noqa: E731
        return ((sx * sy).sum(axis=(-2, -1)) / 2.0, half(v), half((sx == 0) & v), half((sy == 0) & v))
    s, n0, n1, n2 = (np.zeros(lead) for _ in range(4))
    missing = bool(np.isnan(x).any() or np.isnan(y).any())
    with np.errstate(invalid="ignore"):
        for i in range(n - 1):
            sx = np.sign(x[..., i + 1:] - x[..., i:i + 1])
            sy = np.sign(y[..., i + 1:] - y[..., i:i + 1])
            if missing:
                v = ~(np.isnan(sx) | np.isnan(sy))
                sx, sy = np.where(v, sx, 0.0), np.where(v, sy, 0.0)
                n0 += np.count_nonzero(v, axis=-1)
                n1 += np.count_nonzero((sx == 0) & v, axis=-1)
                n2 += np.count_nonzero((sy == 0) & v, axis=-1)
            else:
                n0 += n - 1 - i
                n1 += np.count_nonzero(sx == 0, axis=-1)
                n2 += np.count_nonzero(sy == 0, axis=-1)
            s += np.einsum("...k,...k->...", sx, sy)
    return s, n0, n1, n2


@_chunked
def tau_b_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b along the last axis (equals ``scipy.stats.kendalltau(x, y).statistic`` per row)."""
    s, n0, n1, n2 = _pair_counts(x, y)
    return _div(s, np.sqrt((n0 - n1) * (n0 - n2)))


@_chunked
def tau_a_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-a along the last axis: (concordant - discordant) / all usable pairs."""
    s, n0, _, _ = _pair_counts(x, y)
    return _div(s, n0)


def _tau_ap(x: np.ndarray, y: np.ndarray, tie_credit: float) -> np.ndarray:
    """``tau_AP(y | x)`` along the last axis; pairs tied in ``x`` credited ``tie_credit`` (one item at a time)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"reference and candidate shapes differ: {x.shape} vs {y.shape}")
    lead = x.shape[:-1]
    x_ok = ~np.isnan(x)
    n = x.shape[-1]
    if int(np.prod(lead)) * n * n <= _SMALL:  # one shot: above[..., i, j] = j strictly above i in the candidate
        with np.errstate(invalid="ignore"):
            above = (y[..., None, :] > y[..., :, None]) & x_ok[..., None, :]
            p = np.count_nonzero(above, axis=-1)
            c = (np.count_nonzero(above & (x[..., None, :] > x[..., :, None]), axis=-1)
                 + tie_credit * np.count_nonzero(above & (x[..., None, :] == x[..., :, None]), axis=-1))
            used = (p > 0) & x_ok
            per = np.where(used, 2.0 * c / np.maximum(p, 1) - 1.0, 0.0)
        return _div(per.sum(axis=-1), used.sum(axis=-1))
    total, used_n = np.zeros(lead), np.zeros(lead)
    with np.errstate(invalid="ignore", divide="ignore"):
        for i in range(x.shape[-1]):
            xi, yi = x[..., i:i + 1], y[..., i:i + 1]
            above = (y > yi) & x_ok  # j strictly above i in the candidate, present on both sides
            p = np.count_nonzero(above, axis=-1)
            c = np.count_nonzero(above & (x > xi), axis=-1) + tie_credit * np.count_nonzero(above & (x == xi), axis=-1)
            used = (p > 0) & ~np.isnan(xi[..., 0])
            total += np.where(used, 2.0 * c / np.maximum(p, 1) - 1.0, 0.0)
            used_n += used
    return _div(total, used_n)


@_chunked
def tau_ap_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """AP correlation ``tau_AP(candidate y | reference x)`` along the last axis, with the module's tie policy."""
    return _tau_ap(x, y, 0.5)


def tau_ap_sym_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Symmetric AP correlation: mean of ``tau_AP(y | x)`` and ``tau_AP(x | y)``."""
    return 0.5 * (tau_ap_batch(x, y) + tau_ap_batch(y, x))


@_chunked
def tau_ap_b_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """tau_AP-b (Urbano & Marrero 2017): mean of both directions, pairs tied in the other ranking credited 0.

    With credit 0 both directions share the numerator ``c_i = #{j : x_j > x_i and y_j > y_i}``; only the
    denominators differ (``#{y_j > y_i}`` and ``#{x_j > x_i}``), so one pass over the items gives both.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"reference and candidate shapes differ: {x.shape} vs {y.shape}")
    lead = x.shape[:-1]
    ok = ~(np.isnan(x) | np.isnan(y))
    sums = {d: np.zeros(lead) for d in ("tx", "ux", "ty", "uy")}

    def add(c, px, py, present):
        for key, p in (("y", py), ("x", px)):  # direction "y": positions from y (tau_AP0(y | x)); "x": reverse
            used = (p > 0) & present
            sums[f"t{key}"] += np.where(used, 2.0 * c / np.maximum(p, 1) - 1.0, 0.0).sum(axis=-1) if c.ndim > len(lead) \
                else np.where(used, 2.0 * c / np.maximum(p, 1) - 1.0, 0.0)
            sums[f"u{key}"] += used.sum(axis=-1) if c.ndim > len(lead) else used

    n = x.shape[-1]
    with np.errstate(invalid="ignore"):
        if int(np.prod(lead)) * n * n <= _SMALL:
            ax = (x[..., None, :] > x[..., :, None]) & ok[..., None, :]
            ay = (y[..., None, :] > y[..., :, None]) & ok[..., None, :]
            add(np.count_nonzero(ax & ay, axis=-1), np.count_nonzero(ax, axis=-1), np.count_nonzero(ay, axis=-1), ok)
        else:
            for i in range(n):
                ax = (x > x[..., i:i + 1]) & ok
                ay = (y > y[..., i:i + 1]) & ok
                add(np.count_nonzero(ax & ay, axis=-1), np.count_nonzero(ax, axis=-1), np.count_nonzero(ay, axis=-1),
                    ok[..., i])
    return 0.5 * (_div(sums["ty"], sums["uy"]) + _div(sums["tx"], sums["ux"]))


@dataclass(frozen=True)
class TauVariant:
    """A rank-correlation variant: ``batch(x, y)`` over the last axis; ``kind`` selects the pooled kernel."""

    name: str
    label: str
    batch: Callable[[np.ndarray, np.ndarray], np.ndarray]
    kind: str  # "pairs" (tau-a/b family) or "ap" (tau_AP family)
    symmetric: bool
    tie_credit: float = 0.5  # tau_AP family: credit of a pair tied in the reference


#: variant name -> definition.  ``b`` is the default everywhere.
TAU_VARIANTS: dict[str, TauVariant] = {
    "b": TauVariant("b", "Kendall tau-b", tau_b_batch, "pairs", True),
    "a": TauVariant("a", "Kendall tau-a", tau_a_batch, "pairs", True),
    "ap": TauVariant("ap", "tau_AP(candidate | reference)", tau_ap_batch, "ap", False),
    "ap_sym": TauVariant("ap_sym", "tau_AP symmetric (mean of both directions)", tau_ap_sym_batch, "ap", True),
    "ap_b": TauVariant("ap_b", "tau_AP-b (Urbano & Marrero 2017)", tau_ap_b_batch, "ap", True, 0.0),
}

_ALIASES = {"tau_b": "b", "taub": "b", "tau-b": "b", "tau_a": "a", "taua": "a", "tau-a": "a",
            "tau_ap": "ap", "tauap": "ap", "tau-ap": "ap", "tau_ap_sym": "ap_sym",
            "tau_ap_b": "ap_b", "tauap_b": "ap_b", "tau-ap-b": "ap_b", "tauapb": "ap_b"}


def get_variant(name: str) -> TauVariant:
    """Look up a variant by name (``b``, ``a``, ``ap``, ``ap_sym``; ``tau_b`` etc. accepted)."""
    key = _ALIASES.get(str(name).strip().lower(), str(name).strip().lower())
    if key not in TAU_VARIANTS:
        raise ConfigError(f"unknown tau variant {name!r}; expected one of {', '.join(TAU_VARIANTS)}")
    return TAU_VARIANTS[key]


_LONG = 256  # 1-D inputs longer than this use the O(n log n) path for tau-a / tau-b


def _tau_long(x: np.ndarray, y: np.ndarray, name: str) -> float:
    """tau-b (or tau-a) of two long 1-D vectors without forming pairs.

    With ``K_x`` / ``K_y`` distinct values and the ``K_x x K_y`` count table ``H``, ``S = sum H * (S_x H S_y') / 2``
    where ``S_x[a, c] = sign(a - c)``; both products are cumulative sums, so the cost is ``O(n log n + K_x K_y)``
    (scores made of nugget fractions have few distinct values).  With too many distinct values for the table,
    Knight's (1966) O(n log n) algorithm as implemented in ``scipy.stats.kendalltau``.
    """
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    n = len(x)
    if n < 2:
        return float("nan")
    ux, cx = np.unique(x, return_inverse=True)
    uy, cy = np.unique(y, return_inverse=True)
    kx, ky = len(ux), len(uy)
    h = np.bincount(cx.ravel() * ky + cy.ravel(), minlength=kx * ky).reshape(kx, ky).astype(float)
    pairs = lambda c: float((c * (c - 1) / 2).sum())  # noqa: E731
    n0, n1, n2 = n * (n - 1) / 2.0, pairs(h.sum(axis=1)), pairs(h.sum(axis=0))
    den = np.sqrt((n0 - n1) * (n0 - n2))
    if den <= 0:
        return float("nan")
    if kx * ky <= 4_000_000:
        c = np.cumsum(h, axis=0)
        a = (c - h) - (c[-1:] - c)  # sum_c sign(a - c) H[c, d]
        c2 = np.cumsum(a, axis=1)
        g = (c2 - a) - (c2[:, -1:] - c2)  # ... then sum_d sign(b - d)
        s = float((h * g).sum()) / 2.0
        tb = s / den
    else:
        from scipy.stats import kendalltau

        tb = float(kendalltau(x, y).statistic)
    return tb if name == "b" else float(tb * den / n0)


def kendall(x, y, variant: str = "b") -> float | np.ndarray:
    """Rank correlation of ``y`` (candidate) with ``x`` (reference); a float for 1-D input."""
    v = get_variant(variant)
    x = settle(x)
    y = settle(y)
    if x.ndim == 1 and x.shape == y.shape and len(x) > _LONG and v.name in ("a", "b"):
        return _tau_long(x, y, v.name)
    out = v.batch(x, y)
    return float(out) if np.ndim(out) == 0 else out


def kendall_at_k(x, y, k: int = 10, variant: str = "b") -> float | np.ndarray:
    """Top-heavy tau: ``variant`` over the ``k`` items the reference ``x`` ranks highest (batched over leading
    axes; items outside the top k are masked as missing).  With ``k >= n`` it is the plain tau."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    order = np.argsort(np.where(np.isnan(x), np.inf, -x), axis=-1, kind="stable")[..., :int(k)]
    xt, yt = np.take_along_axis(x, order, axis=-1), np.take_along_axis(y, order, axis=-1)
    out = get_variant(variant).batch(xt, yt)  # NaN x (fewer than k present) stays missing
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


def tau_ap_b(x, y) -> float:
    """tau_AP-b of two rankings (symmetric; Urbano & Marrero 2017)."""
    return kendall(x, y, "ap_b")
