"""Small wording fixes a new user met (issue 32, item 9): each message reads as English and names what to do."""

from __future__ import annotations

import json

import pytest

from metaeval.errors import FormatError


def test_an_answers_file_given_to_analyze_is_named_plainly(tmp_path):
    from metaeval.analysis.meta_evaluation import load_input

    p = tmp_path / "answers.jsonl"
    p.write_text(json.dumps({"run_id": "r", "topic_id": "q", "answer": [{"text": "x"}]}) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as exc:
        load_input(p)
    msg = str(exc.value)
    assert "is a answers" not in msg and "holds answers (detected format 'answers'), not labels" in msg
    assert str(p) in msg


def test_a_registered_file_loaded_by_path_keeps_the_dataset_name(nist_file):
    """``dataset=trec-rag-2024 dataset.source=.../nugget_assignment.20241108.jl``: the summary said "Dataset
    nugget_assignment" (the file's stem); the file is the registry's trec-rag-2024 file, so that is its name."""
    from metaeval.data.dataset import load_dataset

    assert load_dataset(nist_file).name == "trec-rag-2024"


def test_an_unregistered_file_is_named_by_its_stem(tmp_path, nist_file):
    import shutil

    from metaeval.data.dataset import load_dataset

    copy = tmp_path / "my_labels.jl"
    shutil.copy(nist_file, copy)
    assert load_dataset(copy).name == "my_labels"


def test_a_dataset_not_fetched_says_dataset_source_first(tmp_path, monkeypatch):
    """The sweep user has a copy of the file: the error names ``dataset.source=PATH``, then ``data fetch``."""
    from metaeval.data.dataset import load_dataset
    from metaeval.errors import ConfigError

    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path / "empty"))
    with pytest.raises(ConfigError) as exc:
        load_dataset("trec-rag-2024")
    msg = str(exc.value)
    assert "dataset=trec-rag-2024 dataset.source=PATH" in msg and msg.index("dataset.source=") < msg.index("data fetch")


def _sweep_error(tmp_path, capsys, *overrides: str) -> str:
    from metaeval.cli import main

    assert main(["sweep", "--dry-run", "grid=single", "strategy=human_auto", f"results_dir={tmp_path}",
                 *overrides]) == 2
    return capsys.readouterr().err


def test_a_judge_without_a_deployment_says_so_instead_of_suggesting_plus(tmp_path, capsys):
    err = _sweep_error(tmp_path, capsys, "judge=lexical", "judge.deployment.model=foo")
    assert "judge lexical has no deployment setting" in err and "+judge.deployment" not in err
    assert "known: judge, name, support_threshold" in err


def test_a_misspelt_judge_gets_the_nearest_option(tmp_path, capsys):
    err = _sweep_error(tmp_path, capsys, "judge=lexcial")
    assert "judge=lexcial: no such judge; did you mean lexical?" in err and "Config search path" not in err
    assert "./conf/judge/lexcial.yaml" in err


def test_calibration_interval_columns_are_float_with_nan_for_a_missing_bound():
    from metaeval.api_results import CalibrationResult

    # every topic human-labelled: no interval for the human estimate on any run (the NIST study's case)
    rows = [{"run_id": "a", "human_estimate": 0.5, "human_estimate_ci": None, "judge_score": 0.4,
             "judge_score_ci": [0.3, 0.5]},
            {"run_id": "b", "human_estimate": 0.6, "human_estimate_ci": None, "judge_score": 0.5,
             "judge_score_ci": [0.4, 0.6]}]
    from tests.helpers import results as R

    res = CalibrationResult.from_json(R.calibration_doc({"metric": "v_strict", "leaderboard": {"rows": rows}}))
    lb = res.leaderboard
    assert lb["human_estimate_lo"].dtype == float and lb["human_estimate_hi"].dtype == float
    assert lb["human_estimate_lo"].isna().all() and lb["judge_score_hi"].tolist() == [0.5, 0.6]
