"""The one topic bootstrap of the package: resampling weights, run-mean replicates and interval methods.

**Topic bootstrap** (Efron & Tibshirani 1993; in IR evaluation Sakai 2006, "Evaluating evaluation metrics
based on the bootstrap", SIGIR): the ``T`` topics are resampled with replacement ``B`` times at once.  A
replicate is held as a row of topic *multiplicities* ``w_b`` (how often each topic was drawn, ``sum_t w_bt =
T``), so every statistic that is a weighted sum over topics is computed for all replicates with one matrix
product.  **One random stream per seed**: :func:`topic_weights` draws the ``(B, T)`` index matrix
``rng.integers(0, T, size=(B, T))`` from ``numpy.random.default_rng(seed)``; every caller (tau levels, paired
tests, label agreement, run leaderboards) that passes the same seed and sizes gets the same resamples.

* :func:`run_mean_replicates`: run means ``sum_t w_bt v_tr / sum_t w_bt 1[v_tr present]`` per replicate - the
  bootstrap of a leaderboard (``(B, R)``), e.g. for a judge's run scores with CIs.
* Interval methods (registry :data:`CI_METHODS`; replicates that are NaN are ignored):

  - ``percentile`` ``[q_{alpha/2}, q_{1-alpha/2}]`` of the replicates;
  - ``centered`` (the default of :func:`metaeval.analysis.levels.tau_levels` and ``analyze``): the
    percentile interval shifted so the replicates' mean is the estimate, ``q - (mean* - theta)``, clipped to
    ``[-1, 1]`` - used because the run-level tau of a resample is biased down (a resample holds about 63%
    distinct topics, so its run means are noisier); the percentile interval then tends to sit below the
    estimate, often excluding it;
  - ``bca`` (Efron 1987), bias-corrected and accelerated with a leave-one-topic-out jackknife.

This module imports nothing else from the analysis package, so every other module can use it.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["CI_METHODS", "bca_ci", "centered_ci", "percentile_ci", "run_mean_replicates", "topic_weights"]


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def topic_weights(n_topics: int, n_boot: int, seed: int | np.random.Generator | None = 0) -> np.ndarray:
    """``(n_boot, n_topics)`` multiplicities of one topic bootstrap: row ``b`` counts how often each topic was drawn.

    The draws are ``default_rng(seed).integers(0, n_topics, size=(n_boot, n_topics))`` (row ``b`` = the
    ``n_topics`` topics of replicate ``b``), so a seed fixes the whole stream.
    """
    idx = _rng(seed).integers(0, n_topics, size=(n_boot, n_topics))
    flat = idx + n_topics * np.arange(n_boot)[:, None]
    return np.bincount(flat.ravel(), minlength=n_boot * n_topics).reshape(n_boot, n_topics).astype(float)


def run_mean_replicates(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Run means of a ``(T, R)`` score matrix (NaN = run did not answer the topic) under topic weights ``(B, T)``.

    ``out[b, r] = sum_t w_bt v_tr / sum_t w_bt 1[v_tr present]`` (NaN when the run has no drawn topic).  With
    ``weights = ones((1, T))`` this is the plain run mean over the topics the run answered.
    """
    v = np.asarray(values, dtype=float)
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    ok = ~np.isnan(v)
    num = w @ np.where(ok, v, 0.0)
    den = w @ ok.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _clean(reps: np.ndarray) -> np.ndarray:
    reps = np.asarray(reps, dtype=float).reshape(-1)
    return reps[~np.isnan(reps)]


def percentile_ci(reps: np.ndarray, alpha: float = 0.05, theta: float | None = None,
                  jack: np.ndarray | None = None) -> tuple[float, float]:
    """Percentile interval ``[q_{alpha/2}, q_{1-alpha/2}]`` of the replicates (NaN replicates ignored)."""
    reps = _clean(reps)
    if reps.size == 0:
        return (float("nan"), float("nan"))
    lo, hi = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


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
