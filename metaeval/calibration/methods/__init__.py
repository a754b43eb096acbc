"""Calibration methods; importing this package fills ``REGISTRY`` (name -> class)."""

from metaeval.calibration.methods import matrix, ordinal, posterior  # noqa: F401
from metaeval.calibration.methods.base import REGISTRY, CalibrationMethod, Prediction, get_method

__all__ = ["REGISTRY", "CalibrationMethod", "Prediction", "get_method"]
