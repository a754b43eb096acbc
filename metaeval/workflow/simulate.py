"""The simulation workflow of ``metaeval simulate``: read the human labels (and a real judge's, for the
``resampled`` kind), run the calibration harness (:func:`metaeval.calibration.harness.run_study`: per judge kind and
replication, every method fitted on ``1 - holdout`` of the topics and applied to the rest; bias cut, RMSE, coverage,
worst-run coverage and CI width with their Monte-Carlo SEs) and write ``simulation.json``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class SimulationRun:
    """What ``metaeval simulate`` did: the harness's document (``human``: the label set's name) and its file."""

    result: dict
    path: str


def simulate_files(human: str, *, kinds: Sequence[str], out_dir: str | os.PathLike, real_judge: str | None = None,
                   reps: int = 200, seed: int = 0, methods: Sequence[str] | None = None, metric: str = "v_strict",
                   holdout: float = 0.25, level: float = 0.95, confusion: str = "paper-fig6-edits") -> SimulationRun:
    """``metaeval simulate``: the harness on the labels of ``human`` (and ``real_judge``'s), written as
    ``simulation.json`` into ``out_dir``."""
    import json

    from metaeval.calibration.harness import run_study
    from metaeval.io import load_labels
    from metaeval.io.atomic import atomic_write_text
    from metaeval.io.jsonl import to_jsonable

    labels = load_labels(human)
    real = load_labels(real_judge) if real_judge else None
    res = run_study(labels, kinds=list(kinds), reps=reps, seed=seed, methods=methods, metric=metric, holdout=holdout,
                    level=level, confusion=confusion, real_judge=real)
    res["human"] = labels.name
    path = os.path.join(out_dir, "simulation.json")
    atomic_write_text(path, json.dumps(to_jsonable(res), indent=1) + "\n")
    return SimulationRun(res, path)
