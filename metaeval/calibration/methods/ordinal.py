"""Ordinal model: cumulative-logit regression of the human label on the judge label and covariates.

McCullagh (1980), "Regression models for ordinal data", JRSS B 42:109-142; fitted with statsmodels
``OrderedModel`` (``statsmodels.miscmodels.ordinal_model``)::

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
from metaeval.calibration.pairs import METRICS, Pairs
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
        "vital": (judge.imp == 0).astype(float),
        "importance_failed": (judge.imp == 2).astype(float),
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


def _probs(X: np.ndarray, beta: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """(..., n, 3) label probabilities from a cumulative logit; ``beta`` (..., p), ``cuts`` (..., 2)."""
    from scipy.special import expit  # the logistic function, without overflow for large |x|

    xb = np.einsum("np,...p->...n", X, beta)
    c1 = expit(cuts[..., 0:1] - xb)
    c2 = expit(cuts[..., 1:2] - xb)
    return np.stack([c1, c2 - c1, 1.0 - c2], axis=-1)


def _cuts(theta: np.ndarray) -> np.ndarray:
    """statsmodels' threshold parametrisation: c1 = theta_0, c2 = c1 + exp(theta_1)."""
    return np.stack([theta[..., 0], theta[..., 0] + np.exp(theta[..., 1])], axis=-1)


@register
class OrdinalModel(CalibrationMethod):
    name = "ordinal"
    gives_ci = True
    description = "statsmodels OrderedModel (cumulative logit) of the human label on judge label + covariates"

    def fit_pairs(self, judge: Pairs, human: np.ndarray, covariates: Sequence[str] = COVARIATES, **_: Any) -> dict:
        import pandas as pd
        from statsmodels.miscmodels.ordinal_model import OrderedModel

        ok = check_training(judge, human)
        y = np.asarray(human)[ok]
        if len(np.unique(y)) < 3:
            raise ConfigError("ordinal model needs all three human labels in the calibration data")
        cols = {k: v[ok] for k, v in design(judge).items() if k in covariates}
        keep = [k for k, v in cols.items() if np.std(v) > 1e-12]
        scaling = {k: [float(cols[k].mean()), float(cols[k].std())] for k in keep if k in _SCALED}
        model = {"columns": keep, "scaling": scaling}
        X = pd.DataFrame(_matrix(cols, model), columns=keep)
        endog = pd.Series(pd.Categorical(y, categories=[0, 1, 2], ordered=True))
        res = OrderedModel(endog, X, distr="logit").fit(method="bfgs", disp=False, maxiter=500)
        params = np.asarray(res.params, dtype=float)
        cov = np.asarray(res.cov_params(), dtype=float)
        se = np.sqrt(np.clip(np.diag(cov), 0, None))
        p = len(keep)
        return {
            "method": self.name, "version": MODEL_VERSION, "link": "logit", "human_order": list(SUPPORT_ORDER),
            "columns": keep, "scaling": scaling, "n_pairs": int(ok.sum()),
            "beta": {k: float(params[i]) for i, k in enumerate(keep)},
            "cutpoints": _cuts(params[p:]).tolist(),
            "params": params.tolist(), "cov_params": cov.tolist(),
            "coefficients": [{"name": n, "coef": float(params[i]), "se": float(se[i])}
                             for i, n in enumerate(list(keep) + ["threshold_0", "log_threshold_gap"])],
            "converged": bool(res.mle_retvals.get("converged", True)), "loglike": float(res.llf),
        }

    def apply_pairs(self, model: dict, judge: Pairs, metrics: Sequence[str] = METRICS, level: float = 0.95,
                    rng: np.random.Generator | None = None, draws: int = 100) -> ArrayPrediction:
        X = _matrix(design(judge), model)
        params = np.asarray(model["params"])
        p = len(model["columns"])
        prob = _probs(X, params[:p], _cuts(params[p:]))
        prob_draws = None
        if rng is not None and draws > 0:
            theta = rng.multivariate_normal(params, np.asarray(model["cov_params"]), size=draws, method="eigh")
            prob_draws = _probs(X, theta[:, :p], _cuts(theta[:, p:]))
        return expected_credit_prediction(judge, prob, prob_draws, metrics, level)
