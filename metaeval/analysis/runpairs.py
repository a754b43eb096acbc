"""Run pairs that the candidate orders differently from the reference ("flips"), with the reference's own evidence.

For runs ``a < b`` (``m = R (R - 1) / 2`` pairs) the per-topic differences of the reference are
``d_t = x[t, a] - x[t, b]`` over the topics both runs answered.  A pair is a **flip** when the reference run
means and the candidate run means order it in opposite directions.  Whether the reference itself separates the
pair is tested over topics with a paired test (registry :data:`PAIRED_TESTS`, two-sided):

* ``t``: paired t-test ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` df (equals
  ``scipy.stats.ttest_rel``); a pair with zero variance is significant iff its mean difference is not 0.
* ``permutation``: sign-flip randomisation test of ``mean(d) = 0`` (Fisher 1935; e.g. Smucker, Allan &
  Carterette 2007, CIKM).  Statistic ``|sum_t s_t d_t|`` over sign vectors ``s``.  **Exact** whenever enumeration
  is feasible - at most ``exact_max_topics`` topics, or ``2^(n-1)`` times the number of pairs to test at most
  ``exact_budget`` (2^24: e.g. one pair with 25 topics, or 16 pairs with 21): all ``2^(n-1)`` sign vectors with
  ``s_1 = +1`` (the statistic is symmetric in ``s -> -s``), enumerated in blocks, ``p = #{|S*| >= |S|} /
  2^(n-1)``, smallest possible ``p = 2^-(n-1)``.  Otherwise **Monte Carlo,
  drawn until the decision at alpha is stable**: random sign vectors (stream ``random_streams.stream(seed,
  "analysis.sign_flip")``) in doubling batches, ``p = (1 + #{|S*| >= |S|}) / (1 + L)`` with ``L`` the pair's draws
  (Phipson & Smyth 2010, a valid p-value).  After each batch the exact p's Clopper-Pearson interval at
  confidence ``1 - decision_error`` (default ``1 - 1e-3``) is computed from the hits; a pair stops once that
  interval lies above alpha (not significant - whatever more draws show) or below alpha with at least
  ``L_res = ceil(resolution * m / alpha)`` draws (so the smallest p, ``1 / (1 + L_res) < alpha / m``, can reach
  Holm's first threshold), else it draws on up to ``max_draws``; a pair still undecided there is settled by exact
  enumeration when that fits ``exact_budget`` (else counted in ``info["undecided"]``).  (The former rule - stop after 20 exceedances - printed 0.056 for a pair whose exact p
  is 0.047.)  A pair whose evidence is beyond what ``L_res`` draws could resolve skips them: Hoeffding's
  inequality for Rademacher sums gives ``P(|S*| >= |S|) <= 2 exp(-S^2 / (2 sum_t d_t^2))``; when that bound is
  below ``1 / (1 + L_res)`` the pair's p is reported **as that upper bound** (``kind = "hoeffding_bound"``: the
  exact p is at most this; it can be far smaller), never as an estimate.  Each pair's ``kind`` is ``exact``,
  ``monte_carlo`` or ``hoeffding_bound``.

**Multiple comparisons.**  ``ref_significant`` is per pair at ``alpha`` (no correction);
``ref_significant_holm`` is Holm's (1979) step-down over all ``m`` pairs at family-wise level ``alpha``:
sort the p-values ``p_(1) <= ... <= p_(m)``, reject ``H_(k)`` while ``p_(k) <= alpha / (m - k + 1)``
(equals ``statsmodels.stats.multitest.multipletests(method="holm")``).  The summary reports
``min_attainable_p`` and ``holm_reachable`` (whether the test's resolution can go below ``alpha / m``) with a
one-line ``holm_note`` when it cannot.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from metaeval.analysis.kendall import _div

__all__ = ["PAIRED_TESTS", "holm", "holm_adjusted", "paired_t", "run_flips", "sign_flip"]

_CHUNK = 4_000_000  # elements of a (draws x pairs) block


def paired_t(d: np.ndarray, **_: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided paired t-test per column of ``d`` (topics x pairs, NaN = missing): ``(p, min_attainable_p)``."""
    from scipy.special import stdtr

    ok = ~np.isnan(d)
    n = ok.sum(axis=0)
    mean = _div(np.where(ok, d, 0.0).sum(axis=0), n)
    var = _div((np.where(ok, d - mean, 0.0) ** 2).sum(axis=0), n - 1)
    sd = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    p = 2.0 * stdtr(np.maximum(n - 1, 1), -np.abs(t))
    p = np.where(sd == 0, np.where(mean == 0, 1.0, 0.0), p)
    p = np.where(n >= 2, p, np.nan)
    return p, np.where(n >= 2, 0.0, np.nan)


def _exact_signs(n: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Sign vectors ``start .. stop - 1`` (default: all ``2^(n-1)``) of length ``n`` with the first sign +1, as a
    float matrix; vector ``c`` has sign ``-1`` at topic ``k + 1`` where bit ``k`` of ``c`` is set."""
    stop = 2 ** (n - 1) if stop is None else stop
    codes = np.arange(start, stop, dtype=np.int64)[:, None]
    bits = (codes >> np.arange(n - 1, dtype=np.int64)) & 1
    return np.hstack([np.ones((len(codes), 1)), 1.0 - 2.0 * bits])


def _clopper_pearson(hits: np.ndarray, n: np.ndarray, error: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact binomial interval for ``hits / n`` at confidence ``1 - error`` (Clopper & Pearson 1934)."""
    from scipy.special import betaincinv

    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(hits > 0, betaincinv(hits, n - hits + 1, error / 2), 0.0)
        hi = np.where(hits < n, betaincinv(hits + 1, n - hits, 1 - error / 2), 1.0)
    return lo, hi


def sign_flip(d: np.ndarray, seed: int | np.random.Generator = 0, *, n_tests: int | None = None,
              alpha: float = 0.05, resolution: float = 4.0, first_batch: int = 1000, decision_error: float = 1e-3,
              max_draws: int = 2_000_000, exact_max_topics: int = 16,
              exact_budget: int = 2 ** 24) -> tuple[np.ndarray, np.ndarray, dict]:
    """Sign-flip test per column of ``d`` (topics x pairs); see the module docstring.

    Returns ``(p, min_attainable_p, info)`` with ``info = {method, exact, draws_max, kind, undecided, ...}``;
    ``kind`` holds per column ``exact``, ``monte_carlo`` or ``hoeffding_bound`` (``p`` is then an upper bound).
    ``n_tests`` (default: the number of columns) and ``alpha`` set the resolution ``alpha / n_tests``.
    """
    d = np.asarray(d, dtype=float)
    ok = ~np.isnan(d)
    d0 = np.where(ok, d, 0.0)
    t_count, m = d0.shape
    obs = np.abs(d0.sum(axis=0))
    tol = 1e-9 * np.maximum(obs, 1e-12)
    n = ok.sum(axis=0)
    p = np.full(m, np.nan)
    live = n >= 1
    p[live & (obs <= tol)] = 1.0  # all differences zero (or summing to 0): no evidence
    todo = live & (obs > tol)
    n_signs = 2 ** (max(t_count, 1) - 1)
    cols = np.nonzero(todo)[0]
    nnz = (d0 != 0).sum(axis=0)
    if t_count <= exact_max_topics or (t_count <= 40 and n_signs * len(cols) <= exact_budget):
        p[cols] = _exact_p(d0, cols, obs, tol)
        info = {"method": "exact sign-flip", "exact": True, "draws_max": int(n_signs),
                "kind": np.where(live, "exact", None), "undecided": 0}
        return p, np.where(live, 2.0 ** -(np.maximum(nnz, 1) - 1), np.nan), info
    from metaeval.analysis.resample import as_generator

    target = alpha / max(int(n_tests or m), 1)
    l_res = int(min(max_draws, max(first_batch, math.ceil(resolution / target))))
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.minimum(1.0, 2.0 * np.exp(-obs ** 2 / (2.0 * (d0 ** 2).sum(axis=0))))
    sure = todo & (bound < 1.0 / (1.0 + l_res))  # beyond the draws' resolution: report the tail bound, as a bound
    p[sure] = bound[sure]
    todo &= ~sure
    hits, draws = _draw_until_stable(d0, todo, obs, tol, as_generator(seed, "analysis.sign_flip"), alpha=alpha,
                                     l_res=l_res, first_batch=first_batch, max_draws=max_draws,
                                     decision_error=decision_error)
    p[todo] = (1.0 + hits[todo]) / (1.0 + draws[todo])
    kind = np.where(sure, "hoeffding_bound", np.where(live, "monte_carlo", None)).astype(object)
    lo, hi = _clopper_pearson(hits, draws, decision_error)
    undecided = np.nonzero(todo & (lo <= alpha) & (hi >= alpha))[0]
    if len(undecided) and t_count <= 40 and n_signs * len(undecided) <= exact_budget:  # settle them exactly
        p[undecided] = _exact_p(d0, undecided, obs, tol)
        kind[undecided] = "exact"
        undecided = undecided[:0]
    min_p = np.where(live, np.where(kind == "exact", 2.0 ** -(np.maximum(nnz, 1) - 1), 1.0 / (1.0 + l_res)), np.nan)
    info = {"method": "Monte Carlo sign-flip, drawn until the decision at alpha is stable", "exact": False,
            "draws_max": int(draws.max(initial=0)), "draws_resolution": l_res, "decision_error": decision_error,
            "kind": kind, "undecided": int(len(undecided)), "n_hoeffding": int(sure.sum())}
    return p, min_p, info


def _exact_p(d0: np.ndarray, cols: np.ndarray, obs: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Exact sign-flip p of columns ``cols``: the share of all ``2^(n-1)`` sign vectors (enumerated in blocks of
    at most ``_CHUNK`` elements) with ``|S*| >= |S|``."""
    t_count = max(d0.shape[0], 1)
    n_signs = 2 ** (t_count - 1)
    hits = np.zeros(len(cols))
    block = max(1, _CHUNK // max(len(cols), 1))
    for start in range(0, n_signs, block):
        signs = _exact_signs(t_count, start, min(start + block, n_signs))
        hits += (np.abs(signs @ d0[:, cols]) >= obs[cols] - tol[cols]).sum(axis=0)
    return hits / n_signs


def _draw_until_stable(d0: np.ndarray, todo: np.ndarray, obs: np.ndarray, tol: np.ndarray, rng: np.random.Generator,
                       *, alpha: float, l_res: int, first_batch: int, max_draws: int,
                       decision_error: float) -> tuple[np.ndarray, np.ndarray]:
    """Random sign vectors in doubling batches for the columns in ``todo``, each column until its decision at
    ``alpha`` is stable (see the module docstring); returns per column ``(hits, draws)``."""
    m, t_count = d0.shape[1], d0.shape[0]
    hits, draws = np.zeros(m), np.zeros(m)
    alive = todo.copy()
    batch = first_batch
    while alive.any():
        cols = np.nonzero(alive)[0]
        k_all = int(min(batch, max_draws - draws[cols].max()))
        rows = max(1, _CHUNK // max(len(cols), 1))
        for s in range(0, k_all, rows):
            k = min(rows, k_all - s)
            signs = rng.integers(0, 2, size=(k, t_count)).astype(float) * 2.0 - 1.0
            hits[cols] += (np.abs(signs @ d0[:, cols]) >= obs[cols] - tol[cols]).sum(axis=0)
        draws[cols] += k_all
        batch *= 2
        lo, hi = _clopper_pearson(hits[cols], draws[cols], decision_error)
        stable = (lo > alpha) | ((hi < alpha) & (draws[cols] >= l_res))
        alive[cols[stable | (draws[cols] >= max_draws)]] = False
    return hits, draws


def _t_test(d: np.ndarray, **kw: Any) -> tuple[np.ndarray, np.ndarray, dict]:
    p, min_p = paired_t(d)
    return p, min_p, {"method": "paired t", "exact": True, "kind": np.where(np.isnan(p), None, "t"), "undecided": 0}


#: name -> function(differences topics x pairs, seed=..., n_tests=..., alpha=...) -> (p, min_attainable_p, info)
#: with ``info["kind"]`` per pair (what its p is: ``t``, ``exact``, ``monte_carlo``, ``hoeffding_bound``).
PAIRED_TESTS: dict[str, Callable[..., tuple[np.ndarray, np.ndarray, dict]]] = {"t": _t_test, "permutation": sign_flip}


def holm(p: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Holm's step-down rejections at family-wise level ``alpha``; NaN p-values are never rejected and do not
    count in ``m`` (as statsmodels ``multipletests(method="holm")`` on the defined p-values)."""
    p = np.asarray(p, dtype=float)
    out = np.zeros(len(p), dtype=bool)
    idx = np.nonzero(~np.isnan(p))[0]
    m = len(idx)
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="mergesort")]
    thresholds = alpha / (m - np.arange(m))
    passed = p[order] <= thresholds
    k = m if passed.all() else int(np.argmin(passed))  # first failure stops the step-down
    out[order[:k]] = True
    return out


def holm_adjusted(p: np.ndarray) -> np.ndarray:
    """Holm's (1979) adjusted p-values: with the defined p-values sorted ``p_(1) <= ... <= p_(m)``,
    ``p~_(k) = max_{j <= k} min(1, (m - j + 1) p_(j))``; ``p~_i <= alpha`` exactly when :func:`holm` rejects
    ``H_i`` at ``alpha``.  NaN stays NaN and does not count in ``m`` (as statsmodels
    ``multipletests(method="holm")[1]`` on the defined p-values)."""
    p = np.asarray(p, dtype=float)
    out = np.full(len(p), np.nan)
    idx = np.nonzero(~np.isnan(p))[0]
    m = len(idx)
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="mergesort")]
    out[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return out


def run_flips(al: Any, candidate: int = 0, test: str = "t", alpha: float = 0.05,
              seed: int | np.random.Generator = 0, as_frame: bool = True) -> tuple[dict, Any]:
    """Run pairs whose order differs between the reference and the candidate run means.

    Returns a summary (``n_pairs, n_flips, n_flips_ref_significant, n_ref_significant, n_*_holm,
    n_tied_reference, n_tied_candidate, test, alpha, min_attainable_p, holm_threshold, holm_reachable,
    holm_note, p_method, n_p_bounds, n_undecided_at_alpha, p_note``) and a table of every pair (``metric, run_a,
    run_b, ref_diff, cand_diff, p_ref, p_ref_kind, ref_significant, ref_significant_holm, flip``; ``p_ref_kind``
    says what ``p_ref`` is: ``t``, ``exact``, ``monte_carlo`` or ``hoeffding_bound``, an upper bound): a DataFrame, or a dict of arrays with
    ``as_frame=False``.
    """
    from metaeval.errors import ConfigError

    if test not in PAIRED_TESTS:
        raise ConfigError(f"unknown paired test {test!r}; expected one of {', '.join(PAIRED_TESTS)}")
    x, y = al.x, al.ys[candidate]
    mask = ~(np.isnan(x) | np.isnan(y))
    xm = np.where(mask, x, np.nan)
    cnt = mask.sum(axis=0)
    mx = _div(np.where(mask, x, 0.0).sum(axis=0), cnt)
    my = _div(np.where(mask, y, 0.0).sum(axis=0), cnt)
    i, j = np.triu_indices(len(al.runs), k=1)
    ref_diff, cand_diff = mx[i] - mx[j], my[i] - my[j]
    m = len(i)
    p, min_p, info = PAIRED_TESTS[test](xm[:, i] - xm[:, j], seed=seed, n_tests=m, alpha=alpha)
    kind = np.asarray(info["kind"], dtype=object)
    sig = p < alpha
    sig_holm = holm(p, alpha)
    flip = np.sign(ref_diff) * np.sign(cand_diff) < 0
    n_tests = int((~np.isnan(p)).sum())
    threshold = alpha / n_tests if n_tests else float("nan")
    best = float(np.nanmin(min_p)) if np.isfinite(min_p).any() else float("nan")
    reachable = bool(n_tests and best <= threshold)
    summary = {
        "n_pairs": int(m), "n_flips": int(flip.sum()), "n_flips_ref_significant": int((flip & sig).sum()),
        "n_ref_significant": int(sig.sum()), "n_flips_ref_significant_holm": int((flip & sig_holm).sum()),
        "n_ref_significant_holm": int(sig_holm.sum()),
        "n_tied_reference": int(((ref_diff == 0) & (cand_diff != 0)).sum()),
        "n_tied_candidate": int(((cand_diff == 0) & (ref_diff != 0)).sum()), "test": test, "alpha": alpha,
        "p_method": info["method"], "n_p_bounds": int((kind == "hoeffding_bound").sum()),
        "n_undecided_at_alpha": int(info.get("undecided", 0)),
        "p_note": (f"p_ref of {int((kind == 'hoeffding_bound').sum())} pair(s) is Hoeffding's upper bound (the "
                   "exact p is at most this), not an estimate" if (kind == "hoeffding_bound").any() else None),
        "multiple_comparisons": "ref_significant: per pair at alpha, no correction; *_holm: Holm (1979) "
                                "step-down over all run pairs",
        "min_attainable_p": best, "holm_threshold": threshold, "holm_reachable": reachable,
        "holm_note": None if reachable else (
            f"Holm cannot be reached: the smallest p the {test} test can give here ({best:.2g}) is above "
            f"alpha/m = {threshold:.2g} ({n_tests} pairs)"),
    }
    runs = np.asarray(al.runs, dtype=object)
    table = {"metric": np.full(m, al.metric, dtype=object), "run_a": runs[i], "run_b": runs[j],
             "ref_diff": ref_diff, "cand_diff": cand_diff, "p_ref": p, "p_ref_kind": kind, "ref_significant": sig,
             "ref_significant_holm": sig_holm, "flip": flip}
    if as_frame:
        import pandas as pd

        table = pd.DataFrame(table)
    return summary, table
