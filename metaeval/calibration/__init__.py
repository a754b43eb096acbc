"""Label calibration: correct an LLM judge's labels/scores against human labels, validated on held-out topics.

Modules: ``simulate`` (synthetic judges from a confusion matrix), ``methods`` (registry of correction
methods), ``validate`` (leave-topics-out K-fold), ``strictness`` (where is the judge stricter?), ``harness``
(simulation study of the methods).  Heavy modules are imported on use.
"""

from metaeval.calibration.simulate import simulate_judge, simulate_support

__all__ = ["simulate_judge", "simulate_support"]
