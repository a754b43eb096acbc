"""Prediction-powered inference (PPI) for run means, with topics as the sampling unit.

Angelopoulos, Bates, Fannjiang, Jordan, Zrnic (2023), "Prediction-powered inference", Science 382:669.
For one run and metric, with per-topic human scores ``H_t`` on the labelled (calibration) topics ``L`` and per-
topic judge scores ``J_t`` wherever the judge ran, the rectifier ``Delta_t = H_t - J_t`` measures the judge's
bias for that run and

    theta_hat = mean_{t in U} J_t + mean_{t in L} Delta_t             (U = topics the model is applied to)

Topics are the sampling unit, so every variance is over topic-level scores (which keeps the nugget-level
clustering within a topic intact).  Two estimands (``estimand=``):

* ``"applied"`` (default; what validation checks): the human run score on the applied topics ``U``.  Error =
  ``mean_L Delta - mean_U Delta``, so ``Var = s_Delta^2 (1/n_L + 1/n_U)``.
* ``"population"``: the mean human score over the topic population (classic PPI, labelled and unlabelled
  samples independent): ``Var = s_Delta^2 / n_L + s_J^2 / n_U``.

Intervals use Student's t with ``n_L - 1`` degrees of freedom.  Runs absent from calibration get the pooled
rectifier (mean over calibration runs), with the between-run variance of the run rectifiers added.

We implement PPI directly instead of using ``ppi-python``: that package's mean estimators treat every row as an
i.i.d. unit and target the population mean, while here the unit is a topic, the target is usually the applied
topics' human score, and the rectifier is per run; the computation is a few lines of numpy.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from metaeval.calibration.methods.base import MODEL_VERSION, ArrayPrediction, CalibrationMethod, check_training, register
from metaeval.calibration.pairs import METRICS, Pairs
from metaeval.errors import ConfigError


@register
class PPI(CalibrationMethod):
    name = "ppi"
    gives_ci = True
    description = "prediction-powered run means: judge mean plus per-run human-minus-judge rectifier over topics"

    def fit_pairs(self, judge: Pairs, human: np.ndarray, metrics: Sequence[str] = METRICS, **_: Any) -> dict:
        ok = check_training(judge, human)
        labelled_answer = np.bincount(judge.ans, weights=ok, minlength=judge.n_answers) > 0
        hs = judge.with_support(np.asarray(human)).observed_scores(metrics)
        js = judge.observed_scores(metrics)
        runs: dict[str, dict] = {}
        pooled: dict[str, dict] = {}
        ar = judge.ans_run[labelled_answer]
        for m in metrics:
            delta = (hs[m] - js[m])[labelled_answer]
            n = np.bincount(ar, minlength=len(judge.run_ids)).astype(float)
            s1 = np.bincount(ar, weights=delta, minlength=len(judge.run_ids))
            s2 = np.bincount(ar, weights=delta ** 2, minlength=len(judge.run_ids))
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = s1 / n
                var = (s2 - n * mean ** 2) / (n - 1)
            for r, run_id in enumerate(judge.run_ids):
                if n[r] > 0:
                    runs.setdefault(run_id, {})[m] = {"rectifier": float(mean[r]), "sd": float(np.sqrt(max(var[r], 0.0))) if n[r] > 1 else None,
                                                     "n_topics": int(n[r])}
            have = n > 1
            if not have.any():
                raise ConfigError("PPI needs at least two calibration topics per run")
            pooled[m] = {"rectifier": float(mean[have].mean()),
                         "between_run_sd": float(mean[have].std(ddof=1)) if have.sum() > 1 else 0.0,
                         "sd": float(np.sqrt(np.nanmean(var[have]))), "n_topics": int(np.median(n[have]))}
        return {"method": self.name, "version": MODEL_VERSION, "unit": "topic", "metrics": list(metrics),
                "runs": runs, "pooled": pooled}

    def apply_pairs(self, model: dict, judge: Pairs, metrics: Sequence[str] = METRICS, level: float = 0.95,
                    rng: np.random.Generator | None = None, estimand: str = "applied", **_: Any) -> ArrayPrediction:
        from scipy.stats import t as student_t

        if estimand not in ("applied", "population"):
            raise ConfigError(f"PPI estimand {estimand!r}; expected applied or population")
        metrics = [m for m in metrics if m in model["pooled"]]
        js = judge.observed_scores(metrics)
        nr = len(judge.run_ids)
        n_u = np.bincount(judge.ans_run, minlength=nr).astype(float)
        pred = ArrayPrediction(answers={}, run={}, notes={"estimand": estimand, "pooled_rectifier_runs": []})
        for m in metrics:
            rect, sd, n_l, extra = np.zeros(nr), np.zeros(nr), np.zeros(nr), np.zeros(nr)
            for r, run_id in enumerate(judge.run_ids):
                fit = model["runs"].get(run_id, {}).get(m)
                if fit is None or fit["sd"] is None:
                    fit = model["pooled"][m]
                    extra[r] = fit["between_run_sd"] ** 2 * (1.0 + 1.0 / max(len(model["runs"]), 1))
                    if m == metrics[0]:
                        pred.notes["pooled_rectifier_runs"].append(run_id)
                rect[r], sd[r], n_l[r] = fit["rectifier"], fit["sd"], fit["n_topics"]
            pred.answers[m] = js[m] + rect[judge.ans_run]
            jmean = judge.run_means(js[m])
            est = jmean + rect
            with np.errstate(invalid="ignore", divide="ignore"):
                if estimand == "applied":
                    var = sd ** 2 * (1.0 / n_l + 1.0 / n_u) + extra
                else:
                    dev = js[m] - jmean[judge.ans_run]
                    s_j2 = np.bincount(judge.ans_run, weights=dev ** 2, minlength=nr) / np.maximum(n_u - 1, 1)
                    var = sd ** 2 / n_l + s_j2 / n_u + extra
            se = np.sqrt(var)
            q = student_t.ppf(0.5 + level / 2.0, np.maximum(n_l - 1, 1))
            pred.run[m], pred.se[m] = est, se
            pred.lo[m], pred.hi[m] = est - q * se, est + q * se
        return pred
