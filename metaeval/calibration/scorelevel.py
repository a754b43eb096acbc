"""Score-level calibration: corrections that need only paired per-answer scores, so they work for any strategy,
including auto_auto cells whose nuggets differ from the reference's.

Data are dense (topic x run) matrices of per-answer scores from :mod:`metaeval.scoring`: ``H`` (reference, NaN
where the reference has no answer) and ``J`` (judge).  A method is fitted on the training topics ``L`` and
applied to the judge scores of other topics ``U``; the target is the reference run score on ``U`` (the
"applied" estimand, what held-out validation checks).  For run ``r`` with ``n_L`` training and ``n_U`` applied
topics (the topic is the sampling unit, so variances are over topic-level scores and the nugget-level
correlation inside a topic is kept - "topic-clustered"):

* ``none`` (raw): ``theta = mean_U J``; interval ``t_{n_U-1} sd_U(J) / sqrt(n_U)`` (the judge's own topic
  sampling error; it says nothing about the judge's bias, which coverage then shows).
* ``ppi`` (Angelopoulos et al. 2023, Science 382:669): ``theta = mean_U J + mean_L (H - J)``;
  ``Var = s^2(H - J) (1/n_L + 1/n_U)`` since the error is ``mean_L Delta - mean_U Delta``.
* ``ppi_pp`` (PPI++, Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453): ``theta = lambda mean_U J +
  mean_L (H - lambda J)``.  For the applied estimand the variance ``s^2(H - lambda J)(1/n_L + 1/n_U)`` is
  smallest at ``lambda = Cov(H, J) / Var(J)``; one ``lambda`` per cell, pooled over runs from the within-run
  (co)variances (a per-run lambda from ~16 topics is too noisy), clipped to [0, 1].
* ``regression`` (regression calibration): one OLS line ``H = a + b J`` over all training (topic, run) cells;
  each answer becomes ``clip(a + b J, 0, 1)``; ``Var = s^2_r(e) (1/n_L + 1/n_U)`` with the run's training
  residuals ``e`` (it assumes no per-run residual bias; the run-bias simulation shows what happens when that
  fails).

The calibrate workflow's PPI++ interval (``apply_score_method(..., rng=...)``) is instead the union of a t
interval on the run's variance floored at the pooled within-run variance and the run's own bootstrap-t
(:func:`bootstrap_t_bounds`; see :func:`apply_score_method`).  Otherwise every per-run variance ``s^2`` above is
guarded by :func:`moderated_variance` (never below the moderated pooled
estimate, so no interval has zero width when a run's differences happen to be constant on the labelled topics).
Intervals use Student's t with ``n_L - 1`` degrees of freedom (``n_U - 1`` for raw) and are intersected with
[0, 1]: every score lies in [0, 1], so the intersection never lowers coverage, and it keeps every printed
interval inside the range it bounds.  A run with fewer than two training topics gets the pooled (over runs)
rectifier and spread, with the between-run variance of the rectifiers added.

``ppi_mean`` is the classic unclustered PPI / PPI++ mean for i.i.d. rows and the population estimand, written
to agree with ``ppi-python``'s ``ppi_mean_pointestimate`` / ``ppi_mean_ci`` (normal interval, ``ddof = 0``
standard deviations, the ``lambda`` of ADZ23 eq. for the mean); a marked test checks the agreement to 1e-6.
"""

from __future__ import annotations

from dataclasses import dataclass
import numpy as np

from metaeval.calibration.methods.base import REGISTRY, ScoreMethod, get_method, method_names, register


@dataclass
class RunEstimate:
    """Per-run estimates on applied topics: ``est``, ``se``, ``lo``/``hi`` (inside [0, 1]), ``answers`` (T_U, R)."""

    est: np.ndarray
    se: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    answers: np.ndarray


def _t(level: float, df: np.ndarray) -> np.ndarray:
    """Student-t quantile ``t_{df}(0.5 + level / 2)`` elementwise (df below 1 raised to 1; NaN df gives NaN).

    ``scipy.special.stdtrit`` is what ``scipy.stats.t.ppf`` evaluates (``t._ppf``), without the per-call
    argument checking (~0.2 ms, thousands of calls in cross-fitting) and without importing ``scipy.stats``
    (~1 s of the first calibration otherwise); the quantiles of a (level, df) seen before are kept (a copy is
    returned)."""
    df = np.maximum(np.asarray(df, dtype=float), 1.0)
    key = (level, df.shape, df.tobytes())
    q = _T_MEMO.get(key)
    if q is None:  # cross-fitting asks for the same few (level, df) vectors thousands of times
        from scipy.special import stdtrit

        if len(_T_MEMO) >= 256:
            _T_MEMO.clear()
        q = _T_MEMO[key] = stdtrit(df, 0.5 + level / 2.0)
    return q.copy()


_T_MEMO: dict[tuple, np.ndarray] = {}


def bounded(est: np.ndarray, half: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[est - half, est + half]`` intersected with [0, 1] (NaN stays NaN)."""
    with np.errstate(invalid="ignore"):
        return np.clip(est - half, 0.0, 1.0), np.clip(est + half, 0.0, 1.0)


def _col_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column: count of finite values, mean, sample variance (ddof 1; NaN when n < 2)."""
    ok = np.isfinite(x)
    n = ok.sum(axis=0).astype(float)
    x0 = np.where(ok, x, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = x0.sum(axis=0) / n
        var = (np.where(ok, (x - mean) ** 2, 0.0)).sum(axis=0) / (n - 1)
    return n, mean, np.where(n > 1, var, np.nan)


#: prior degrees of freedom of the moderated per-run variance (:func:`moderated_variance`)
PRIOR_DF = 4.0
#: smallest per-run variance of a topic-level score difference: (0.01)^2, one point on a [0, 1] score
VAR_FLOOR = 1e-4


def moderated_variance(var: np.ndarray, n: np.ndarray, prior_df: float = PRIOR_DF,
                       floor: float = VAR_FLOOR) -> np.ndarray:
    """Per-run variance guarded against chance-small values: ``max(s^2_r, s~^2_r, floor)``.

    ``s~^2_r = (d0 s0^2 + d_r s^2_r) / (d0 + d_r)`` is the moderated variance of Smyth (2004, "Linear models and
    empirical Bayes methods for assessing differential expression", SAGMB 3:3): the run's own ``s^2_r`` on
    ``d_r = n_r - 1`` degrees of freedom shrunk toward the pooled ``s0^2 = sum_r d_r s^2_r / sum_r d_r`` with
    prior weight ``d0`` (:data:`PRIOR_DF` = 4, the order of the prior df limma estimates on real data).  Taking the
    maximum with the run's own variance only ever *widens* an interval: a run whose differences happen to be
    constant on a handful of labelled topics (``s^2_r = 0``, the zero-width PPI interval) gets at least
    ``d0 / (d0 + d_r)`` of the pooled variance, while a run whose variance is genuinely large keeps it (the worst
    run's coverage is what shrinkage toward the pool would lower).  The floor (:data:`VAR_FLOOR`, a standard
    deviation of one point on a [0, 1] score) applies only when every run is constant.  Intervals keep Student's
    t on the run's own ``d_r`` degrees of freedom (no df bonus is claimed for the pooling)."""
    var, n = np.asarray(var, dtype=float), np.asarray(n, dtype=float)
    d = np.maximum(n - 1.0, 0.0)
    ok = np.isfinite(var) & (d > 0)
    s0 = float((d[ok] * var[ok]).sum() / d[ok].sum()) if ok.any() and d[ok].sum() > 0 else floor
    with np.errstate(invalid="ignore"):
        moderated = (prior_df * s0 + d * np.where(ok, var, 0.0)) / (prior_df + d)
        return np.where(np.isfinite(var), np.maximum(np.maximum(var, moderated), floor), var)


def _rectify(delta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-run rectifier mean, guarded variance (:func:`moderated_variance`) and n over training topics; runs with
    n < 2 get the pooled values plus the between-run variance of the rectifiers."""
    n, mean, var = _col_stats(delta)
    have = n > 1
    extra = np.zeros_like(mean)
    if have.any():
        var = np.where(have, moderated_variance(var, n), var)
    if have.any() and not have.all():
        pooled_mean = float(mean[have].mean())
        between = float(mean[have].var(ddof=1)) if have.sum() > 1 else 0.0
        pooled_var = float(np.nanmean(var[have]))
        mean = np.where(have, mean, pooled_mean)
        var = np.where(have, var, pooled_var)
        extra = np.where(have, 0.0, between * (1.0 + 1.0 / have.sum()))
        n = np.where(have, n, np.median(n[have]))
    return mean, var, n, extra


def fit_score_method(method: str, H: np.ndarray, J: np.ndarray) -> dict:
    """Fit the registered score-level method ``method`` on training (topic, run) matrices; a JSON-ready model."""
    return _score_method(method).fit_scores(H, J)


#: one instance per registered score-level class (the methods keep no state; a class registered anew under a
#: name gets its own instance)
_INSTANCES: dict[type, ScoreMethod] = {}


def _score_method(name: str) -> ScoreMethod:
    from metaeval.errors import ConfigError

    cls = REGISTRY.get(name)
    if cls is not None and cls.level == "score":  # the registry's class, without a new instance per call
        inst = _INSTANCES.get(cls)
        if inst is None:
            inst = _INSTANCES[cls] = cls()
        return inst
    m = get_method(name)
    if m.level != "score":
        raise ConfigError(f"unknown score-level method {name!r}; expected one of {', '.join(method_names('score'))}")
    return m


def _paired(H: np.ndarray, J: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cells with both scores, H and J with NaN where either is missing)."""
    both = np.isfinite(H) & np.isfinite(J)
    return both, np.where(both, H, np.nan), np.where(both, J, np.nan)


class _Rectified(ScoreMethod):
    """A score-level correction ``answers = corrected(model, J)`` with the per-run rectifier variance of the module
    docstring: ``se = sqrt(var (1/n_L + 1/n_U) + extra)``, t interval on ``n_L - 1`` df inside [0, 1]."""

    def corrected(self, model: dict, J: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply_scores(self, model: dict, J: np.ndarray, level: float = 0.95) -> RunEstimate:
        n_u = np.isfinite(J).sum(axis=0).astype(float)  # the count of _col_stats (its mean and variance unused here)
        var, n_l, extra = (np.asarray(model[k], dtype=float) for k in ("var", "n_l", "extra"))
        answers = self.corrected(model, J)
        with np.errstate(invalid="ignore", divide="ignore"):
            ans_ok = np.isfinite(J) & np.isfinite(answers)
            est = np.where(ans_ok, answers, 0.0).sum(axis=0) / np.maximum(ans_ok.sum(axis=0), 1)
            se = np.sqrt(var * (1.0 / n_l + 1.0 / n_u) + extra)
        est = np.where(n_u > 0, est, np.nan)
        lo, hi = bounded(est, _t(level, n_l - 1) * se)
        return RunEstimate(est, se, lo, hi, answers)


@register
class RawScores(ScoreMethod):
    """``none``: the judge's own scores, with the judge's topic-sampling t interval."""

    name = "none"
    display = "raw"
    description = "the judge's own scores (raw); its interval is the judge's topic sampling error only"

    def fit_scores(self, H: np.ndarray, J: np.ndarray) -> dict:
        return {"method": "none"}

    def apply_scores(self, model: dict, J: np.ndarray, level: float = 0.95) -> RunEstimate:
        n_u, jmean, jvar = _col_stats(J)
        half = _t(level, n_u - 1) * np.sqrt(jvar / n_u)
        lo, hi = bounded(jmean, half)
        return RunEstimate(jmean, np.sqrt(jvar / n_u), lo, hi, J.copy())


@register
class PPI(_Rectified):
    """``ppi``: the judge's scores plus the per-run mean reference-minus-judge difference on the training topics."""

    name = "ppi"
    display = "PPI"
    description = "prediction-powered inference: judge score + mean (human - judge) on the labelled topics"

    def fit_scores(self, H: np.ndarray, J: np.ndarray) -> dict:
        _, Hm, Jm = _paired(H, J)
        mean, var, n, extra = _rectify(Hm - Jm)
        return {"method": "ppi", "rectifier": mean.tolist(), "var": var.tolist(), "n_l": n.tolist(), "extra": extra.tolist()}

    def corrected(self, model: dict, J: np.ndarray) -> np.ndarray:
        return J + np.asarray(model["rectifier"], dtype=float)[None, :]


@register
class PPIPlusPlus(_Rectified):
    """``ppi_pp``: PPI with the power-tuned ``lambda`` (:func:`power_tuned_lambda`)."""

    name = "ppi_pp"
    display = "PPI++"
    description = "power-tuned PPI: lambda judge score + mean (human - lambda judge), one lambda per cell"

    def fit_scores(self, H: np.ndarray, J: np.ndarray) -> dict:
        _, Hm, Jm = _paired(H, J)
        lam = power_tuned_lambda(Hm, Jm)
        mean, var, n, extra = _rectify(Hm - lam * Jm)
        return {"method": "ppi_pp", "lambda": lam, "rectifier": mean.tolist(), "var": var.tolist(), "n_l": n.tolist(),
                "extra": extra.tolist(), "resid": (Hm - lam * Jm).tolist()}

    def corrected(self, model: dict, J: np.ndarray) -> np.ndarray:
        return model["lambda"] * J + np.asarray(model["rectifier"], dtype=float)[None, :]


@register
class RegressionCalibration(_Rectified):
    """``regression``: one OLS line ``H = a + b J`` over the training cells, answers ``clip(a + b J, 0, 1)``."""

    name = "regression"
    display = "regression"
    description = "regression calibration: clip(a + b judge, 0, 1) from one OLS line over the labelled cells"

    def fit_scores(self, H: np.ndarray, J: np.ndarray) -> dict:
        both, Hm, Jm = _paired(H, J)
        x, y = Jm[both], Hm[both]
        if x.size < 3 or np.var(x) == 0:
            a, b = float(np.mean(y)) if y.size else 0.0, 0.0
        else:
            b = float(np.cov(x, y, ddof=1)[0, 1] / np.var(x, ddof=1))
            a = float(y.mean() - b * x.mean())
        resid = Hm - np.clip(a + b * Jm, 0.0, 1.0)
        _, var, n, extra = _rectify(resid)
        return {"method": "regression", "intercept": a, "slope": b, "var": var.tolist(), "n_l": n.tolist(),
                "extra": extra.tolist()}

    def corrected(self, model: dict, J: np.ndarray) -> np.ndarray:
        return np.clip(model["intercept"] + model["slope"] * J, 0.0, 1.0)


def power_tuned_lambda(H: np.ndarray, J: np.ndarray) -> float:
    """``lambda = sum_r Cov_r(H, J) / sum_r Var_r(J)`` over training topics (within-run), clipped to [0, 1]."""
    ok = np.isfinite(H) & np.isfinite(J)
    n = ok.sum(axis=0)
    use = n > 1
    if not use.any():
        return 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        hm = np.where(ok, H, 0.0).sum(axis=0) / np.maximum(n, 1)
        jm = np.where(ok, J, 0.0).sum(axis=0) / np.maximum(n, 1)
    dh, dj = np.where(ok, H - hm, 0.0), np.where(ok, J - jm, 0.0)
    cov = (dh * dj).sum(axis=0)[use].sum()
    var = (dj * dj).sum(axis=0)[use].sum()
    return float(np.clip(cov / var, 0.0, 1.0)) if var > 0 else 1.0


def apply_score_method(model: dict, J: np.ndarray, level: float = 0.95, rng: np.random.Generator | None = None,
                       n_boot: int = 999) -> RunEstimate:
    """Apply a fitted model (its ``method`` names the registered score-level method) to judge scores of the applied
    topics (T_U, R).

    With ``rng`` and a model that keeps its per-topic training differences (``ppi_pp``'s ``resid``), the interval
    is the union of (a) the t interval on the run's variance floored at the pooled within-run variance,
    ``max(s^2_r, s0^2, floor)`` with ``s0^2 = sum_r d_r s^2_r / sum_r d_r``, and (b) the run's own bootstrap-t
    (:func:`bootstrap_t_bounds`).  (b) follows a skewed run's visible skew (an asymmetric, wider interval); (a)
    guards a run whose labelled topics happen not to show its spread: a run the judge fails on 15% of topics shows
    no failure on 10 labelled topics in 0.85^10 = 20% of samples, and no interval built from its own topics alone
    can then cover it; the pooled variance is what the other runs show of a topic's spread.  On NIST with a skewed
    and a heteroscedastic judge (300 splits) the moderated variance of :func:`moderated_variance` (4 prior df)
    left the worst run at 0.76-0.82 and this floor at 0.86-0.95, at 15% more mean width; runs with small
    differences are over-covered (the price of (a)).  The union covers at least as often as either part."""
    r = _score_method(model["method"]).apply_scores(model, J, level)
    if rng is None or model.get("resid") is None:
        return r
    n_u = np.isfinite(J).sum(axis=0).astype(float)
    n_l, extra = (np.asarray(model[k], dtype=float) for k in ("n_l", "extra"))
    resid = np.asarray(model["resid"], dtype=float)
    n_r, _, s2 = _col_stats(resid)
    d = np.maximum(n_r - 1.0, 0.0)
    ok = np.isfinite(s2) & (d > 0)
    s0 = float((d[ok] * s2[ok]).sum() / d[ok].sum()) if ok.any() else VAR_FLOOR
    with np.errstate(invalid="ignore", divide="ignore"):  # never below the pooled variance (n < 2: as fitted)
        v = np.where(ok, np.maximum(np.maximum(s2, s0), VAR_FLOOR), np.asarray(model["var"], dtype=float))
        se = np.sqrt(v * (1.0 / n_l + 1.0 / n_u) + extra)
    lo, hi = bounded(r.est, _t(level, n_l - 1) * se)
    b_lo, b_hi = bootstrap_t_bounds(resid, r.est, n_u, level, rng, n_boot)
    return RunEstimate(r.est, se, np.fmin(lo, b_lo), np.fmax(hi, b_hi), r.answers)


def bootstrap_t_bounds(resid: np.ndarray, est: np.ndarray, n_u: np.ndarray, level: float, rng: np.random.Generator,
                       n_boot: int = 999, floor: float = VAR_FLOOR) -> tuple[np.ndarray, np.ndarray]:
    """Per-run bootstrap-t (studentized) interval for the human run score on ``n_u`` applied topics.

    For run ``r`` with training differences ``D_1..D_n`` (``H - lambda J`` on the fitted topics) the estimate's
    error is ``mean_L D - mean_U D``, studentized by ``se = s_D sqrt(1/n + 1/n_U)``.  Its distribution is taken
    from the bootstrap world where both samples are drawn from the run's own ``D`` (Efron & Tibshirani 1993,
    ch. 12; the two-sample pivot of ch. 16): ``T* = (mean L* - mean U*) / (s_{L*} sqrt(1/n + 1/n_U))`` with
    ``L*`` ``n`` and ``U*`` ``n_U`` draws (multinomial counts, so the cost does not grow with ``n_U``), and the
    interval is ``[est - q_{1-a/2} se, est - q_{a/2} se]``, intersected with [0, 1].  Each run uses its own
    variance and its own (possibly skewed) ``T*`` quantiles: no pooling toward other runs' variances, so a
    run with small differences is not widened to the pool and a skewed run gets an asymmetric, wider interval.
    Variances are floored at ``floor`` (one point on a [0, 1] score) so a resample of equal values cannot divide
    by zero; a run whose own differences are (near) constant (``s^2 <= floor``) or that has fewer than 3 of them
    gets NaN (its data cannot show its spread: :func:`apply_score_method` keeps the guarded t interval there)."""
    resid = np.asarray(resid, dtype=float)
    est, n_u = np.asarray(est, dtype=float), np.asarray(n_u, dtype=float)
    R = resid.shape[1]
    lo, hi = np.full(R, np.nan), np.full(R, np.nan)
    a = (1.0 - level) / 2.0
    groups: dict[tuple, list[int]] = {}
    for r in range(R):  # runs with the same finite topics and the same n_U share one set of resamples
        ok = np.flatnonzero(np.isfinite(resid[:, r]))
        if ok.size >= 3 and n_u[r] > 0 and np.isfinite(est[r]):
            groups.setdefault((tuple(ok.tolist()), int(n_u[r])), []).append(r)
    for (ok, nu), cols in groups.items():
        idx = np.asarray(ok)
        D = resid[np.ix_(idx, cols)]                                   # (n, k)
        n = len(idx)
        s2 = D.var(axis=0, ddof=1)
        use = s2 > floor
        if not use.any():
            continue
        D = D[:, use]
        cols = np.asarray(cols)[use]
        p = np.full(n, 1.0 / n)
        cl = rng.multinomial(n, p, size=n_boot).astype(float)          # (B, n) counts of L*
        cu = rng.multinomial(nu, p, size=n_boot).astype(float)         # (B, n) counts of U*
        mL, mU = cl @ D / n, cu @ D / nu                               # (B, k)
        vL = np.maximum((cl @ (D ** 2) - n * mL ** 2) / (n - 1), floor)
        f = np.sqrt(1.0 / n + 1.0 / nu)
        T = (mL - mU) / (np.sqrt(vL) * f)
        q_lo, q_hi = np.quantile(T, [a, 1.0 - a], axis=0)  # one partition for both (the same values as two calls)
        se = np.sqrt(s2[use]) * f
        lo[cols] = np.clip(est[cols] - q_hi * se, 0.0, 1.0)
        hi[cols] = np.clip(est[cols] - q_lo * se, 0.0, 1.0)
    return lo, hi


# --------------------------------------------------------------------------- unclustered PPI (ppi-python parity)
def ppi_mean(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray, level: float = 0.9,
             lam: float | None = 1.0) -> tuple[float, float, float]:
    """Classic PPI (``lam=1``) / PPI++ (``lam=None``: power-tuned) mean of i.i.d. rows, population estimand.

    ``theta = lam mean(f_unlabeled) + mean(y - lam f)``; normal interval with
    ``se^2 = sd0(lam f_unlabeled)^2 / N + sd0(y - lam f)^2 / n`` (``sd0``: ddof 0).  The tuned
    ``lam = Cov0(y - theta1, f - theta1) / ((1 + n/N) Var1(f, f_unlabeled pooled))`` clipped to [0, 1], where
    ``theta1`` is the ``lam = 1`` estimate (the centring cancels in the covariance).  Returns (theta, lo, hi).
    """
    from scipy.special import ndtri  # = scipy.stats.norm.ppf

    y, f, fu = (np.asarray(a, dtype=float).ravel() for a in (y, yhat, yhat_unlabeled))
    n, N = len(y), len(fu)
    if lam is None:
        cov0 = float(np.mean((y - y.mean()) * (f - f.mean())))
        var1 = float(np.var(np.concatenate([f, fu]), ddof=1))
        lam = float(np.clip(cov0 / ((1.0 + n / N) * var1), 0.0, 1.0)) if var1 > 0 else 1.0
    theta = float(lam * fu.mean() + (y - lam * f).mean())
    se = float(np.sqrt(np.var(lam * fu) / N + np.var(y - lam * f) / n))
    z = float(ndtri(0.5 + level / 2.0))
    return theta, theta - z * se, theta + z * se

