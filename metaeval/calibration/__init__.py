"""Calibration methods: correct an LLM judge's scores against human labels, always evaluated on held-out topics.

Modules (the calibrate workflow that compares and chooses among them is :mod:`metaeval.study.calibration_workflow`):

* ``pairing``: labels paired by (topic, run, normalised nugget text) with match coverage;
* ``pairs``: label sets as flat arrays (expected scores from per-pair credit);
* ``scorelevel``: score-level methods (``none`` = raw, ``ppi``, ``ppi_pp``, ``regression``) and the unclustered
  ``ppi_mean`` that agrees with ppi-python;
* ``methods``: label-level methods (``posterior``, ``matrix``, ``matrix_unconstrained``, ``ordinal``);
* ``crossfit``: outer leave-topics-out folds, nested selection with raw as a candidate;
* ``raw``: the raw judge leaderboard with topic-bootstrap intervals;
* ``strictness``: where the judge is stricter; ``harness``: the simulation study behind ``metaeval simulate``.

Simulated judges live in the core module :mod:`metaeval.simulation` (re-exported here).  Heavy modules are
imported on use.
"""

from metaeval.simulation import simulate_judge, simulate_support

__all__ = ["simulate_judge", "simulate_support"]
