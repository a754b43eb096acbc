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
               "--method", "matrix", "--metric", "V_strict", "--metric", "A_STRICT", "--folds", "3", "--repeats", "3", "--bootstrap", "200",
               "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].startswith("recommendation: V_strict: ")  # one recommendation line, last
    assert sum(line.startswith("recommendation:") for line in printed) == 1
    text = "\n".join(printed)
    # the printed figures say what they are: +- is a standard error, tau is held-out; run ids are never cut
    assert "+- = corrected resampled SE" in text and "held-out tau run/topic/pooled" in text
    longest = max(json.loads((out / "calibration.json").read_text())["leaderboard"]["rows"][:10],
                  key=lambda r: len(r["run_id"]))["run_id"]
    assert any(f"  {longest} " in line for line in printed), longest
    sel = json.loads((out / "calibration.json").read_text())["selection"]
    marks = {line.split()[1]: line.split()[2] for line in printed if line.startswith("V_strict  ")}
    assert f" {sel['method']} * " in text  # the point method shown is marked *, the interval method i
    if sel["method"] != sel["intervals_by"]:
        assert f" {sel['intervals_by']} i " in text
    res = json.loads((out / "calibration.json").read_text())
    assert "model" not in res and res["metric"] == "v_strict" and set(res["by_metric"]) == {"v_strict", "a_strict"}
    assert len(res["topics"]["human_labelled"]) == 12 and len(res["topics"]["judge_only"]) == 9
    assert set(res["candidates"]) == {"raw", "composite", "ppi", "ppi_pp", "matrix"}  # raw, composite, PPI++ always
    assert res["settings"]["repeats"] == 3 and sum(res["selection"]["wins"].values()) == 3
    lb = res["leaderboard"]
    assert lb["judge_only_topics"] == 9 and "mae_vs_reference" not in lb
    assert len(lb["rows"]) == 45
    for r in lb["rows"]:
        for key in ("human_estimate_ci", "judge_score_ci", "corrected_judge_only_ci"):
            lo, hi = r[key]
            assert 0.0 <= lo < hi <= 1.0, (key, r)  # inside [0, 1], never zero width
        assert r["human_estimate_ci"][0] <= r["human_estimate"] <= r["human_estimate_ci"][1]

    app = d / "applied"
    rc = main(["calibrate", "apply", "--model", str(out / "calibration-model.json"), "--judge", str(d / "judge.jl"),
               "--out", str(app)])
    assert rc == 0
    res2 = json.loads((app / "calibrated.json").read_text())
    assert set(res2["by_metric"]) == {"v_strict", "a_strict"}
    assert len(res2["topics"]["judge_only"]) == 9 and len(res2["topics"]["fitted_on_and_applied"]) == 12
    applied = capsys.readouterr().out
    assert "in-sample there" in applied
    # apply shows what the procedure chose (not PPI++ by default), with PPI++'s interval widened to contain it
    for m, block in res2["by_metric"].items():
        assert block["method"] == res["by_metric"][m]["selection"]["method"] and block["intervals_by"] == "ppi_pp"
    model = json.loads((out / "calibration-model.json").read_text())
    model["chosen"] = {m: "raw" for m in model["chosen"]}  # a track where raw was kept
    (d / "raw-model.json").write_text(json.dumps(model))
    for extra, method in (([], "raw"), (["--method", "ppi_pp"], "ppi_pp")):
        assert main(["calibrate", "apply", "--model", str(d / "raw-model.json"), "--judge", str(d / "judge.jl"),
                     "--metric", "v_strict", "--bootstrap", "50", "--out", str(app)] + extra) == 0
        printed = capsys.readouterr().out
        block = json.loads((app / "calibrated.json").read_text())["by_metric"]["v_strict"]
        assert block["method"] == method
        if method == "raw":
            assert "V_strict by raw (chosen by the procedure)" in printed and "intervals by ppi_pp" in block["note"]
            for r in block["rows"]:  # the raw point, PPI++'s interval around it
                assert r["human_estimate"] == r["judge_score"]
                assert r["human_estimate_ci"][0] <= r["human_estimate"] <= r["human_estimate_ci"][1]
        else:
            assert "V_strict by ppi_pp (--method override; the procedure chose raw)" in printed


def test_calibrate_errors(files, capsys):
    d, _ = files
    assert main(["calibrate", "--judge", str(d / "judge.jl"), "--out", str(d / "x")]) == 2
    assert main(["calibrate", "apply", "--model", str(d / "missing.json"), "--judge", str(d / "judge.jl"), "--out", str(d / "x")]) == 2
    assert main(["calibrate", "--human", str(d / "human_sub.jl"), "--judge", str(d / "judge.jl"), "--metric", "nope",
                 "--out", str(d / "x")]) == 2
    err = capsys.readouterr().err
    assert "missing.json" in err and "V_strict" in err


def test_simulate_command(files, capsys):
    d, nist = files
    out = d / "sim"
    rc = main(["simulate", "--human", str(nist), "--reps", "2", "--kind", "fig6", "--kind", "run_bias", "--method", "ppi",
               "--method", "posterior", "--metric", "V_strict", "--seed", "1", "--out", str(out)])
    assert rc == 0
    res = json.loads((out / "simulation.json").read_text())
    assert res["config"]["reps"] == 2 and set(res["kinds"]) == {"fig6", "run_bias"}
    for kind in res["kinds"].values():
        assert set(kind) == {"none", "ppi", "posterior"}
        for f in kind.values():
            assert {"bias_cut", "rmse", "coverage", "coverage_worst_run", "mean_ci_width", "mc_se"} <= set(f)
    assert "worst run" in capsys.readouterr().out
    assert main(["simulate", "--human", str(nist), "--reps", "2", "--kind", "resampled", "--out", str(out)]) == 2


def test_strata_strictness_and_mismatch_refusal(files, nuggetizer_dir, capsys):
    """Posterior strata by run; a model fitted on NIST nuggets refuses nuggetizer's own nuggets on the same topics
    unless --allow-mismatch (then it warns)."""
    d, nist = files
    out = d / "strata"
    rc = main(["calibrate", "--human", str(nist), "--judge", str(d / "judge.jl"), "--method", "posterior",
               "--posterior-strata", "run", "--metric", "v_strict", "--folds", "3", "--repeats", "2", "--bootstrap", "100",
               "--strictness",
               "--out", str(out)])
    assert rc == 0
    res = json.loads((out / "calibration.json").read_text())
    assert "strictness" in res and "logit" in res["strictness"]
    model = json.loads((out / "calibration-model.json").read_text())["models"]["posterior"]
    assert model["strata"]["by"] == "run" and len(model["strata"]["groups"]) == 45
    judge_file = nuggetizer_dir / "assignments_baseline_rag24.test_gpt4o_top20.jsonl"
    app = d / "nz"
    args = ["calibrate", "apply", "--model", str(out / "calibration-model.json"), "--judge", str(judge_file),
            "--method", "posterior", "--metric", "v_strict", "--out", str(app)]
    capsys.readouterr()
    assert main(args) == 2
    assert "nugget_set" in capsys.readouterr().err
    assert main(args + ["--allow-mismatch"]) == 0
    assert "nugget_set" in capsys.readouterr().err
    res = json.loads((app / "calibrated.json").read_text())
    (row,) = res["by_metric"]["v_strict"]["rows"]
    assert 0 <= row["human_estimate"] <= 1 and row["human_estimate_ci"] is None  # label-level: point estimate only
    assert "point estimates only" in res["by_metric"]["v_strict"]["note"]


def test_apply_refuses_a_model_fitted_on_another_sweep_judge(tmp_path, capsys):
    """End to end through the CLI: sweep lexical and lexical_strict, calibrate on lexical's cell folder, apply to
    lexical_strict's: the label sets a sweep writes carry the judge spec and prompt hashes (labels.provenance.json),
    so the refusal fires; the same judge's labels are accepted."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "metaeval", "sweep", "--no-progress", "-m",
                          "judge=lexical,lexical_strict", "strategy=human_auto", f"results_dir={tmp_path}", "name=two",
                          "runtime=serial", "analysis.bootstrap=50", "calibration.enabled=false"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    cells = tmp_path / "two" / "cells"
    lex, strict = cells / "lexical__human_auto", cells / "lexical_strict__human_auto"
    prov = {p.name: json.loads((p / "labels.provenance.json").read_text()) for p in (lex, strict)}
    assert prov[lex.name]["judge_spec"] != prov[strict.name]["judge_spec"]
    human = tmp_path / "human.jl"
    from metaeval.data.dataset import load_dataset

    write_assignments(load_dataset("demo").labels, human)
    fit = tmp_path / "fit"
    assert main(["calibrate", "--human", str(human), "--judge", str(lex), "--folds", "2", "--repeats", "1",
                 "--bootstrap", "50", "--min-topics", "2", "--out", str(fit)]) == 0
    model = fit / "calibration-model.json"
    assert json.loads(model.read_text())["fingerprints"]["judge_spec"] is not None
    capsys.readouterr()
    assert main(["calibrate", "apply", "--model", str(model), "--judge", str(strict), "--bootstrap", "50",
                 "--out", str(tmp_path / "applied_other")]) == 2
    err = capsys.readouterr().err
    assert "calibration model was fitted on different judge labels: judge_spec differ" in err
    assert main(["calibrate", "apply", "--model", str(model), "--judge", str(lex), "--bootstrap", "50",
                 "--out", str(tmp_path / "applied_same")]) == 0
    assert "judge_spec" not in capsys.readouterr().err
