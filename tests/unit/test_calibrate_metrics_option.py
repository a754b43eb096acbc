"""One name for the calibrated metrics (issue 32 item 9): ``metaeval calibrate --metrics``, like ``analyze
--metrics``, ``metaeval.calibrate(metrics=)`` and the sweep's ``analysis.metrics``; the older ``--metric`` (CLI) and
``metric=`` (Python) still work and say they are deprecated.  The study itself is replaced by a stub that records
the settings it is given, so this checks the argument handling only (tests/integration/test_calibrate_cli.py runs
the study)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import metaeval
import metaeval.study.calibration_workflow as study_calibration
from metaeval.cli import main
from metaeval.measures import METRICS

DEMO = Path(metaeval.__file__).parent / "data" / "demo" / "assignments.jsonl"


class _Stop(Exception):
    pass


@pytest.fixture
def seen(monkeypatch):
    got: list[dict] = []

    def fake_study(human, judge, settings, **kwargs):
        got.append(dict(settings))
        raise _Stop

    monkeypatch.setattr(study_calibration, "calibrate_study", fake_study)
    return got


def _cli(tmp_path, *options):
    with pytest.raises(_Stop):
        main(["calibrate", "--human", str(DEMO), "--judge", str(DEMO), *options, "--out", str(tmp_path / "o")])


def test_cli_metrics_names_the_metrics_and_the_first_is_primary(seen, tmp_path, capsys):
    _cli(tmp_path, "--metrics", "A_strict", "strict_vital_score")
    _cli(tmp_path, "--metrics", "a_strict", "--metrics", "V_strict")  # repeatable too
    assert [(s["metrics"], s["metric"]) for s in seen] == [(["a_strict", "v_strict"], "a_strict")] * 2
    assert "deprecated" not in capsys.readouterr().err


def test_cli_metric_still_works_and_warns(seen, tmp_path, capsys):
    _cli(tmp_path, "--metric", "A_strict", "--metric", "v_strict")
    assert (seen[0]["metrics"], seen[0]["metric"]) == (["a_strict", "v_strict"], "a_strict")
    err = capsys.readouterr().err
    assert "--metric is deprecated; use --metrics a_strict v_strict" in err


def test_cli_default_is_every_metric_and_an_unknown_one_is_one_line(seen, tmp_path, capsys):
    _cli(tmp_path)
    assert seen[0]["metrics"] == list(METRICS) and seen[0]["metric"] == METRICS[0]
    assert main(["calibrate", "--human", str(DEMO), "--judge", str(DEMO), "--metrics", "v_strct",
                 "--out", str(tmp_path / "o")]) == 2
    assert "--metrics" in capsys.readouterr().err


def test_python_api_takes_the_same_name(seen):
    with pytest.raises(_Stop):
        metaeval.calibrate(str(DEMO), str(DEMO), metrics=["A_strict", "v_strict"])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(_Stop):
            metaeval.calibrate(str(DEMO), str(DEMO), metric="a_strict")
    assert any(issubclass(x.category, DeprecationWarning) and "metrics=" in str(x.message) for x in w)
    # the API hands the names on as given (the study's settings check canonicalises them), the first as primary
    assert [(s["metrics"], s["metric"]) for s in seen] == [(["A_strict", "v_strict"], "A_strict"),
                                                           (["a_strict"], "a_strict")]
