"""THE calibrate workflow, shared by sweep cells and ``metaeval calibrate``: one function, one ``calibration.json``.

Modules, one job each:

* :mod:`.settings` - defaults and checks;
* :mod:`.data` - score matrices, text pairing, candidates;
* :mod:`.selection` - held-out figures over repeated cross-fitting and the decision rule;
* :mod:`.leaderboard` - the estimate of the human leaderboard over the whole track, with intervals;
* :mod:`.model` - the fitted model, its fingerprints, and applying it to new judge labels;
* :mod:`.workflow` - :func:`calibrate_study`, which ties them together.
"""

from metaeval.study.calibration.model import apply_model, check_fingerprints, fingerprints
from metaeval.study.calibration.settings import (ALL_METHODS, DEFAULTS, LABEL_LEVEL, MODEL_FORMAT, SCHEMA, SCORE_LEVEL,
                                                 resolve_settings)
from metaeval.study.calibration.workflow import calibrate_study, split_model

__all__ = ["ALL_METHODS", "DEFAULTS", "LABEL_LEVEL", "MODEL_FORMAT", "SCHEMA", "SCORE_LEVEL", "apply_model",
           "calibrate_study", "check_fingerprints", "fingerprints", "resolve_settings", "split_model"]
