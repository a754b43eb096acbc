"""Moved to :mod:`metaeval.simulation` (a core module that judges and calibration both use); names re-exported."""

from metaeval.simulation import (DEFAULT_CONFUSION, codes_to_labels, labels_to_codes, resolve_confusion,  # noqa: F401
                                 row_stochastic, simulate_codes, simulate_judge, simulate_support)
