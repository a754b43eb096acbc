"""The cells' studies as Ray tasks on the sweep's local Ray runtime (``metaeval.study.fanout``): the same files,
figure for figure, as one process; Ray is used because it is up, never started for the study."""

from __future__ import annotations

import logging

import pytest

from tests.helpers.study_fanout import differences, study_input

pytestmark = pytest.mark.ray


def test_ray_tasks_write_the_same_figures_as_one_process(ray_runtime, tmp_path, caplog):
    from metaeval.study.run import run_study

    with caplog.at_level(logging.INFO, logger="metaeval.study.run"):
        run_study(study_input(tmp_path / "serial", 1))
        run_study(study_input(tmp_path / "ray", "auto"))
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("the cells' studies")]
    assert "in this process" in lines[0] and "as Ray tasks on 1 node(s)" in lines[1], lines
    diffs = differences(tmp_path / "serial" / "fan", tmp_path / "ray" / "fan")
    assert not diffs, diffs[:10]
