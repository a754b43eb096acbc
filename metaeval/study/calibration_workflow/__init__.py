"""THE calibrate workflow, shared by sweep cells and ``metaeval calibrate``: one function, one ``calibration.json``
(the calibration *methods* it compares are :mod:`metaeval.calibration`).

Modules, one job each:

* :mod:`.defaults` - defaults, candidate method names, file formats and the settings check;
* :mod:`.data` - score matrices, text pairing, candidates;
* :mod:`.selection` - held-out figures over repeated cross-fitting and the decision rule;
* :mod:`.leaderboard` - the estimate of the human leaderboard over the whole track, with intervals;
* :mod:`.model` - the fitted model, its fingerprints, and applying it to new judge labels;
* :mod:`.workflow` - :func:`calibrate_study`, which ties them together.
"""


from typing import Any

#: exported name -> the module that defines it (imported on first use: ``.defaults`` stays importable without numpy,
#: so the command-line parser can read ``DEFAULTS``)
_EXPORTS: dict[str, str] = {
    **{n: "metaeval.study.calibration_workflow.model" for n in ("apply_model", "check_fingerprints", "fingerprints")},
    **{n: "metaeval.study.calibration_workflow.defaults"
       for n in ("ALL_METHODS", "DEFAULTS", "LABEL_LEVEL", "MODEL_FORMAT", "SCHEMA", "SCORE_LEVEL", "resolve_settings")},
    **{n: "metaeval.study.calibration_workflow.workflow" for n in ("calibrate_study", "split_model")},
}


def __getattr__(name: str) -> Any:
    import importlib

    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = ["ALL_METHODS", "DEFAULTS", "LABEL_LEVEL", "MODEL_FORMAT", "SCHEMA", "SCORE_LEVEL", "apply_model",
           "calibrate_study", "check_fingerprints", "fingerprints", "resolve_settings", "split_model"]
