"""The calibrate workflow's inputs: dense (topic x run) score matrices, the text pairing, and the candidates.

A candidate (:class:`metaeval.calibration.crossfit.Candidate`) is a method bound to these matrices: ``fit(topic
indices)`` and ``apply(model, topic indices, want_ci)``.  Score-level candidates use
:mod:`metaeval.calibration.scorelevel` (topic-clustered t intervals); label-level candidates use
:mod:`metaeval.calibration.methods`, whose intervals treat label pairs as independent, so the workflow uses only
their point estimates (see :mod:`metaeval.study.calibration_workflow.selection`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet


class CalibrationData:
    """Dense (topic x run) score matrices over the judge's topics and runs, and the text-paired labels."""

    def __init__(self, reference: "LabelSet", judge: "LabelSet", metrics: Sequence[str]):
        from metaeval.calibration.pairing import pair_by_text
        from metaeval.scoring import score_answers

        self.pairing = pair_by_text(reference, judge)
        jp = self.pairing.judge
        self.qids, self.runs = jp.qids, jp.run_ids
        self.H = score_matrix(score_answers(reference), self.qids, self.runs, metrics)
        self.J = score_matrix(score_answers(judge), self.qids, self.runs, metrics)
        first = metrics[0]
        has_h = np.isfinite(self.H[first]).any(axis=1)
        has_j = np.isfinite(self.J[first]).any(axis=1)
        self.labelled = np.flatnonzero(has_h & has_j)
        self.judge_only = np.flatnonzero(~has_h & has_j)

    def topic_pairs(self, topics: np.ndarray, with_human: bool = False):
        """(the judge's pairs of ``topics``, the human labels of those pairs when ``with_human``, else None).

        Every label-level candidate of a split fits on the same topics and applies to the same others, so the
        selections of the last two topic sets are kept (a selection is a function of the topics only)."""
        topics = np.asarray(topics, dtype=int)
        key = topics.tobytes()
        memo = self.__dict__.setdefault("_topic_pairs", {})
        if key not in memo:
            jp = self.pairing.judge
            keep = np.zeros(len(jp.qids), dtype=bool)
            keep[topics] = True
            if len(memo) >= 2:
                memo.pop(next(iter(memo)))
            memo[key] = [jp.select_answers(keep[jp.ans_topic]), keep, None]
        got = memo[key]
        if with_human and got[2] is None:
            jp = self.pairing.judge
            got[2] = self.pairing.human[got[1][jp.ans_topic[jp.ans]]]
        return got[0], (got[2] if with_human else None)

    def truth(self, topics: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Reference run means over ``topics`` and the number of topics each run has there, per metric."""
        t, n = {}, {}
        for m, H in self.H.items():
            sub = H[topics]
            t[m] = nanmean(sub, axis=0)
            n[m] = np.isfinite(sub).sum(axis=0)
        return t, n


def score_matrix(scores, qids, runs, metrics) -> dict[str, np.ndarray]:
    """``{metric: (topics, runs)}`` from a per-answer score table; NaN where a run did not answer."""
    qpos = {q: i for i, q in enumerate(qids)}
    rpos = {r: i for i, r in enumerate(runs)}
    ti = scores["qid"].astype(str).map(qpos)
    ri = scores["run_id"].astype(str).map(rpos)
    ok = (ti.notna() & ri.notna()).to_numpy()
    ti, ri = ti[ok].to_numpy(int), ri[ok].to_numpy(int)
    out = {}
    for m in metrics:
        mat = np.full((len(qids), len(runs)), np.nan)
        mat[ti, ri] = scores[m].to_numpy(float)[ok]
        out[m] = mat
    return out


def score_candidate(name: str, data: CalibrationData, metrics: Sequence[str], level: float, seed: int = 0,
                    n_boot: int = 999):
    """A score-level candidate.  ``raw`` and ``composite`` both apply the raw judge (method ``none`` of
    :mod:`metaeval.calibration.scorelevel`); they differ in the whole-track score (``uses_labels``: composite puts
    the human scores on the human-labelled topics).  ``ppi_pp``'s intervals (``want_ci``) are the per-run
    bootstrap-t (:func:`metaeval.calibration.scorelevel.bootstrap_t_bounds`), drawn from stream
    ``calibration.bootstrap_t`` keyed by the applied topics (the same topics give the same draws in any process)."""
    from metaeval.calibration.crossfit import Candidate, Prediction
    from metaeval.calibration.scorelevel import apply_score_method, fit_score_method
    from metaeval.random_streams import stream

    method = "none" if name in ("raw", "composite") else name

    def fit(train):
        return {m: fit_score_method(method, data.H[m][train], data.J[m][train]) for m in metrics}

    def apply(model, test, want_ci):
        if method == "none":  # raw and composite apply the same fitless method to the same topics: computed once
            memo_key = (np.asarray(test).tobytes(), tuple(metrics), level)
            memo = data.__dict__.get("_none_applied")
            if memo is not None and memo[0] == memo_key:
                return memo[1]
        out = {}
        key = (",".join(map(str, np.sort(np.asarray(test)).tolist()))
               if want_ci and method == "ppi_pp" else None)
        for m in metrics:
            rng = stream(seed, "calibration.bootstrap_t", m, key) if key is not None else None
            r = apply_score_method(model[m], data.J[m][test], level, rng=rng, n_boot=n_boot)
            out[m] = Prediction(r.est, r.lo, r.hi, r.se, r.answers)
        if method == "none":
            data._none_applied = (memo_key, out)
        return out

    return Candidate(name, "score", fit, apply, uses_labels=name != "raw")


def label_candidate(name: str, data: CalibrationData, metrics: Sequence[str], level: float, options: dict, seed: int):
    from metaeval.calibration.crossfit import Candidate, Prediction
    from metaeval.calibration.methods import get_method
    from metaeval.calibration.scorelevel import bounded
    from metaeval.random_streams import stream

    method = get_method(name)
    jp = data.pairing.judge
    rng = stream(seed, "calibration.label_draws", name)

    def fit(train, **extra):
        sub, human = data.topic_pairs(train, with_human=True)
        return method.fit_pairs(sub, human, **{**dict(options.get(name, {})), **extra})

    def apply(model, test, want_ci, answers=True):
        sub, _ = data.topic_pairs(test)
        extra = {} if answers else {"answers": False}
        ap = method.apply_pairs(model, sub, metrics=metrics, level=level, rng=rng if want_ci else None,
                                point_only=not want_ci, **extra)
        rows = np.searchsorted(np.sort(test), sub.ans_topic) if answers else None
        out = {}
        for m in metrics:
            grid = None
            if answers:
                grid = np.full((len(test), len(jp.run_ids)), np.nan)
                grid[rows, sub.ans_run] = ap.answers[m]
            est = ap.run[m]
            se = ap.se.get(m, np.full_like(est, np.nan))
            lo, hi = bounded(est, (ap.hi[m] - ap.lo[m]) / 2.0) if m in ap.hi else (np.full_like(est, np.nan),) * 2
            out[m] = Prediction(np.clip(est, 0.0, 1.0), lo, hi, se, grid)
        return out

    # a method's fit options for point predictions only (the ordinal model's covariance, observed information, only
    # feeds its intervals: cross-fitting skips it)
    point = dict(method.point_fit_options)
    fit_point = (lambda train: fit(train, **point)) if point else None
    # the workflow reads label-level candidates' point estimates only (their intervals treat label pairs as
    # independent: see .selection), so cross-fitting computes none of their intervals; fits on every topic
    # (the saved model) still use ``fit``
    # where no per-answer value is read, a method that can skip them (``answers_optional``) does
    apply_point = ((lambda model, test, want_ci: apply(model, test, want_ci, answers=False))
                   if method.answers_optional else None)
    return Candidate(name, "label", fit, apply, fit_point, intervals=False, apply_point=apply_point)


def nanmean(x, axis=None):
    """``np.nanmean`` without the all-NaN warning (NaN where nothing is finite)."""
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(x)
    n = ok.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(ok, x, 0.0).sum(axis=axis) / np.maximum(n, 1), np.nan)
