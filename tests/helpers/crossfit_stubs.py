"""Tiny synthetic inputs for testing the calibration procedure (``metaeval.study.calibration_workflow.procedure``) directly:
hand-made per-split errors and taus for :func:`decide`, and stub candidates on a small topic x run matrix that record
every split they are fitted on (the splits are then checked by hand)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

METRIC = "v_strict"


@dataclass
class TinyData:
    """``H`` (human) and ``J`` (judge) as (topics, runs) matrices for :data:`METRIC`, run names ``runs``."""

    H: dict
    J: dict
    runs: list


def tiny_data(n_topics: int = 12, n_runs: int = 4, seed: int = 0) -> TinyData:
    rng = np.random.default_rng(seed)
    H = rng.uniform(0, 1, (n_topics, n_runs))
    J = np.clip(H + 0.2 + rng.normal(0, 0.05, H.shape), 0, 1)  # a lenient judge: raw is off by ~0.2
    return TinyData({METRIC: H}, {METRIC: J}, [f"run{i}" for i in range(n_runs)])


@dataclass
class Recorder:
    """Every (candidate name, fit topics) a stub candidate was fitted on."""

    fits: list = field(default_factory=list)


def stub_candidates(data: TinyData, rec: Recorder, oracle: bool = True):
    """``raw`` and ``composite`` (the judge's mean on the applied topics) and ``oracle`` (the human mean there:
    error 0 on every split, so it beats either baseline by more than any SE)."""
    from metaeval.calibration.crossfit import Candidate, Prediction

    def make(name, matrix, uses_labels):
        def fit(A):
            rec.fits.append((name, tuple(int(t) for t in A)))
            return None

        def apply(_model, B, _ci):
            est = np.nanmean(matrix[METRIC][B], axis=0)
            nan = np.full_like(est, np.nan)
            return {METRIC: Prediction(est=est, lo=nan, hi=nan, se=nan)}

        return Candidate(name, "score", fit, apply, uses_labels=uses_labels)

    cands = [make("raw", data.J, False), make("composite", data.J, True)]
    if oracle:
        cands.append(make("oracle", data.H, True))
    return cands


def settings(**over) -> dict:
    s = {"metrics": [METRIC], "min_topics": 10, "folds": 5, "repeats": 6, "nested_splits": 3}
    s.update(over)
    return s
