"""One name for a list of metrics (issue 31 item 5): ``metaeval compare --metrics`` and ``metaeval plan --metrics``
take several metrics after one option, like ``calibrate --metrics`` and ``analyze --metrics``; the older repeated
``--metric`` still works with a one-line deprecation warning on stderr.  The comparison and the plan study are
replaced by stubs that record what they are given, so this checks the argument handling only
(tests/integration/test_compare_cli.py and test_plan_cli.py run them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import metaeval
import metaeval.study.assessor_plan as assessor_plan
import metaeval.study.compare as study_compare
from metaeval.cli import main

DEMO = Path(metaeval.__file__).parent / "data" / "demo" / "assignments.jsonl"


class _Stop(Exception):
    pass


@pytest.fixture
def compared(monkeypatch):
    got: list = []

    def fake(reference, candidates, **kwargs):
        got.append(kwargs["metrics"])
        raise _Stop

    monkeypatch.setattr(study_compare, "compare_candidates", fake)
    return got


@pytest.fixture
def planned(monkeypatch):
    got: list = []

    def fake(reference, judge, settings, **kwargs):
        got.append((settings["metrics"], settings["metric"]))
        raise _Stop

    monkeypatch.setattr(assessor_plan, "plan_study", fake)
    return got


def _compare(tmp_path, *options):
    a, b = tmp_path / "judge_a.jsonl", tmp_path / "judge_b.jsonl"
    for f in (a, b):
        if not f.exists():
            shutil.copy(DEMO, f)
    with pytest.raises(_Stop):
        main(["compare", str(a), str(b), "--reference", str(DEMO), *options])


def _plan(tmp_path, *options):
    with pytest.raises(_Stop):
        main(["plan", "--reference", str(DEMO), "--judge", str(DEMO), *options, "--out", str(tmp_path / "p")])


def test_compare_metrics_takes_a_list_and_the_first_leads(compared, tmp_path, capsys):
    _compare(tmp_path, "--metrics", "A_strict", "strict_vital_score")
    _compare(tmp_path, "--metrics", "a_strict", "--metrics", "V_strict")  # repeatable too
    assert compared == [["a_strict", "v_strict"]] * 2
    assert "deprecated" not in capsys.readouterr().err


def test_compare_metric_still_works_and_warns(compared, tmp_path, capsys):
    _compare(tmp_path, "--metric", "A_strict", "--metric", "v_strict")
    assert compared == [["a_strict", "v_strict"]]
    assert "warning: compare --metric is deprecated; use --metrics a_strict v_strict" in capsys.readouterr().err


def test_compare_unknown_metric_names_the_option_given(compared, tmp_path, capsys):
    a = tmp_path / "judge_a.jsonl"
    shutil.copy(DEMO, a)
    shutil.copy(DEMO, tmp_path / "judge_b.jsonl")
    for option in ("--metrics", "--metric"):
        assert main(["compare", str(a), str(tmp_path / "judge_b.jsonl"), "--reference", str(DEMO), option,
                     "ndcg"]) == 2
        assert f"{option} ndcg: expected one of" in capsys.readouterr().err
    assert compared == []


def test_plan_metrics_takes_a_list_and_the_first_is_primary(planned, tmp_path, capsys):
    _plan(tmp_path, "--metrics", "A_strict", "strict_vital_score")
    _plan(tmp_path, "--metrics", "a_strict", "--metrics", "V_strict")
    assert planned == [(["a_strict", "v_strict"], "a_strict")] * 2
    assert "deprecated" not in capsys.readouterr().err


def test_plan_metric_still_works_and_warns_and_the_default_is_two(planned, tmp_path, capsys):
    _plan(tmp_path, "--metric", "A_strict", "--metric", "v_strict")
    assert "warning: plan --metric is deprecated; use --metrics a_strict v_strict" in capsys.readouterr().err
    _plan(tmp_path)
    assert planned == [(["a_strict", "v_strict"], "a_strict"), (["v_strict", "a_strict"], "v_strict")]
    assert main(["plan", "--reference", str(DEMO), "--judge", str(DEMO), "--metrics", "v_strct",
                 "--out", str(tmp_path / "p")]) == 2
    assert "--metrics 'v_strct'" in capsys.readouterr().err and len(planned) == 2
