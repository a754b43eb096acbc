"""The results folder's lock is held from the first job until the study and the report are written
(``run_sweep(..., hold_lock=True)`` + ``SweepOutcome.release()``, as ``metaeval sweep`` and the Python API do)."""

from __future__ import annotations

import pytest

from metaeval.commands.compose import compose_sweep
from metaeval.pipeline.lock import RunLocked
from metaeval.pipeline.store import ResultsStore
from metaeval.pipeline.sweep import run_sweep


def _config(tmp_path):
    return compose_sweep(["grid=single", "judge=lexical", "strategy=human_auto", "runtime=serial",
                          f"results_dir={tmp_path}", "name=held"])


def test_lock_held_until_release(tmp_path):
    config, cells = _config(tmp_path)
    outcome = run_sweep(config, cells, hold_lock=True)
    assert outcome.label_sets  # judging is over ...
    with pytest.raises(RunLocked, match="another sweep"):
        ResultsStore(outcome.layout)  # ... but a second sweep of the folder is refused until the study is written
    outcome.release()
    ResultsStore(outcome.layout).close()  # now free


def test_without_hold_the_lock_is_dropped_after_judging(tmp_path):
    config, cells = _config(tmp_path)
    outcome = run_sweep(config, cells)
    ResultsStore(outcome.layout).close()
    outcome.release()  # a no-op
