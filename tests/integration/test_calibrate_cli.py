"""``metaeval calibrate``, ``calibrate apply`` and ``simulate`` end to end on the NIST file and a simulated judge."""

import json

import pytest

from metaeval.simulation import simulate_judge
from metaeval.cli import main
from metaeval.io.assignments import write_assignments


@pytest.fixture(scope="module")
def files(tmp_path_factory, nist_labels, nist_file):
    d = tmp_path_factory.mktemp("cal")
    judge = simulate_judge(nist_labels, seed=21, name="simjudge")
    write_assignments(judge, d / "judge.jl")
    # human labels on 12 of 21 topics and 30 of 45 runs; the judge covers everything
    human_sub = nist_labels.subset(qids=nist_labels.qids[:12], run_ids=nist_labels.run_ids[:30])
    write_assignments(human_sub, d / "human_sub.jl")
    return d, nist_file


def test_calibrate_validate_and_apply(files, capsys):
    d, nist = files
    out = d / "out"
    rc = main(["calibrate", "--human", str(d / "human_sub.jl"), "--judge", str(d / "judge.jl"), "--method", "ppi",
               "--method", "matrix", "--metric", "v_strict", "--metric", "a_strict", "--folds", "3", "--out", str(out)])
    assert rc == 0
    res = json.loads((out / "calibration.json").read_text())
    v = res["validation"]
    assert v["n_topics"] == 12 and v["folds"] == 3
    for m in ("ppi", "matrix"):
        f = v["methods"][m]["v_strict"]
        assert {"mae_before", "mae_after", "bias_before", "bias_after", "coverage", "tau_before", "tau_after"} <= set(f)
    lb = res["leaderboard"]["ppi"]["v_strict"]
    assert len(lb) == 45 and all(r["ci"][0] <= r["estimate"] <= r["ci"][1] for r in lb)
    assert len(res["leaderboard"]["raw_judge"]["v_strict"]) == 45
    assert "leave-topics-out 3-fold" in capsys.readouterr().out

    app = d / "applied"
    rc = main(["calibrate", "apply", "--model", str(out / "calibration-model.json"), "--judge", str(d / "judge.jl"), "--out", str(app)])
    assert rc == 0
    res2 = json.loads((app / "calibrated.json").read_text())
    assert res2["n_topics"] == 21 and res2["n_runs"] == 45
    assert len(res2["notes"]["ppi"]["pooled_rectifier_runs"]) == 15
    assert (app / "answers.matrix.csv").exists()


def test_calibrate_errors(files, capsys):
    d, _ = files
    assert main(["calibrate", "--judge", str(d / "judge.jl"), "--out", str(d / "x")]) == 2
    assert main(["calibrate", "apply", "--model", str(d / "missing.json"), "--judge", str(d / "judge.jl"), "--out", str(d / "x")]) == 2
    err = capsys.readouterr().err
    assert "missing.json" in err


def test_simulate_command(files):
    d, nist = files
    out = d / "sim"
    rc = main(["simulate", "--human", str(nist), "--reps", "3", "--method", "ppi", "--method", "posterior",
               "--metric", "v_strict", "--seed", "1", "--out", str(out)])
    assert rc == 0
    res = json.loads((out / "simulation.json").read_text())
    assert res["config"]["reps"] == 3 and res["config"]["confusion_name"] == "paper-fig6-edits"
    assert res["raw"]["v_strict"]["bias"] < 0
    for m in ("ppi", "posterior"):
        assert {"bias", "rmse", "coverage", "mean_abs_bias"} <= set(res["methods"][m]["v_strict"])
    assert main(["simulate", "--human", str(nist), "--reps", "1", "--confusion", "nope", "--out", str(out)]) == 2


def test_simulate_with_estimated_confusion_and_strata(files):
    d, nist = files
    out = d / "sim2"
    rc = main(["simulate", "--human", str(nist), "--confusion-from", str(d / "judge.jl"), "--reps", "2",
               "--method", "matrix", "--metric", "a_strict", "--out", str(out)])
    assert rc == 0
    res = json.loads((out / "simulation.json").read_text())
    conf = res["config"]["confusion"]
    assert res["config"]["confusion_name"].startswith("estimated from")
    # the simulated judge file was drawn from Figure 6, so the estimate is close to it
    from metaeval.paper import fig6_confusion

    import numpy as np

    assert np.abs(np.array(conf) - fig6_confusion(normalize=True)).max() < 0.05
    out2 = d / "strata"
    rc = main(["calibrate", "--human", str(nist), "--judge", str(d / "judge.jl"), "--method", "posterior",
               "--posterior-strata", "run", "--metric", "v_strict", "--folds", "3", "--strictness", "--out", str(out2)])
    assert rc == 0
    res = json.loads((out2 / "calibration.json").read_text())
    assert "strictness" in res and "logit" in res["strictness"]
    model = json.loads((out2 / "calibration-model.json").read_text())["models"]["posterior"]
    assert model["strata"]["by"] == "run" and len(model["strata"]["groups"]) == 45


def test_apply_to_real_judge_only_file_with_failed_labels(files, nuggetizer_dir):
    """A model fitted on 21 NIST topics applied to nuggetizer's 300-topic judge output (FAILED labels inside)."""
    from metaeval.io import load_labels

    d, nist = files
    out = d / "fit"
    assert main(["calibrate", "--human", str(nist), "--judge", str(d / "judge.jl"), "--method", "posterior",
                 "--method", "ppi", "--metric", "v_strict", "--folds", "3", "--out", str(out)]) == 0
    judge_file = nuggetizer_dir / "assignments_baseline_rag24.test_gpt4o_top20.jsonl"
    app = d / "nz"
    assert main(["calibrate", "apply", "--model", str(out / "calibration-model.json"), "--judge", str(judge_file),
                 "--metric", "v_strict", "--out", str(app)]) == 0
    res = json.loads((app / "calibrated.json").read_text())
    labels = load_labels(judge_file)
    assert labels.failure_counts()["importance_failed"] > 0
    assert res["n_topics"] == len(labels.qids) > 250 and res["n_runs"] == 1
    for name in ("posterior", "ppi", "raw_judge"):
        (row,) = res["leaderboard"][name]["v_strict"]
        assert row["ci"][0] < row["estimate"] < row["ci"][1]
    assert res["notes"]["ppi"]["pooled_rectifier_runs"] == ["baseline_rag24.test_gpt-4o_top20"]
