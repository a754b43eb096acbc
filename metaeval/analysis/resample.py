"""The one topic bootstrap of the package: resampling weights, replicate means, percentile intervals.

**Topic bootstrap** (Efron & Tibshirani 1993, ch. 6; in IR evaluation Sakai 2006, "Evaluating evaluation metrics
based on the bootstrap", SIGIR): the ``T`` topics are resampled with replacement ``B`` times at once.  A
replicate is held as a row of topic *multiplicities* ``w_b`` (how often each topic was drawn, ``sum_t w_bt =
T``), so every statistic that is a weighted sum over topics is computed for all replicates with one matrix
product.

**Random stream.**  :func:`topic_weights` draws the ``(B, T)`` index matrix ``rng.integers(0, T, size=(B, T))``
from a named stream: an int ``seed`` means ``metaeval.random_streams.stream(seed, purpose)`` with ``purpose``
:data:`TOPIC_BOOTSTRAP` (``"analysis.topic_bootstrap"``) unless the caller names another (calibration passes
``"calibration.<what>"``); a ``numpy.random.Generator`` is used as it is (the caller chose its stream).  So every
analysis figure with the same ``analysis.seed`` and the same topics is computed on the same resamples (tau
levels, the paired test, label agreement, run leaderboards, run bias), and ``analysis.seed`` moves all of them.

* :func:`ratio_replicates`: ``(sum_t w_bt n_t) / (sum_t w_bt d_t)`` per replicate - a mean over clusters
  (topics, or a topic's answers) with per-cluster totals ``n_t`` and counts ``d_t``;
* :func:`run_mean_replicates`: its special case of run means ``sum_t w_bt v_tr / sum_t w_bt 1[v_tr present]``;
* :func:`bootstrap_run_means`: estimate, replicates, bootstrap SE and percentile CI of every run mean of a
  ``(T, R)`` score matrix - the bootstrap of a leaderboard;
* interval methods (registry :data:`CI_METHODS`; replicates that are NaN are ignored):

  - ``percentile`` ``[q_{alpha/2}, q_{1-alpha/2}]`` of the replicates, ``q`` numpy's default (linear,
    Hyndman & Fan 1996 type 7) quantile - :func:`percentile_ci` for one statistic, :func:`percentile_cis` for
    the columns of a replicate matrix (the same quantile);
  - ``centered`` (the default of :func:`metaeval.analysis.levels.tau_levels` and ``analyze``): the
    percentile interval shifted so the replicates' mean is the estimate, ``q - (mean* - theta)``, clipped to
    ``[-1, 1]`` - used because the run-level tau of a resample is biased down (a resample holds about 63%
    distinct topics, so its run means are noisier); the percentile interval then tends to sit below the
    estimate, often excluding it;
  - ``bca`` (Efron 1987), bias-corrected and accelerated with a leave-one-topic-out jackknife.

This module imports nothing from the analysis package (only the core ``random_streams``), so every other
module - calibration and planning included - can use it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["CI_METHODS", "TOPIC_BOOTSTRAP", "RunMeanBootstrap", "as_generator", "bca_ci", "bootstrap_run_means",
           "centered_ci", "percentile_ci", "percentile_cis", "ratio_replicates", "run_mean_replicates",
           "topic_weights"]

#: The stream of every analysis topic bootstrap (``metaeval.random_streams.stream(analysis.seed, TOPIC_BOOTSTRAP)``).
TOPIC_BOOTSTRAP = "analysis.topic_bootstrap"


def as_generator(seed: int | np.random.Generator, purpose: str) -> np.random.Generator:
    """``seed`` as a generator: a ``Generator`` as it is, an int as ``random_streams.stream(seed, purpose)``.

    ``None`` (an unseeded draw) is refused by ``random_streams`` with a ``ValueError``: results must reproduce.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    from metaeval.random_streams import stream

    return stream(seed, purpose)


def topic_weights(n_topics: int, n_boot: int, seed: int | np.random.Generator = 0,
                  purpose: str = TOPIC_BOOTSTRAP) -> np.ndarray:
    """``(n_boot, n_topics)`` multiplicities of one topic bootstrap: row ``b`` counts how often each topic was drawn.

    The draws are ``g.integers(0, n_topics, size=(n_boot, n_topics))`` with ``g = as_generator(seed, purpose)``
    (row ``b`` = the ``n_topics`` topics of replicate ``b``), so a seed and a purpose fix the whole stream.
    """
    idx = as_generator(seed, purpose).integers(0, n_topics, size=(n_boot, n_topics))
    flat = idx + n_topics * np.arange(n_boot)[:, None]
    return np.bincount(flat.ravel(), minlength=n_boot * n_topics).reshape(n_boot, n_topics).astype(float)


def ratio_replicates(totals: np.ndarray, counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``out[b, ...] = sum_t w_bt totals_t... / sum_t w_bt counts_t...`` (NaN where the denominator is 0).

    ``totals`` / ``counts``: ``(T,)`` or ``(T, R)`` per-cluster sums and sizes; ``weights``: ``(B, T)``.  The mean
    of a cluster bootstrap (Davison & Hinkley 1997, sec. 3.8): whole clusters are drawn, so within-cluster
    dependence is kept.
    """
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    num = w @ np.asarray(totals, dtype=float)
    den = w @ np.asarray(counts, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def run_mean_replicates(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Run means of a ``(T, R)`` score matrix (NaN = run did not answer the topic) under topic weights ``(B, T)``.

    ``out[b, r] = sum_t w_bt v_tr / sum_t w_bt 1[v_tr present]`` (NaN when the run has no drawn topic).  With
    ``weights = ones((1, T))`` this is the plain run mean over the topics the run answered.
    """
    v = np.asarray(values, dtype=float)
    ok = ~np.isnan(v)
    return ratio_replicates(np.where(ok, v, 0.0), ok.astype(float), weights)


def percentile_cis(reps: np.ndarray, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise percentile intervals of a ``(B, ...)`` replicate array: ``(q_{alpha/2}, q_{1-alpha/2})`` over
    axis 0 with numpy's linear quantile, NaN replicates ignored (a column with none defined gives NaN)."""
    reps = np.asarray(reps, dtype=float)
    if reps.shape[0] == 0:
        nan = np.full(reps.shape[1:], np.nan)
        return nan, nan.copy()
    q = [alpha / 2, 1 - alpha / 2]
    gappy = np.isnan(reps).any(axis=0)
    if not gappy.any():
        lo, hi = np.quantile(reps, q, axis=0)
        return lo, hi
    # Only the columns with NaN take nanquantile's slow path (one 1-D quantile per column); the others take the
    # vectorised np.quantile, which gives the same numbers for a column without NaN (same linear quantile).
    flat, gappy = reps.reshape(reps.shape[0], -1), gappy.reshape(-1)
    lo, hi = np.empty(flat.shape[1]), np.empty(flat.shape[1])
    if not gappy.all():
        lo[~gappy], hi[~gappy] = np.quantile(flat[:, ~gappy], q, axis=0)
    with warnings.catch_warnings():  # an all-NaN column gives NaN limits, no warning
        warnings.simplefilter("ignore", RuntimeWarning)
        lo[gappy], hi[gappy] = np.nanquantile(flat[:, gappy], q, axis=0)
    return lo.reshape(reps.shape[1:])[()], hi.reshape(reps.shape[1:])[()]


def _clean(reps: np.ndarray) -> np.ndarray:
    reps = np.asarray(reps, dtype=float).reshape(-1)
    return reps[~np.isnan(reps)]


def percentile_ci(reps: np.ndarray, alpha: float = 0.05, theta: float | None = None,
                  jack: np.ndarray | None = None) -> tuple[float, float]:
    """Percentile interval ``[q_{alpha/2}, q_{1-alpha/2}]`` of one statistic's replicates (NaN ignored), with
    the quantile of :func:`percentile_cis`."""
    lo, hi = percentile_cis(_clean(reps)[:, None], alpha)
    return (float(lo[0]), float(hi[0]))


@dataclass(frozen=True)
class RunMeanBootstrap:
    """The bootstrap of a leaderboard: per run (column) the mean over its topics and its topic bootstrap."""

    estimate: np.ndarray    # (R,) run mean over the topics the run answered (NaN: none)
    replicates: np.ndarray  # (B, R) run means of the resamples
    se: np.ndarray          # (R,) bootstrap SE: sd of the replicates (ddof=1), NaN with fewer than 2
    ci_low: np.ndarray      # (R,) percentile interval, level 1 - alpha
    ci_high: np.ndarray


def bootstrap_run_means(values: np.ndarray, n_boot: int, seed: int | np.random.Generator = 0, alpha: float = 0.05,
                        purpose: str = TOPIC_BOOTSTRAP, weights: np.ndarray | None = None) -> RunMeanBootstrap:
    """Run means of a ``(T, R)`` score matrix with their topic-bootstrap SE and percentile interval.

    ``estimate_r = mean_t v_tr`` over present cells; replicates :func:`run_mean_replicates` under
    :func:`topic_weights` ``(n_boot, T)`` from ``seed`` / ``purpose`` (or the given ``weights``); ``se_r`` the
    replicates' sd; ``[ci_low, ci_high]`` :func:`percentile_cis`.  Means of values in an interval stay inside
    it, and so do the percentile limits.
    """
    v = np.asarray(values, dtype=float)
    est = run_mean_replicates(v, np.ones((1, v.shape[0])))[0]
    w = weights if weights is not None else topic_weights(v.shape[0], n_boot, seed, purpose)
    reps = run_mean_replicates(v, w)
    lo, hi = percentile_cis(reps, alpha)
    n_ok = (~np.isnan(reps)).sum(axis=0)
    with warnings.catch_warnings():  # columns with fewer than 2 defined replicates: NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        se = np.where(n_ok >= 2, np.nanstd(reps, axis=0, ddof=1), np.nan)
    return RunMeanBootstrap(est, reps, se, lo, hi)


def centered_ci(reps: np.ndarray, alpha: float = 0.05, theta: float | None = None,
                jack: np.ndarray | None = None) -> tuple[float, float]:
    """Percentile interval of the replicates shifted so their mean is ``theta``: ``q - (mean* - theta)``.

    Uses the bootstrap only for the spread and shape; the interval is for the tau a collection of this many
    topics gives and is not moved by the bootstrap's own bias (see the module docstring).  Limits are clipped
    to tau's range [-1, 1] (both of them: with an estimate at 1 and replicates below it, the shifted lower
    limit would otherwise exceed 1).
    """
    reps = _clean(reps)
    if reps.size == 0 or theta is None or np.isnan(theta):
        return (float("nan"), float("nan"))
    lo, hi = percentile_ci(reps - (reps.mean() - theta), alpha)
    return (min(max(-1.0, lo), 1.0), max(min(1.0, hi), -1.0))  # both limits inside tau's range


def bca_ci(reps: np.ndarray, alpha: float = 0.05, theta: float | None = None,
           jack: np.ndarray | None = None) -> tuple[float, float]:
    """Bias-corrected and accelerated interval (Efron 1987, JASA 82:171-185).

    ``z0 = Phi^-1((#{t* < theta} + #{t* = theta}/2) / B)``; acceleration from the leave-one-topic-out jackknife
    ``a = sum(d^3) / (6 (sum d^2)^1.5)``, ``d = mean(t_(i)) - t_(i)``; limits are the replicate quantiles at
    ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` for ``z = z_{alpha/2}, z_{1-alpha/2}``.
    """
    from scipy.special import ndtr, ndtri

    reps = _clean(reps)
    if reps.size == 0 or theta is None or np.isnan(theta):
        return (float("nan"), float("nan"))
    p0 = (np.sum(reps < theta) + 0.5 * np.sum(reps == theta)) / reps.size
    z0 = ndtri(np.clip(p0, 0.5 / reps.size, 1 - 0.5 / reps.size))
    a = 0.0
    if jack is not None:
        j = _clean(jack)
        d = j.mean() - j
        den = 6.0 * (d ** 2).sum() ** 1.5
        a = float((d ** 3).sum() / den) if den > 0 else 0.0
    z = ndtri(np.array([alpha / 2, 1 - alpha / 2]))
    q = ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))
    lo, hi = np.quantile(reps, q)
    return (float(lo), float(hi))


#: CI method name -> function(replicates, alpha, theta, jackknife replicates) -> (low, high).
CI_METHODS: dict[str, Callable[..., tuple[float, float]]] = {
    "percentile": percentile_ci, "centered": centered_ci, "bca": bca_ci,
}
