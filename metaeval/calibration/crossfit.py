"""Held-out evaluation at the applied size: candidates, random (fit, held-out) splits of the human-labelled topics,
and the noise of a mean over overlapping splits.

A candidate (:class:`Candidate`) is a method bound to the data: ``fit(topic indices)`` and ``apply(model, topic
indices, want_ci) -> {metric: Prediction}``.  :func:`applied_split_sizes` gives one split's sizes so that fitting
on its fit part and scoring on its held-out part mimics fitting on the ``n_L`` human-labelled topics and applying
to the ``n_U`` judge-only ones (not ``n_L / K``-topic folds: the error of a correction, and whether it beats raw,
depends on how many topics it is fitted on and applied to); :func:`applied_splits` draws them, or enumerates
every distinct split when there are no more than asked for (each checked disjoint by :func:`check_disjoint`:
nothing is scored on a topic it was fitted on); :func:`corrected_resampled_se` is the SE of a mean over such
overlapping splits.  The procedure that uses them is
:mod:`metaeval.study.calibration_workflow.procedure`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np


def check_disjoint(fit_topics: Sequence[int], eval_topics: Sequence[int]) -> None:
    """Refuse to evaluate a calibration on topics it was fitted on."""
    overlap = set(np.asarray(fit_topics).tolist()) & set(np.asarray(eval_topics).tolist())
    if overlap:
        raise AssertionError(f"calibration evaluated on {len(overlap)} topic(s) it was fitted on")


@dataclass
class Prediction:
    """One candidate applied to some topics, for one metric: per-run arrays and per-answer (T_U, R) values."""

    est: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    se: np.ndarray
    answers: np.ndarray | None = None


#: fit(train_topic_idx) -> model ; apply(model, test_topic_idx, want_ci) -> {metric: Prediction}
FitFn = Callable[[np.ndarray], Any]
ApplyFn = Callable[[Any, np.ndarray, bool], dict[str, Prediction]]


@dataclass
class Candidate:
    name: str
    level: str  # "score" or "label"
    fit: FitFn
    apply: ApplyFn
    #: optional cheaper fit for point predictions only (``apply(model, test, want_ci=False)``), used where no
    #: interval is needed (the inner selection folds); it must give the same point predictions as ``fit``
    fit_point: FitFn | None = None
    #: optional cheaper apply for run-level point estimates only (``Prediction.answers`` None), used where no
    #: interval and no per-answer value is read (every split but the first few, whose per-topic taus need the
    #: answers); it must give the same ``est`` as ``apply(model, test, False)``
    apply_point: ApplyFn | None = None
    #: False when the caller uses this candidate's point estimates only: the outer folds then skip its intervals
    #: too (``fit_point``, ``want_ci=False``), which moves none of its point estimates
    intervals: bool = True
    #: False only for raw: its whole-track score is the judge's everywhere, human labels included nowhere
    uses_labels: bool = True


# --------------------------------------------------------------------------- splits at the applied size
def applied_split_sizes(n_labelled: int, n_applied: int, folds: int = 5) -> tuple[int, int]:
    """(fit topics, held-out topics) of one split of ``n_labelled`` topics that mimics fitting on ``n_labelled``
    and applying to ``n_applied``: the fit share is ``n_L / (n_L + n_U)`` (``1 - 1 / folds`` when nothing is
    applied, i.e. every judge topic is human-labelled), rounded, kept within [2, n_L - 1]."""
    from metaeval.errors import ConfigError

    if n_labelled < 3:
        raise ConfigError(f"{n_labelled} human-labelled topics: a split needs at least 3 (2 to fit, 1 to score)")
    share = n_labelled / (n_labelled + n_applied) if n_applied > 0 else 1.0 - 1.0 / max(int(folds), 2)
    a = int(min(max(int(round(n_labelled * share)), 2), n_labelled - 1))
    return a, n_labelled - a


def applied_splits(topics: np.ndarray, n_fit: int, n_splits: int,
                   rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n_splits`` random (fit, held-out) splits of ``topics``, ``n_fit`` topics to fit, the rest held out; each
    split checked disjoint.

    When there are no more distinct splits than ``n_splits`` (``C(n, n - n_fit) <= n_splits``: e.g. 20 labelled
    topics applied to 1, the 20 leave-one-out splits) every distinct split is returned once instead (in an order drawn from ``rng``, so that
    the first few - the nested evaluation's outer splits - are a random subset): the held-out mean over them is the exact
    design-based figure (each topic held out equally often), where ``n_splits`` random draws would repeat splits
    (20 draws of the 20 leave-one-out splits hold about 5 topics out more than once and 7 never: weights that say
    nothing about the procedure) and add Monte-Carlo noise."""
    from itertools import combinations
    from math import comb

    topics = np.asarray(topics)
    n_held = len(topics) - n_fit
    out = []
    if 0 < n_held < len(topics) and comb(len(topics), n_held) <= n_splits:
        for held_idx in combinations(range(len(topics)), n_held):
            mask = np.zeros(len(topics), dtype=bool)
            mask[list(held_idx)] = True
            fit, held = np.sort(topics[~mask]), np.sort(topics[mask])
            check_disjoint(fit, held)
            out.append((fit, held))
        return [out[i] for i in rng.permutation(len(out))]
    for _ in range(n_splits):
        perm = rng.permutation(topics)
        fit, held = np.sort(perm[:n_fit]), np.sort(perm[n_fit:])
        check_disjoint(fit, held)
        out.append((fit, held))
    return out


def corrected_resampled_se(d: np.ndarray, n_fit: int, n_held: int) -> float:
    """SE of the mean of ``d`` over repeated random splits, corrected for their overlap (Nadeau & Bengio 2003,
    "Inference for the generalization error", Machine Learning 52:239, the corrected resampled t):
    ``sqrt((1 / S + n_held / n_fit) s^2_d)``.  The plain ``s_d / sqrt(S)`` treats overlapping splits as
    independent and shrinks to zero as ``S`` grows; NaN with fewer than two finite values."""
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return float("nan")
    return float(np.sqrt((1.0 / d.size + n_held / max(n_fit, 1)) * d.var(ddof=1)))
