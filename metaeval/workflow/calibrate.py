"""The calibration workflow of ``metaeval calibrate`` (fit) and ``metaeval calibrate apply``: read the label files,
rename runs, run the calibration study (``metaeval.study.calibration_workflow``: :func:`calibration_study`) or apply a fitted
model, and write the documents.  The command checks its options and prints; ``metaeval.calibrate()`` runs the same
:func:`calibration_study` on objects.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

# the calibration study's option defaults (numpy-free): ``metaeval calibrate --help`` shows them, ``metaeval.calibrate()``
# checks its keywords against them (read as constants: building the parser calls nothing)
from metaeval.study.calibration_workflow.defaults import DEFAULTS, SEED_DEFAULT

__all__ = ["DEFAULTS", "SEED_DEFAULT", "apply_file", "calibrate_files", "calibration_study", "check_methods",
           "write_json"]


def _labels(path: Any, run_map: Any) -> Any:
    from metaeval.io import load_labels

    labels = load_labels(path)
    if run_map:
        from metaeval.io.runmap import parse_run_map, rename_runs

        labels = rename_runs(labels, parse_run_map(run_map))
    return labels


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """``obj`` as indented JSON (no NaN) with a final newline."""
    import json

    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=1, allow_nan=False)
        fh.write("\n")


def check_methods(names: Any, option: str) -> list[str]:
    """The calibration method names ``names`` checked against the method registry (an unknown one: one
    :class:`~metaeval.errors.ConfigError` line naming ``option`` and listing the registered methods)."""
    from metaeval.calibration.methods import check_names

    return check_names(names, option)


def calibration_study(human: Any, judge: Any, settings: Mapping[str, Any], *, seed: int,
                      analysis_seed: int | None = None) -> dict[str, Any]:
    """The calibration study's document (leaderboard, candidates, recommendation and the fitted model) of the
    judge's labels against the human ones: :func:`metaeval.study.calibration_workflow.calibrate_study`, the one call
    of it for ``metaeval calibrate`` and ``metaeval.calibrate()`` (``analysis_seed`` None: the study's default)."""
    from metaeval.study.calibration_workflow import calibrate_study

    extra = {} if analysis_seed is None else {"analysis_seed": analysis_seed}
    return calibrate_study(human, judge, dict(settings), seed=seed, **extra)


def calibrate_files(human: Any, judge: Any, settings: Mapping[str, Any], *, out_dir: str | os.PathLike, seed: int,
                    analysis_seed: int = 0, run_map: Any = None, strictness: bool = False):
    """Fit: the calibration study of the judge's labels against the human ones (files; ``run_map`` as
    ``--run-map`` takes it), written as ``calibration.json`` and ``calibration-model.json`` into ``out_dir``
    (``strictness``: the judge's strictness models too).  Returns ``(result, cal_path, model_path)``."""
    from metaeval.io.jsonl import to_jsonable
    from metaeval.study.calibration_workflow import split_model

    human, judge = _labels(human, run_map), _labels(judge, run_map)
    result, model = split_model(calibration_study(human, judge, settings, seed=seed, analysis_seed=analysis_seed))
    if strictness:
        from metaeval.calibration.strictness import strictness_models

        # an analysis draw (the within-topic bootstrap): from the analysis seed, as every analysis draw
        result["strictness"] = to_jsonable(strictness_models(human, judge, seed=analysis_seed))
    cal_path = os.path.join(out_dir, "calibration.json")
    model_path = os.path.join(out_dir, "calibration-model.json")
    write_json(cal_path, result)
    write_json(model_path, model)
    return result, cal_path, model_path


def apply_file(model_path: str | os.PathLike, judge: Any, *, out_dir: str | os.PathLike, run_map: Any = None,
               **apply: Any):
    """Apply: a fitted model (``calibration-model.json``) to a judge's labels (``apply``: the keywords of
    ``metaeval.study.calibration_workflow.apply_model``), written as ``calibrated.json``.  Returns ``(document, path)``;
    an unreadable model is one line."""
    import json

    from metaeval.errors import ConfigError
    from metaeval.study.calibration_workflow import apply_model

    try:
        with open(model_path, encoding="utf-8") as fh:
            model = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{model_path}: cannot read calibration model ({exc})") from exc
    out = apply_model(model, _labels(judge, run_map), **apply)
    path = os.path.join(out_dir, "calibrated.json")
    write_json(path, out)
    return out, path
