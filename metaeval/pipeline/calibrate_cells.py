"""Calibration inside a sweep: leave-topics-out validation of every method for one cell (human_* strategies,
where the judge labels the reference's own nuggets), written to ``cells/<cell>/calibration.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def calibrate_cell(human, judge, ccfg: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    from metaeval.calibration.validate import DEFAULT_METHODS, cross_validate
    from metaeval.io.jsonl import to_jsonable

    methods = ccfg.get("methods") or list(DEFAULT_METHODS)
    folds = min(int(ccfg.get("folds", 5)), len(set(human.labels["qid"])))
    result = cross_validate(human, judge, methods=methods, folds=folds, seed=int(ccfg.get("seed", 0)))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "calibration.json").write_text(json.dumps(to_jsonable(result), indent=2) + "\n", encoding="utf-8")
    return to_jsonable(result)
