"""Paired topic-bootstrap test between two candidates (and the historical home of the bootstrap names).

**Paired test** "candidate A agrees with the reference more than candidate B" on the cells both share (one
:class:`~metaeval.analysis.cells.Aligned` with two candidates): both are scored on the same topic resamples
(:func:`metaeval.analysis.resample.topic_weights`, one stream per seed); ``d* = tau_A* - tau_B*`` per replicate,
interval and p-value by :func:`metaeval.analysis.comparison.paired_difference` (the one implementation, also
behind ``analyze``'s comparisons of many candidates, which keep each candidate's replicates instead).  The CI is the percentile interval of ``d*`` and the two-sided p-value
the one that inverts it, ``p = min(1, 2 min((1 + #{d* <= 0}) / (B + 1), (1 + #{d* >= 0}) / (B + 1)))``, so
``p < alpha`` exactly when the ``1 - alpha`` interval excludes 0 (up to the +1 terms).

The topic bootstrap itself (weights, run-mean replicates, the ``percentile`` / ``centered`` / ``bca`` interval
methods; ``centered`` is the default of ``tau_levels`` and ``analyze``) lives in
:mod:`metaeval.analysis.resample`; run-pair flips and their paired tests (with Holm's correction) in
:mod:`metaeval.analysis.runpairs`.  Both are re-exported here so older imports keep working.  This module
imports :mod:`~metaeval.analysis.levels`, never the other way round.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metaeval.analysis.cells import Aligned
from metaeval.analysis.levels import LEVELS, LevelEngine
from metaeval.analysis.resample import (CI_METHODS, bca_ci, centered_ci, percentile_ci,  # noqa: F401 (re-export)
                                        run_mean_replicates, topic_weights)
from metaeval.analysis.runpairs import PAIRED_TESTS, holm, run_flips  # noqa: F401 (re-export)

__all__ = ["CI_METHODS", "PAIRED_TESTS", "bca_ci", "centered_ci", "holm", "paired_bootstrap", "percentile_ci",
           "run_flips", "run_mean_replicates", "topic_weights"]


def paired_bootstrap(al: Aligned, variant: str = "b", n_boot: int = 1000, seed: int = 0,
                     alpha: float = 0.05, a: int = 0, b: int = 1) -> pd.DataFrame:
    """Paired topic-bootstrap comparison of candidates ``a`` and ``b`` of ``al`` (same resamples for both).

    One row per level: ``metric, level, tau_candidate_a, tau_candidate_b, diff, ci_low, ci_high, p_value,
    n_boot`` (``n_boot`` = replicates where both taus are defined).
    """
    from metaeval.analysis.comparison import paired_difference

    ea = LevelEngine(al.x, al.ys[a], variant)
    eb = LevelEngine(al.x, al.ys[b], variant)
    one = np.ones((1, len(al.topics)))
    pa, pb = ea.levels(one), eb.levels(one)
    w = topic_weights(len(al.topics), n_boot, seed)
    ra, rb = ea.levels(w), eb.levels(w)
    rows = []
    for lvl in LEVELS:
        d = paired_difference(float(pa[lvl][0]), float(pb[lvl][0]), ra[lvl], rb[lvl], alpha)
        rows.append({"metric": al.metric, "level": lvl, "tau_candidate_a": float(pa[lvl][0]),
                     "tau_candidate_b": float(pb[lvl][0]), **d})
    return pd.DataFrame(rows)
