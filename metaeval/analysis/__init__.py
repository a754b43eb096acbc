"""Meta-evaluation of a candidate label source (an LLM judge) against a reference (e.g. NIST assessors).

Modules:

* :mod:`~metaeval.analysis.kendall` - tau-b / tau-a / tau_AP (registry ``TAU_VARIANTS``), vectorised;
* :mod:`~metaeval.analysis.cells` - score inputs -> long tables -> aligned topic x run matrices;
* :mod:`~metaeval.analysis.levels` - ``tau_levels`` at run / per-topic-average / pooled level (``TauLevels``);
* :mod:`~metaeval.analysis.pooled` - pooled tau as quadratic forms in topic weights (fast bootstrap);
* :mod:`~metaeval.analysis.bootstrap` - topic-bootstrap CIs, paired test between candidates, run-pair flips;
* :mod:`~metaeval.analysis.confusion` - kappa, Krippendorff's alpha, strictness, Stuart-Maxwell from counts;
* :mod:`~metaeval.analysis.agreement` - joining two label sets and their support / importance agreement;
* :mod:`~metaeval.analysis.descriptive` - Table 4 style statistics per label set;
* :mod:`~metaeval.analysis.api` - ``analyze(reference, candidates, ...)`` returning DataFrames and the JSON block.

Names are imported lazily so ``import metaeval.analysis`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "TAU_VARIANTS": "kendall", "kendall": "kendall", "tau_a": "kendall", "tau_b": "kendall", "tau_ap": "kendall",
    "tau_ap_sym": "kendall", "get_variant": "kendall",
    "TauLevels": "levels", "tau_levels": "levels", "LEVELS": "levels", "LevelEngine": "levels",
    "levels_from_aligned": "levels",
    "align": "cells", "to_long": "cells", "Aligned": "cells",
    "topic_weights": "bootstrap", "percentile_ci": "bootstrap", "paired_bootstrap": "bootstrap",
    "run_flips": "bootstrap", "PAIRED_TESTS": "bootstrap",
    "label_agreement": "agreement", "importance_agreement": "agreement", "join_labels": "agreement",
    "confusion_agreement": "confusion", "krippendorff_alpha_ordinal": "confusion", "strictness_index": "confusion",
    "describe_labels": "descriptive", "describe_many": "descriptive", "label_mix": "descriptive",
    "CI_METHODS": "bootstrap",
    "analyze": "api", "AnalysisResult": "api",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"metaeval.analysis.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'metaeval.analysis' has no attribute {name!r}")
