"""A toy score-level calibration method, outside the package: one file, registered by ``@register`` on import.

``toy_shift``: every judge score plus one constant, the mean (human - judge) over all labelled (topic, run) cells;
its interval is the judge's own topic-sampling t interval, shifted (honest about nothing but the shift)."""

from __future__ import annotations

import numpy as np

from metaeval.calibration.methods import ScoreMethod, register
from metaeval.calibration.scorelevel import RunEstimate, bounded


@register
class ToyShift(ScoreMethod):
    name = "toy_shift"
    display = "toy shift"
    gives_ci = True
    description = "judge score + one pooled mean (human - judge) shift"

    def fit_scores(self, H: np.ndarray, J: np.ndarray) -> dict:
        both = np.isfinite(H) & np.isfinite(J)
        return {"method": self.name, "shift": float((H[both] - J[both]).mean()) if both.any() else 0.0}

    def apply_scores(self, model: dict, J: np.ndarray, level: float = 0.95) -> RunEstimate:
        from scipy.special import stdtrit

        answers = J + model["shift"]
        ok = np.isfinite(answers)
        n = ok.sum(axis=0).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.where(ok, answers, 0.0).sum(axis=0) / n
            sd = np.sqrt(np.where(ok, (answers - est) ** 2, 0.0).sum(axis=0) / (n - 1))
            se = sd / np.sqrt(n)
        lo, hi = bounded(est, stdtrit(np.maximum(n - 1, 1), 0.5 + level / 2) * se)
        return RunEstimate(est, se, lo, hi, answers)
