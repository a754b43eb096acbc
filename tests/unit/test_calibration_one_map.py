"""A cell's calibration in one map (issue 34): the splits of the decision, the nested runs and the cell's other parts
(analysis, ``study.json`` figures, self-consistency) share one map of forked processes
(``procedure.decide_and_nest``, ``workflow.calibrate_alongside``, ``fanout.cell_study``), with the numbers of the
separate steps it replaced; a part that fails is still raised or recorded as before."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from metaeval.simulation import simulate_judge

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers: Linux")

ST = {"repeats": 6, "nested_splits": 3, "metrics": ["v_strict", "a_strict"], "n_boot": 50, "n_boot_t": 199,
      "methods": ["ppi", "regression", "ordinal"], "min_topics": 5}


@pytest.fixture(scope="module")
def setup(nist_labels):
    from metaeval.study.calibration_workflow.data import CalibrationData, label_candidate, score_candidate
    from metaeval.study.calibration_workflow.defaults import SCORE_LEVEL, resolve_settings

    ref = nist_labels.subset(qids=nist_labels.qids[:12], run_ids=nist_labels.run_ids[:12], name="nist12")
    judge = simulate_judge(ref, confusion="paper-fig6-edits", seed=3, name="sim")
    s = resolve_settings({**ST, "workers": 1})
    data = CalibrationData(ref, judge, s["metrics"])
    cands = [score_candidate(n, data, s["metrics"], s["level"], 0, s["n_boot_t"]) if n in SCORE_LEVEL else
             label_candidate(n, data, s["metrics"], s["level"], s["options"], 0) for n in s["methods"]]
    return ref, judge, s, data, cands


def _same_evaluation(a, b):
    assert a.splits is not b.splits and len(a.splits) == len(b.splits)
    for (a1, b1), (a2, b2) in zip(a.splits, b.splits):
        assert np.array_equal(a1, a2) and np.array_equal(b1, b2)
    assert a.names == b.names and a.failed == b.failed
    for part in ("err", "tau", "cover", "width", "bias"):
        x, y = getattr(a, part), getattr(b, part)
        assert x.keys() == y.keys(), part
        for m in x:
            for n in x[m]:
                assert np.array_equal(x[m][n], y[m][n], equal_nan=True), (part, m, n)
    assert a.levels == b.levels


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=LINUX)])
def test_one_map_gives_the_separate_steps_numbers_and_the_alongside_results(setup, workers):
    """Planted bug: an outer split or a nested run computed from other topics or another stream (e.g. nested keyed
    like the top decision) changes an error or a choice and fails here; results of ``alongside`` out of order fail."""
    from metaeval.study.calibration_workflow.procedure import decide_and_nest, nested, run_procedure

    _, _, s, data, cands = setup
    top = run_procedure(cands, data, data.labelled, len(data.judge_only), s, 0, want_ci=True)
    nest = nested(cands, data, top, s, 0)
    for o in range(s["nested_splits"]):  # each nested choice is the procedure's on that split's fit topics
        A, B = top.evaluation.splits[o]
        inner = run_procedure(cands, data, A, len(B), s, 0, ("nested", o), want_ci=False, sequential=True)
        assert [nest[m]["choices"][o] for m in s["metrics"]] == [inner.choice[m]["method"] for m in s["metrics"]]
    extra = [lambda k=k: ("part", k, float(np.sum(data.H["v_strict"][data.labelled[:k + 2]], where=np.isfinite(
        data.H["v_strict"][data.labelled[:k + 2]])))) for k in range(3)]
    one, one_nest, done = decide_and_nest(cands, data, s, 0, workers, extra)
    assert one.choice == top.choice and (one.n_fit, one.n_held) == (top.n_fit, top.n_held)
    _same_evaluation(one.evaluation, top.evaluation)
    assert one_nest.keys() == nest.keys()
    for m in nest:
        assert one_nest[m]["choices"] == nest[m]["choices"] and one_nest[m]["verdicts"] == nest[m]["verdicts"]
        for k in ("err", "raw_err", "tau", "raw_tau"):
            assert np.array_equal(one_nest[m][k], nest[m][k], equal_nan=True), (m, k)
    assert done == [f() for f in extra]


def test_one_map_is_one_fork_map(setup, monkeypatch):
    """The speed-up is that the splits, the nested runs and the caller's parts go out together (longest first: the
    nested runs, then the caller's parts, then the splits), not one map after the other."""
    from metaeval import forked
    from metaeval.study.calibration_workflow import procedure

    _, _, s, data, cands = setup
    maps, depth = [], []
    real = forked.fork_map

    def spy(fn, items, workers="auto"):  # the maps this call makes (not the nested runs' own, inside its tasks)
        items = list(items)
        if not depth:
            maps.append(len(items))
        depth.append(1)
        try:
            return real(fn, items, workers)
        finally:
            depth.pop()

    monkeypatch.setattr(forked, "fork_map", spy)
    top, nest, done = procedure.decide_and_nest(cands, data, s, 0, 1, [lambda: "a", lambda: "b"])
    assert maps == [s["nested_splits"] + 2 + s["repeats"]] and done == ["a", "b"]  # (the rank sets: calibrate_alongside)


def test_a_cell_that_cannot_decide_still_runs_the_alongside_parts(setup):
    from metaeval.study.calibration_workflow.procedure import decide_and_nest

    _, _, s, data, cands = setup
    top, nest, done = decide_and_nest(cands, data, {**s, "min_topics": 50}, 0, 1, [lambda: 7])
    assert nest is None and top.evaluation is None and done == [7]
    assert {c["verdict"] for c in top.choice.values()} == {"cannot decide"}


@LINUX
def test_cells_studied_one_by_one_with_forked_calibration_write_the_same_files(tmp_path):
    """The four-cell study of ``tests/helpers/study_fanout.py`` with each cell on its own (``study.workers=1``)
    and its calibration, analysis, figures and self-consistency in one map of 2 forked processes, against every
    part in this process: the same files, figure for figure."""
    from metaeval.study.run import run_study
    from tests.helpers.study_fanout import differences, study_input

    run_study(study_input(tmp_path / "serial", 1, calibration_workers=1))
    run_study(study_input(tmp_path / "forked", 1, calibration_workers=2))
    a, b = tmp_path / "serial" / "fan", tmp_path / "forked" / "fan"
    assert (a / "cells" / "jb__v1__human_auto" / "consistency.json").exists()
    assert not differences(a, b), differences(a, b)[:10]


def _ctx_task(tmp_path, calibration_workers=1):
    from metaeval.study.fanout import CellTask, make_context
    from metaeval.scoring import score_answers
    from tests.helpers.study_fanout import CELLS, study_input

    inp = study_input(tmp_path, 1, calibration_workers=calibration_workers)
    ref_scores = score_answers(inp.reference)
    ctx = make_context(inp.reference, inp.settings, ref_scores, inp.topics, fanned_out=False)
    cell = CELLS[3]
    task = CellTask(cell, inp.label_sets[cell], score_answers(inp.label_sets[cell]), calibratable=True,
                    draws=tuple(inp.samples[cell]))
    return ctx, task


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=LINUX)])
def test_a_failing_analysis_is_raised_and_a_failing_consistency_recorded(tmp_path, monkeypatch, workers):
    """Failures keep their old handling when the parts run in the calibration's map: the analysis's exception
    reaches the caller (as when it ran first, in this process), the self-consistency's is the cell's record."""
    from metaeval import study
    from metaeval.errors import ConfigError
    from metaeval.study import fanout

    ctx, task = _ctx_task(tmp_path, workers)

    def broken_consistency(*a, **k):
        raise ValueError("draws disagree on their topics")

    monkeypatch.setattr(study.consistency, "cell_consistency", broken_consistency)
    work = fanout.cell_study(ctx, task)
    assert work.calibration and "error" not in work.calibration and work.analysis is not None
    assert work.failed == ("consistency",) and work.consistency["error"].startswith("ValueError: draws disagree")
    assert any("self-consistency of jb__v1__human_auto failed" in w for w in work.warnings)

    def broken_analysis(*a, **k):
        raise ConfigError("the reference has no answers for this cell's runs")

    monkeypatch.setattr(fanout, "_analysis", broken_analysis)
    with pytest.raises(ConfigError, match="no answers for this cell"):
        fanout.cell_study(ctx, task)


def test_a_calibration_that_fails_before_its_map_still_gets_the_other_parts(tmp_path, monkeypatch):
    from metaeval.study import fanout
    from metaeval.study.calibration_workflow import workflow

    ctx, task = _ctx_task(tmp_path)

    def refuse(*a, **k):
        raise ValueError("too few topics")

    monkeypatch.setattr(workflow, "calibrate_alongside", refuse)
    work = fanout.cell_study(ctx, task)
    assert work.failed[0] == "calibration" and work.calibration == {"error": "ValueError: too few topics"}
    assert work.analysis is not None and work.figures.get("leaderboard") and work.consistency is not None


_PROBE = '''
import json, sys, tempfile
from pathlib import Path
import metaeval.forked as F
orig, found = F.fork_map, set()
def fork_map(fn, items, workers="auto"):
    base = set(sys.modules)
    def wrapped(x):
        return fn(x), sorted(m for m in set(sys.modules) - base if m.startswith(("metaeval", "scipy")))
    res = orig(wrapped, list(items), workers)
    for _, m in res:
        found.update(m)
    return [r for r, _ in res]
F.fork_map = fork_map
from metaeval.study.run import run_study
from tests.helpers.study_fanout import study_input
with tempfile.TemporaryDirectory() as tmp:
    run_study(study_input(Path(tmp), 1, calibration_workers=2))
print(json.dumps(sorted(found)))
'''


@LINUX
def test_forked_workers_inherit_the_modules_their_tasks_import():
    """In a fresh process (imports cold, as in a sweep), the workers of a cell's map import no metaeval or scipy
    module of their own: the parent imported them before forking (``procedure.TASK_MODULES``,
    ``fanout.PART_MODULES``); each worker used to import scipy.special and the analysis modules on its first task.
    Planted bug: an empty PART_MODULES lists scipy.special and the analysis modules here."""
    import json
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
