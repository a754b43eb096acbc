"""Ordinal model: cumulative-logit regression of the human label on the judge label and covariates.

McCullagh (1980), "Regression models for ordinal data", JRSS B 42:109-142; maximum likelihood with the
analytic gradient and Hessian (damped Newton; BFGS from ``scipy.optimize`` as the fallback) in statsmodels
``OrderedModel``'s parametrisation (a test checks the fit against ``OrderedModel``, which is about 20x slower
because it differentiates numerically)::

    P(human <= k | x) = F(c_k - x' beta),   k = not_support, partial_support;   F = logistic

with ``x`` = judge-label indicators (partial_support, support, FAILED; not_support is the base), vital and
FAILED-importance indicators, and standardised log answer length, nugget length (tokens) and nugget position
(index / nuggets in the topic).  Covariates constant in the calibration data are dropped.  The expected credit
of a pair is ``P(support | x)`` (strict) or ``P(support | x) + 0.5 P(partial | x)``; scores follow by
linearity.  Parameter uncertainty: run-score variance over draws ``theta* ~ N(theta_hat, Cov(theta_hat))``
(the fitted model's inverse Hessian), plus the label-noise term as in the posterior correction.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from metaeval.calibration.methods.base import (MODEL_VERSION, ArrayPrediction, CalibrationMethod, check_training,
                                               expected_credit_prediction, register)
from metaeval.calibration.pairs import IMP_CODES, METRICS, Pairs
from metaeval.errors import ConfigError
from metaeval.types import SUPPORT_ORDER

COVARIATES = ("judge_partial", "judge_support", "judge_failed", "vital", "importance_failed",
              "log_answer_length", "nugget_length", "position")
_SCALED = ("log_answer_length", "nugget_length", "position")


def design(judge: Pairs) -> dict[str, np.ndarray]:
    """Raw covariate columns (unscaled) for every pair."""
    return {
        "judge_partial": (judge.sup == 1).astype(float),
        "judge_support": (judge.sup == 2).astype(float),
        "judge_failed": (judge.sup < 0).astype(float),
        "vital": (judge.imp == IMP_CODES["vital"]).astype(float),
        "importance_failed": (judge.imp == IMP_CODES["FAILED"]).astype(float),
        "log_answer_length": np.log1p(np.nan_to_num(judge.ans_len[judge.ans])),
        "nugget_length": judge.nug_len.astype(float),
        "position": judge.pos.astype(float),
    }


def _matrix(cols: dict[str, np.ndarray], model: dict) -> np.ndarray:
    X = []
    for name in model["columns"]:
        v = cols[name]
        if name in model["scaling"]:
            mu, sd = model["scaling"][name]
            v = (v - mu) / sd
        X.append(v)
    return np.column_stack(X) if X else np.zeros((len(next(iter(cols.values()))), 0))


def _probs(X: np.ndarray, beta: np.ndarray, cuts: np.ndarray, stacked: bool = True):
    """(..., n, 3) label probabilities from a cumulative logit; ``beta`` (..., p), ``cuts`` (..., 2).
    ``stacked=False``: only ``(P(partial), P(support))``, each (..., n) (all that expected credits need)."""
    from scipy.special import expit  # the logistic function, without overflow for large |x|

    xb = np.einsum("np,...p->...n", X, beta)
    c1 = expit(cuts[..., 0:1] - xb)
    c2 = expit(cuts[..., 1:2] - xb)
    if not stacked:
        return c2 - c1, 1.0 - c2
    return np.stack([c1, c2 - c1, 1.0 - c2], axis=-1)


def _cuts(theta: np.ndarray) -> np.ndarray:
    """statsmodels' threshold parametrisation: c1 = theta_0, c2 = c1 + exp(theta_1)."""
    return np.stack([theta[..., 0], theta[..., 0] + np.exp(theta[..., 1])], axis=-1)


def _nll_grad(params: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Negative log-likelihood of the 3-class cumulative logit and its analytic gradient.

    ``c1 = theta_0``, ``c2 = theta_0 + exp(theta_1)``, ``F_k = expit(c_k - x'beta)``; ``P(0) = F_1``,
    ``P(1) = F_2 - F_1``, ``P(2) = 1 - F_2``; with ``f_k = F_k (1 - F_k)`` the score contributions are
    y=0: ``dl/dc1 = 1 - F1``; y=1: ``dl/dc1 = -f1 / P1``, ``dl/dc2 = f2 / P1``; y=2: ``dl/dc2 = -F2``, and
    ``dl/deta = -(dl/dc1 + dl/dc2)``.
    """
    from scipy.special import expit

    p = X.shape[1]
    beta, t0, t1 = params[:p], params[p], params[p + 1]
    eta = X @ beta
    gap = np.exp(t1)
    F1, F2 = expit(t0 - eta), expit(t0 + gap - eta)
    f1, f2 = F1 * (1 - F1), F2 * (1 - F2)
    P1 = np.maximum(F2 - F1, 1e-300)
    y0, y1, y2 = y == 0, y == 1, y == 2
    ll = np.log(np.maximum(F1[y0], 1e-300)).sum() + np.log(P1[y1]).sum() + np.log(np.maximum(1 - F2[y2], 1e-300)).sum()
    dc1 = np.where(y0, 1 - F1, 0.0) + np.where(y1, -f1 / P1, 0.0)
    dc2 = np.where(y1, f2 / P1, 0.0) + np.where(y2, -F2, 0.0)
    deta = -(dc1 + dc2)
    grad = np.concatenate([X.T @ deta, [dc1.sum() + dc2.sum(), dc2.sum() * gap]])
    return -float(ll), -grad


def _sorted_objective(X: np.ndarray, y: np.ndarray):
    """:func:`_nll_grad` for fixed data, faster: the pairs are sorted by label once, so each label's terms are a
    contiguous slice (one ``expit`` per pair and label-side threshold instead of two over all pairs, no masks).
    Same formulas term by term; only the order of the sums differs (floating-point noise).

    ``fun(params, hess=True)`` also returns the analytic Hessian of the negative log-likelihood.  With
    ``u_k = c_k - eta`` the per-pair second derivatives of the log-likelihood are
    y=0: ``l_11 = -f_1``; y=2: ``l_22 = -f_2``; y=1: ``l_11 = -f_1 (1 - 2F_1)/P - (f_1/P)^2``,
    ``l_22 = f_2 (1 - 2F_2)/P - (f_2/P)^2``, ``l_12 = f_1 f_2 / P^2``; by the chain rule (``du_1/dtheta = (-x, 1, 0)``,
    ``du_2/dtheta = (-x, 1, g)``, ``g = exp(theta_1)``) with ``s = l_11 + l_22 + 2 l_12`` and ``r = l_22 + l_12``:
    ``H_bb = X' diag(s) X``, ``H_b0 = -X's``, ``H_b1 = -g X'r``, ``H_00 = sum s``, ``H_01 = g sum r``,
    ``H_11 = g^2 sum l_22 + g sum l_2``."""
    from scipy.special import expit

    order = np.argsort(y, kind="stable")
    Xs = np.ascontiguousarray(X[order], dtype=float)
    ys = np.asarray(y)[order]
    a = int(np.count_nonzero(ys == 0))
    b = a + int(np.count_nonzero(ys == 1))
    p = X.shape[1]

    def fun(params: np.ndarray, hess: bool = False):
        beta, t0, t1 = params[:p], params[p], params[p + 1]
        eta = Xs @ beta
        gap = np.exp(t1)
        F1_0 = expit(t0 - eta[:a])
        F1_1, F2_1 = expit(t0 - eta[a:b]), expit(t0 + gap - eta[a:b])
        F2_2 = expit(t0 + gap - eta[b:])
        P1 = np.maximum(F2_1 - F1_1, 1e-300)
        ll = (np.log(np.maximum(F1_0, 1e-300)).sum() + np.log(P1).sum()
              + np.log(np.maximum(1 - F2_2, 1e-300)).sum())
        dc1_0 = 1 - F1_0
        f1_1, f2_1 = F1_1 * (1 - F1_1), F2_1 * (1 - F2_1)
        dc1_1 = -f1_1 / P1
        dc2_1 = f2_1 / P1
        dc2_2 = -F2_2
        deta = -np.concatenate([dc1_0, dc1_1 + dc2_1, dc2_2])
        s_c2 = dc2_1.sum() + dc2_2.sum()
        grad = np.concatenate([Xs.T @ deta, [dc1_0.sum() + dc1_1.sum() + s_c2, s_c2 * gap]])
        if not hess:
            return -float(ll), -grad
        h11_0 = -F1_0 * (1 - F1_0)
        h11_1 = -f1_1 * (1 - 2 * F1_1) / P1 - dc1_1 ** 2
        h22_1 = f2_1 * (1 - 2 * F2_1) / P1 - dc2_1 ** 2
        h12_1 = f1_1 * f2_1 / P1 ** 2
        h22_2 = -F2_2 * (1 - F2_2)
        sv = np.concatenate([h11_0, h11_1 + h22_1 + 2 * h12_1, h22_2])
        rv = np.concatenate([np.zeros(a), h22_1 + h12_1, h22_2])
        H = np.empty((p + 2, p + 2))
        H[:p, :p] = Xs.T @ (Xs * sv[:, None])
        H[:p, p] = -(Xs.T @ sv)
        H[:p, p + 1] = -gap * (Xs.T @ rv)
        H[p, p] = sv.sum()
        H[p, p + 1] = gap * rv.sum()
        H[p + 1, p + 1] = gap ** 2 * (h22_1.sum() + h22_2.sum()) + gap * s_c2
        H[p:, :p] = H[:p, p:].T
        H[p + 1, p] = H[p, p + 1]
        return -float(ll), -grad, -H

    return fun


def _newton(fun, start: np.ndarray, gtol: float = 1e-6, maxiter: int = 30):
    """Damped Newton on ``fun(params, hess=True) -> (f, grad, hess)`` with step halving until ``f`` decreases;
    stops when ``max |grad| <= gtol`` (BFGS's criterion).  Returns (params, f, converged, hessian at params).

    A regular fit converges quadratically in well under ``maxiter`` iterations; when it does not (e.g. quasi-
    separation, a coefficient drifting to infinity) or the line search needs steps below 1e-6, it gives up early
    and the caller falls back to BFGS."""
    x = np.asarray(start, dtype=float)
    f, g, H = fun(x, True)
    for _ in range(maxiter):
        if not (np.isfinite(f) and np.isfinite(g).all()):
            return x, f, False, H
        if np.abs(g).max() <= gtol:
            return x, f, True, H
        try:
            step = -np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            return x, f, False, H
        if not np.isfinite(step).all() or step @ g >= 0:  # not a descent direction: fall back to the gradient
            step = -g / max(1.0, float(np.abs(g).max()))
        t = 1.0
        while t > 1e-6:
            xn = x + t * step
            fn, gn, Hn = fun(xn, True)  # the accepted point's gradient and Hessian are the next iteration's
            if np.isfinite(fn) and fn <= f:
                break
            t *= 0.5
        else:
            return x, f, False, H
        x, f, g, H = xn, fn, gn, Hn
    return x, f, bool(np.abs(g).max() <= gtol), H


#: reciprocal condition number of the observed information below which a fit counts as (nearly) unidentified
RCOND_MIN = 1e-8


def _well_conditioned(H: np.ndarray) -> bool:
    ev = np.linalg.eigvalsh((H + H.T) / 2)
    return bool(np.isfinite(ev).all() and ev.max() > 0 and ev.min() > RCOND_MIN * ev.max())


def fit_cumulative_logit(X: np.ndarray, y: np.ndarray, covariance: bool = True) -> tuple[np.ndarray, np.ndarray | None, float, bool]:
    """ML fit; returns (params = [beta, theta_0, theta_1], covariance = inverse observed information (None when
    ``covariance`` is False: point predictions need none), log-likelihood, converged).

    Damped Newton with the analytic Hessian (a few iterations), stopping at ``max |grad| <= 1e-6``; the
    covariance is the pseudo-inverse of the analytic Hessian there.  When Newton does not converge, or the
    information at its optimum is (nearly) singular (reciprocal condition < ``RCOND_MIN``: a covariate (nearly)
    separates the labels or is collinear, so the MLE is not identified along some direction), the fit is the
    former one, unchanged: BFGS on :func:`_nll_grad` from the same start, covariance from central differences of
    its gradient (step ``1e-5 max(1, |x_i|)``).  Regular fits agree with that path to optimiser precision; degenerate
    ones are reproduced exactly."""
    from scipy.special import logit

    p = X.shape[1]
    q0 = np.clip(np.mean(y == 0), 1e-3, 1 - 1e-3)
    q1 = np.clip(np.mean(y <= 1), q0 + 1e-3, 1 - 1e-4)
    start = np.concatenate([np.zeros(p), [logit(q0), np.log(logit(q1) - logit(q0))]])
    fun = _sorted_objective(X, y)
    x, f, ok, H = _newton(fun, start)
    if ok and _well_conditioned(H):
        if not covariance:
            return x, None, -float(f), ok
        return x, np.linalg.pinv((H + H.T) / 2), -float(f), ok
    from scipy.optimize import minimize

    res = minimize(_nll_grad, start, args=(X, y), jac=True, method="BFGS", options={"gtol": 1e-6, "maxiter": 1000})
    x, f, ok = res.x, float(res.fun), bool(res.success)
    if not covariance:
        return x, None, -float(f), ok
    k = len(x)
    hess = np.zeros((k, k))
    for i in range(k):
        h = 1e-5 * max(1.0, abs(x[i]))
        e = np.zeros(k)
        e[i] = h
        hess[:, i] = (_nll_grad(x + e, X, y)[1] - _nll_grad(x - e, X, y)[1]) / (2 * h)
    hess = (hess + hess.T) / 2
    return x, _psd(np.linalg.pinv(hess)), -float(f), ok


def _psd(cov: np.ndarray) -> np.ndarray:
    """``cov`` with negative eigenvalues set to 0 (symmetric).  A degenerate fit (quasi-separation: the optimiser
    stopped where the numerical Hessian is indefinite) gives an indefinite inverse; drawing parameters from it
    is undefined, so its negative-curvature directions get no spread (the fit is flagged ``converged`` False or
    ill-conditioned and its intervals are approximate)."""
    w, v = np.linalg.eigh((cov + cov.T) / 2)
    if w.min() >= 0:
        return (cov + cov.T) / 2
    return (v * np.clip(w, 0, None)) @ v.T


@register
class OrdinalModel(CalibrationMethod):
    name = "ordinal"
    display = "ordinal"
    #: the observed-information covariance only feeds its intervals: cross-fitting's point fits skip it
    point_fit_options = {"covariance": False}
    gives_ci = True
    description = "cumulative-logit (OrderedModel parametrisation) of the human label on judge label + covariates"

    def fit_pairs(self, judge: Pairs, human: np.ndarray, covariates: Sequence[str] = COVARIATES,
                  covariance: bool = True, **_: Any) -> dict:
        """``covariance=False`` skips the observed-information matrix (``cov_params`` and the coefficient SEs are
        then None): enough for point predictions (``apply_pairs`` without ``rng``), as in inner selection folds."""
        ok = check_training(judge, human)
        y = np.asarray(human)[ok]
        if len(np.unique(y)) < 3:
            raise ConfigError("ordinal model needs all three human labels in the calibration data")
        cols = {k: v[ok] for k, v in design(judge).items() if k in covariates}
        keep = [k for k, v in cols.items() if np.std(v) > 1e-12]
        scaling = {k: [float(cols[k].mean()), float(cols[k].std())] for k in keep if k in _SCALED}
        model = {"columns": keep, "scaling": scaling}
        params, cov, llf, converged = fit_cumulative_logit(_matrix(cols, model), y.astype(np.int64), covariance)
        se = np.sqrt(np.clip(np.diag(cov), 0, None)) if cov is not None else np.full(len(params), np.nan)
        p = len(keep)
        return {
            "method": self.name, "version": MODEL_VERSION, "link": "logit", "human_order": list(SUPPORT_ORDER),
            "columns": keep, "scaling": scaling, "n_pairs": int(ok.sum()),
            "beta": {k: float(params[i]) for i, k in enumerate(keep)},
            "cutpoints": _cuts(params[p:]).tolist(),
            "params": params.tolist(), "cov_params": cov.tolist() if cov is not None else None,
            "coefficients": [{"name": n, "coef": float(params[i]), "se": float(se[i]) if cov is not None else None}
                             for i, n in enumerate(list(keep) + ["threshold_0", "log_threshold_gap"])],
            "converged": converged, "loglike": llf,
        }

    def apply_pairs(self, model: dict, judge: Pairs, metrics: Sequence[str] = METRICS, level: float = 0.95,
                    rng: np.random.Generator | None = None, draws: int = 100,
                    point_only: bool = False) -> ArrayPrediction:
        X = _matrix(design(judge), model)
        params = np.asarray(model["params"])
        p = len(model["columns"])
        prob = _probs(X, params[:p], _cuts(params[p:]))
        prob_draws = None
        if rng is not None and draws > 0 and not point_only:
            if model.get("cov_params") is None:
                raise ConfigError("ordinal model was fitted without its covariance (covariance=False): no interval")
            theta = rng.multivariate_normal(params, np.asarray(model["cov_params"]), size=draws, method="eigh")
            prob_draws = _probs(X, theta[:, :p], _cuts(theta[:, p:]), stacked=False)
        return expected_credit_prediction(judge, prob, prob_draws, metrics, level, point_only)
