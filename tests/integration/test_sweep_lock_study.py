"""The results folder's lock is held from the first job until the study and the report are written
(``run_sweep(..., hold_lock=True)`` + ``SweepOutcome.release()``, as ``metaeval sweep`` and the Python API do)."""

from __future__ import annotations

import pytest

from metaeval.workflow.compose import compose_sweep
from metaeval.pipeline.lock import RunLocked
from metaeval.pipeline.store import ResultsStore
from metaeval.pipeline.sweep import run_sweep


def _config(tmp_path):
    return compose_sweep(["grid=single", "judge=lexical", "strategy=human_auto", "runtime=serial",
                          f"results_dir={tmp_path}", "name=held"])


def test_lock_held_until_release(tmp_path):
    config, cells = _config(tmp_path)
    outcome = run_sweep(config.pipeline, cells, hold_lock=True)
    assert outcome.label_sets  # judging is over ...
    with pytest.raises(RunLocked, match="another sweep"):
        ResultsStore(outcome.layout)  # ... but a second sweep of the folder is refused until the study is written
    outcome.release()
    ResultsStore(outcome.layout).close()  # now free


def test_without_hold_the_lock_is_dropped_after_judging(tmp_path):
    config, cells = _config(tmp_path)
    outcome = run_sweep(config.pipeline, cells)
    ResultsStore(outcome.layout).close()
    outcome.release()  # a no-op


def test_one_executor_serves_every_stage(tmp_path, monkeypatch):
    """auto_auto runs creation, importance and assignment: one executor (Ray: one set of actors) for all three,
    shut down when the sweep ends."""
    from metaeval.pipeline import sweep as sweep_mod

    made, shut = [], []
    real = sweep_mod.Sweep._executor

    def counting(self):
        ex = real(self)
        made.append(ex)
        orig = ex.shutdown
        ex.shutdown = lambda: (shut.append(ex), orig())[1]
        return ex

    monkeypatch.setattr(sweep_mod.Sweep, "_executor", counting)
    config, cells = compose_sweep(["grid=single", "judge=lexical", "strategy=auto_auto", "runtime=serial",
                                   f"results_dir={tmp_path}", "name=stages"])
    outcome = run_sweep(config.pipeline, cells)
    stages = {r["spec"]["stage"] for r in outcome.layout.iter_jobs()}
    assert stages == {"create", "importance", "assign"}
    assert len(made) == 1 and shut == made
