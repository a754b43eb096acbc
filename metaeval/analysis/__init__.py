"""Meta-evaluation of a candidate label source (an LLM judge) against a reference (e.g. NIST assessors).

Modules:

* :mod:`~metaeval.analysis.kendall` - tau-b / tau-a / tau_AP / tau_AP-b (registry ``TAU_VARIANTS``) and
  kendall@k, vectorised (the one tau implementation of the package);
* :mod:`~metaeval.analysis.cells` - score inputs -> long tables -> aligned topic x run matrices;
* :mod:`~metaeval.analysis.resample` - the one topic bootstrap (weights, run-mean replicates, CI methods);
* :mod:`~metaeval.analysis.ranks` - the one ranking rule (competition ranks, 1 = best);
* :mod:`~metaeval.analysis.levels` - ``tau_levels`` at run / per-topic-average / pooled level (``TauLevels``)
  with top-heavy run statistics; ``levels_matrix`` for dense arrays (calibration loops);
* :mod:`~metaeval.analysis.pooled` - pooled tau as quadratic forms in topic weights (fast bootstrap);
* :mod:`~metaeval.analysis.bootstrap` - paired topic-bootstrap test between two candidates;
* :mod:`~metaeval.analysis.runpairs` - run-pair flips, paired t / exact or adaptive sign-flip tests, Holm;
* :mod:`~metaeval.analysis.diagnostics` - per-run rankings on both sides and flags per comparison;
* :mod:`~metaeval.analysis.confusion` - kappa, Krippendorff's alpha, strictness, Stuart-Maxwell from counts;
* :mod:`~metaeval.analysis.agreement` - joining two label sets and their support / importance agreement;
* :mod:`~metaeval.analysis.descriptive` - Table 4 style statistics per label set;
* :mod:`~metaeval.analysis.meta_evaluation` - ``analyze(reference, candidates, ...)`` returning DataFrames and the JSON block.

Names are imported lazily so ``import metaeval.analysis`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "TAU_VARIANTS": "kendall", "kendall": "kendall", "tau_a": "kendall", "tau_b": "kendall", "tau_ap": "kendall",
    "tau_ap_sym": "kendall", "get_variant": "kendall", "tau_ap_b": "kendall", "kendall_at_k": "kendall",
    "TauLevels": "levels", "tau_levels": "levels", "LEVELS": "levels", "LevelEngine": "levels",
    "levels_from_aligned": "levels", "levels_matrix": "levels",
    "align": "cells", "to_long": "cells", "Aligned": "cells",
    "topic_weights": "resample", "percentile_ci": "resample", "run_mean_replicates": "resample",
    "percentile_cis": "resample", "bootstrap_run_means": "resample", "ratio_replicates": "resample",
    "ranks": "ranks", "rank_array": "ranks",
    "paired_bootstrap": "bootstrap",
    "run_flips": "runpairs", "PAIRED_TESTS": "runpairs", "holm": "runpairs", "sign_flip": "runpairs",
    "comparison_diagnostics": "diagnostics", "run_rankings": "diagnostics", "defaulted_cells": "diagnostics",
    "label_agreement": "agreement", "importance_agreement": "agreement", "join_labels": "agreement",
    "confusion_agreement": "confusion", "krippendorff_alpha_ordinal": "confusion", "strictness_index": "confusion",
    "describe_labels": "descriptive", "describe_many": "descriptive", "label_mix": "descriptive",
    "CI_METHODS": "resample",
    "analyze": "meta_evaluation", "AnalysisResult": "meta_evaluation",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"metaeval.analysis.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'metaeval.analysis' has no attribute {name!r}")
