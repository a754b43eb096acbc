"""Calibration methods; importing this package fills ``REGISTRY`` (name -> class) with the built-in methods.

Score-level methods live in :mod:`metaeval.calibration.scorelevel`, label-level ones in this package; each is one
class with ``@register`` (:mod:`.base`).  Ask the registry (``method_names``, ``get_method``, ``display_names``)
for any list of methods.
"""

from metaeval.calibration import scorelevel  # noqa: F401  (score-level: none, ppi, ppi_pp, regression)
from metaeval.calibration.methods import posterior, matrix, ordinal  # noqa: F401  (label-level, in this order)
from metaeval.calibration.methods.base import (REGISTRY, CalibrationMethod, ScoreMethod, check_names,
                                               display_names, get_method, method_names, register)

__all__ = ["REGISTRY", "CalibrationMethod", "ScoreMethod", "check_names", "display_names", "get_method",
           "method_names", "register"]
