"""The study fans out like the judging (issue 34): the cells' studies as tasks in this process or in forked workers
(``study.workers``, ``metaeval.study.fanout``, ``metaeval.pipeline.task_map``) write the same files, figure for
figure; the task runner keeps item order, raises a task's own exception, and never forks a process running Ray."""

from __future__ import annotations

import logging
import os
import sys
import types

import pytest

from metaeval.errors import ConfigError
from tests.helpers.study_fanout import CELLS, differences, result_files, study_input


def _study(root, workers, caplog):
    from metaeval.study.run import run_study

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="metaeval.study.run"):
        run_study(study_input(root, workers))
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("the cells' studies")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers: Linux")
def test_forked_cells_write_the_same_figures_as_one_process(tmp_path, caplog):
    serial = _study(tmp_path / "serial", 1, caplog)
    pooled = _study(tmp_path / "pool", 2, caplog)
    assert serial == ["the cells' studies: 4 task(s) in this process, " + serial[0].rsplit(", ", 1)[1]]
    assert "in 2 forked process(es)" in pooled[0] or "in 1 forked process(es)" in pooled[0], pooled
    a, b = tmp_path / "serial" / "fan", tmp_path / "pool" / "fan"
    files = result_files(a)
    # every part of every cell was written: analysis with pairs, calibration, consistency, study.json
    for rel in ("summary.json", "study/study.json", "analysis/analysis.json", "analysis/compare.json",
                "analysis/paired.csv", f"cells/{CELLS[0]}/calibration.json", f"cells/{CELLS[0]}/calibration-model.json",
                f"cells/{CELLS[3]}/consistency.json"):
        assert rel in files, rel
    assert not differences(a, b), differences(a, b)[:10]
    import json

    paired = json.loads((a / "analysis" / "compare.json").read_text(encoding="utf-8"))
    pairs = {(r["candidate_a"], r["candidate_b"]) for r in paired["rows"]}
    assert pairs == {(CELLS[0], CELLS[1]), (CELLS[0], CELLS[2])}
    stats = {r["statistic"] for r in paired["rows"] if (r["candidate_a"], r["candidate_b"]) == (CELLS[0], CELLS[1])}
    assert {"tau", "cohen_kappa"} <= stats  # the label-agreement pair came from the tasks' support-label counts


def test_task_map_keeps_order_and_raises_the_task_error(monkeypatch):
    from metaeval.pipeline.task_map import map_tasks

    run = map_tasks(_square_plus, 10, list(range(7)), workers=2)
    assert run.results == [x * x + 10 for x in range(7)]
    if sys.platform.startswith("linux"):
        assert run.runner == "pool" and all(pid != os.getpid() for _, pid in run.where)
    one = map_tasks(_square_plus, 1, [3, 4], workers=1)
    assert one.runner == "serial" and one.results == [10, 17] and {pid for _, pid in one.where} == {os.getpid()}
    with pytest.raises(ConfigError, match="cell 3 is bad"):
        map_tasks(_fail_on_three, None, [1, 2, 3, 4], workers=2)
    with pytest.raises(ConfigError, match="workers=0"):
        map_tasks(_square_plus, 0, [1, 2], workers=0)


def test_never_forks_a_process_where_ray_is_up(monkeypatch):
    from metaeval.pipeline import task_map

    fake = types.SimpleNamespace(is_initialized=lambda: True, cluster_resources=lambda: {"CPU": 3.0})
    monkeypatch.setitem(sys.modules, "ray", fake)
    assert task_map.choose_runner("auto", 5) == ("ray", 6)  # twice the cluster's CPUs in flight
    assert task_map.choose_runner(2, 5) == ("ray", 2)
    assert task_map.choose_runner(1, 5) == ("serial", 1)  # study.workers=1: in this process, Ray or not
    assert task_map.choose_runner("auto", 1) == ("serial", 1)
    fake.is_initialized = lambda: False
    assert task_map.choose_runner(2, 5)[0] in ("pool", "serial")


def test_study_workers_is_a_checked_setting_outside_the_reuse_key():
    from metaeval.study.settings import build_study_settings

    assert build_study_settings().fanout.workers == "auto"
    assert build_study_settings(study={"workers": 3}).fanout.workers == 3
    with pytest.raises(ConfigError, match="study.workers"):
        build_study_settings(study={"workers": 0})
    with pytest.raises(ConfigError, match="study.wrokers"):
        build_study_settings(study={"wrokers": 2})
    assert build_study_settings(study={"workers": 1}).key_parts() == build_study_settings().key_parts()


def _square_plus(shared, x):
    return x * x + shared


def _fail_on_three(shared, x):
    if x == 3:
        raise ConfigError(f"cell {x} is bad")
    return x
