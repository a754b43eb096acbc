"""The study's speed-ups move no number: one NIST cell's study written the fast way (forked repeats, point-only
label-level cross-fitting, stacked matrix maps) and the slow way (one process, every candidate's intervals, one
``_eq_solution_map`` per support) gives the same summary.json, study.json, analysis.json, calibration.json and
calibration model, compared field by field, exactly, by ``scripts/compare_summaries.py``."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "compare_summaries.py"
_spec = importlib.util.spec_from_file_location("compare_summaries", SCRIPT)
cs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cs)

CELL = "judge-like__v1__human_auto"
FILES = ("summary.json", "study/study.json", "analysis/analysis.json", f"cells/{CELL}/calibration.json",
         f"cells/{CELL}/calibration-model.json")


def _study(root: Path, nist, workers) -> Path:
    from metaeval.layout import ResultsLayout
    from metaeval.study.run import StudyInput, run_study
    from metaeval.study.settings import build_study_settings
    from metaeval.testing.relabel import judge_like

    settings = build_study_settings({"bootstrap": 200, "seed": 0}, {"folds": 5, "seed": 0, "workers": workers})
    lay = ResultsLayout(root, "speed")
    cells = [{"cell": CELL, "judge": "judge-like", "prompt": "v1", "strategy": "human_auto",
              "stats": {"judge_calls": 0, "calls": 0}}]
    run_study(StudyInput(layout=lay, label_sets={CELL: judge_like(nist, name="judge-like")}, reference=nist,
                         settings=settings, config={"name": "speed"}, cells=cells, calibratable=[CELL],
                         dataset={"name": "nist"}, topics={q: "" for q in nist.qids}))
    return lay.root


def _slow_support_maps_stack(As):
    from metaeval.calibration.methods.matrix import _SUPPORTS, _eq_solution_map

    maps = [[_eq_solution_map(A, S) for S in _SUPPORTS] for A in As]
    return (np.array([[P for P, _ in m] for m in maps]), np.array([[r for _, r in m] for m in maps]))


def test_fast_and_slow_study_write_the_same_numbers(nist_labels, tmp_path, monkeypatch):
    fast = _study(tmp_path / "fast", nist_labels, workers=2)

    import metaeval.calibration.methods.matrix as matrix
    import metaeval.study.calibration_workflow.data as data

    plain = data.label_candidate
    monkeypatch.setattr(data, "label_candidate", lambda *a, **k: dataclasses.replace(plain(*a, **k), intervals=True))
    monkeypatch.setattr(matrix, "support_maps_stack", _slow_support_maps_stack)
    slow = _study(tmp_path / "slow", nist_labels, workers=1)

    for name in FILES:
        old, new = (json.loads((root / name).read_text(encoding="utf-8")) for root in (slow, fast))
        diffs = list(cs.differences(old, new, extra_ignored=frozenset({"workers"})))  # the one setting that differs
        assert not diffs, f"{name}: " + "; ".join(diffs[:5])
    cal = json.loads((fast / FILES[3]).read_text(encoding="utf-8"))
    assert cal["candidates"]["matrix"]["status"] == "ok"  # the label-level methods took part
