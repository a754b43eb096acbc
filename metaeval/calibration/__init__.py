"""Label calibration: correct an LLM judge's labels/scores against human labels, validated on held-out topics.

Modules:

* ``simulate``: synthetic judges drawn through a confusion matrix (``simulate_support``, ``simulate_judge``);
* ``pairs``: label sets as flat arrays, expected scores from per-pair credit;
* ``methods``: registry of correction methods (``posterior``, ``matrix``, ``matrix_unconstrained``,
  ``ordinal``, ``ppi``), each ``fit_pairs`` -> JSON-ready model -> ``apply_pairs``;
* ``validate``: leave-topics-out K-fold (``cross_validate``); ``tau``: three-level tau before/after;
* ``apply``: fit on human-labelled topics, save/load model bundles, corrected leaderboards with CIs;
* ``strictness``: where the judge is stricter (logit/OLS with topic-cluster SEs, mixed models, indices);
* ``harness``: the simulation study (``run_study``) behind ``metaeval simulate``.

Heavy modules are imported on use.
"""

from metaeval.simulation import simulate_judge, simulate_support

__all__ = ["simulate_judge", "simulate_support"]
