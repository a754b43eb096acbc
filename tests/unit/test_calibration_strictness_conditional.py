"""Strictness models given the human label: a judge that ignores answer length shows no length effect."""

from __future__ import annotations

import numpy as np

from metaeval.calibration import simulate_judge
from metaeval.calibration.strictness import strictness_models


def _coef(block, term):
    return next(c for c in block["coefficients"] if c["term"] == term)


def test_conditioning_on_the_human_label_removes_spurious_effects(nist_labels):
    marginal, conditional = [], []
    for seed in (1, 2, 3):
        judge = simulate_judge(nist_labels, seed=seed)  # errors independent of length and importance by construction
        res = strictness_models(nist_labels, judge, mixed=False)
        marginal.append(_coef(res["logit"], "log_length_z"))
        conditional.append(_coef(res["conditional"]["logit"], "log_length_z"))
        assert "C(human)" in res["conditional"]["logit"]["formula"]
    # marginally, longer answers look "stricter" (they hold more human support labels to mark down) ...
    assert all(m["p"] < 1e-3 and m["coef"] > 0 for m in marginal)
    # ... given the human label the effect is gone
    assert abs(np.mean([c["coef"] for c in conditional])) < 0.05
    assert all(c["p"] > 0.05 for c in conditional)
