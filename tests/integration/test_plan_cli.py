"""``metaeval plan`` end to end on the NIST labels with a simulated judge (files in, plan.json/plan.md/plot out)."""

import json
import math

import pytest

from metaeval.cli import main
from metaeval.io.assignments import write_assignments
from metaeval.planning.consistency import simulate_sampling_judge


def test_plan_with_pilot_ranks_the_unlabelled_topics(tmp_path, nist_file, capsys):
    out = tmp_path / "plan"
    rc = main(["plan", "--reference", str(nist_file), "--simulate-judge", "paper-fig6-edits", "--pilot", "8",
               "--reps", "60", "--replay-reps", "0", "--metric", "V_strict", "--out", str(out)])
    printed = capsys.readouterr().out.strip().splitlines()
    assert rc == 0
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["schema"] == "metaeval.plan/1" and plan["pilot"]["topics"] == 8 and plan["pilot"]["judge_topics"] == 21
    ranked = [r["qid"] for r in plan["next_topics"]["list"]]
    assert len(ranked) == 13 and not set(ranked) & set(plan["pilot"]["qids"])
    assert " ".join(printed).endswith(plan["recommendation"])  # last, wrapped at 100 columns
    # the printed table is the JSON's numbers: topics, hours, +/- (predicted), interval holds, tau, tau range, runs swapped
    row = plan["curves"]["v_strict"]["rows"][-2]
    line = next(p for p in printed if p.split() and p.split()[0] == str(row["n"]))
    assert line.split() == [str(row["n"]), f"{row['hours']:.0f}", f"{row['analytic_half']['median']:.3f}",
                            f"{row['plugin_coverage']['median']:.2f}", f"{row['tau_mean']:.3f}",
                            f"{row['tau_lo']:.3f}-{row['tau_hi']:.3f}", f"{row['swap']['0.02']['empirical']:.3f}"]
    # hours = topics x labels per topic x 15 s (the default assumption)
    need = plan["need"]["v_strict"]
    assert need["hours_median_run"] == pytest.approx(need["median_run"] * plan["pilot"]["labels_per_topic"] * 15 / 3600)
    assert (out / "plan_curves.svg").stat().st_size > 1000 and "Assessor plan" in (out / "plan.md").read_text()
    # full labelling at n = T: no calibration error left
    assert plan["curves"]["v_strict"]["rows"][-1]["n"] == 21
    assert plan["curves"]["v_strict"]["rows"][-1]["empirical_half"]["max"] == pytest.approx(0.0, abs=1e-12)


def test_plan_with_k_judge_files_reports_self_consistency(tmp_path, nist_labels, nist_file, capsys):
    sets = simulate_sampling_judge(nist_labels, 3, alpha=2.0, seed=4, name="sj")
    files = []
    for i, s in enumerate(sets):
        files += ["--judge", str(tmp_path / f"s{i}.jl")]
        write_assignments(s, tmp_path / f"s{i}.jl")
    out = tmp_path / "plan"
    rc = main(["plan", "--reference", str(nist_file), *files, "--reps", "40", "--replay-reps", "6",
               "--total-topics", "100", "--metric", "v_strict", "--out", str(out)])
    assert rc == 0
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    cons = plan["consistency"]
    assert cons["k"] == 3 and 0 < cons["flip"]["flip_rate"] < 1
    assert set(cons["calibration"]["variants"]) == {"hard (draw 0)", "majority", "soft (vote share)"}
    assert plan["pilot"]["total_topics"] == 100 and plan["next_topics"]["list"] == []
    assert {"random", "confusion", "votes", "greedy"} == set(plan["replay"]["strategies"])
    assert math.isfinite(plan["need"]["v_strict"]["median_run"])
    assert "flip rate" in capsys.readouterr().out


def test_plan_errors_are_one_line_exit_2(tmp_path, nist_file, capsys):
    rc = main(["plan", "--reference", str(nist_file), "--out", str(tmp_path / "x")])
    assert rc == 2 and "exactly one of --judge" in capsys.readouterr().err
    rc = main(["plan", "--reference", str(nist_file), "--simulate-judge", "paper-fig6-edits", "--pilot", "2",
               "--out", str(tmp_path / "x")])
    assert rc == 2 and "--pilot 2" in capsys.readouterr().err


def test_plan_into_a_results_folder_for_the_report(tmp_path, nist_file, capsys):
    res = tmp_path / "results" / "demo"
    res.mkdir(parents=True)
    rc = main(["plan", "--reference", str(nist_file), "--simulate-judge", "paper-fig6-edits", "--reps", "20",
               "--replay-reps", "0", "--metric", "v_strict", "--results", str(res)])
    assert rc == 0
    plan = json.loads((res / "study" / "plan.json").read_text(encoding="utf-8"))
    assert plan["schema"] == "metaeval.plan/1" and (res / "study" / "plan_curves.svg").exists()
    from metaeval.report.plan_section import render_markdown

    assert plan["recommendation"] in render_markdown(plan)


def test_readme_worked_example_numbers(tmp_path, nist_labels, nist_file, capsys):
    """docs/planning.md's worked example: N (median / worst run) and hours do not depend on the resampling, so they must
    match exactly (the bootstrap range in brackets does depend on --reps and is not checked)."""
    import importlib.util
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("assessor_plan_run", root / "experiments" / "assessor_plan" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    write_assignments(mod.lexical_labels(nist_labels), tmp_path / "lexical.jl")
    rc = main(["plan", "--reference", str(nist_file), "--pilot", "8", "--judge", str(tmp_path / "lexical.jl"),
               "--total-topics", "301", "--metric", "V_strict", "--reps", "20", "--replay-reps", "0",
               "--out", str(tmp_path / "demo")])
    assert rc == 0
    got = " ".join(capsys.readouterr().out.split())  # the recommendation, wrapped at 100 columns
    section = (root / "docs" / "planning.md").read_text(encoding="utf-8")  # the worked example's printed numbers
    pattern = (r"you need about (\d+) human-labelled topics for the median run, (\d+) for the worst run \(upper end "
               r"of the 80% range that a pilot of 8 topics allows, (\d+) effective df; point estimate (\d+), as in the "
               r"\+/- table; range (\d+)-(\d+) for the median run\) \(~(\d+) / (\d+) assessor hours")
    want = re.search(pattern, " ".join(section.split()))
    have = re.search(pattern, got)
    assert want and have and want.groups() == have.groups()


def test_after_plan_leaderboard(tmp_path, nist_labels, nist_file, capsys):
    """Follow the plan: label its first topics; with every topic labelled the calibrated means are the human means."""
    from metaeval.scoring import run_scores, score_answers
    from metaeval.simulation import simulate_judge
    from metaeval.study.assessor_plan import calibrated_after_plan

    judge = simulate_judge(nist_labels, seed=2, name="j")
    write_assignments(judge, tmp_path / "judge.jl")
    rc = main(["plan", "--reference", str(nist_file), "--judge", str(tmp_path / "judge.jl"), "--pilot", "6", "--reps", "20",
               "--replay-reps", "0", "--metric", "v_strict", "--out", str(tmp_path / "p")])
    assert rc == 0
    plan = json.loads((tmp_path / "p" / "plan.json").read_text(encoding="utf-8"))
    order = [r["qid"] for r in plan["next_topics"]["list"]]
    first = nist_labels.subset(qids=plan["pilot"]["qids"] + order[:4])
    write_assignments(first, tmp_path / "h4.jl")
    rc = main(["plan", "--after", str(tmp_path / "p" / "plan.json"), "--reference", str(tmp_path / "h4.jl"),
               "--judge", str(tmp_path / "judge.jl"), "--out", str(tmp_path / "a")])
    out = capsys.readouterr().out
    assert rc == 0 and "6 pilot + 4 new" in out and "follow the plan's order" in out
    res = calibrated_after_plan(plan, nist_labels, judge)
    human = run_scores(score_answers(nist_labels)).set_index("run_id")["v_strict"]
    assert res["new_topics"] == 15 and res["runs_left_out"] == 2
    for r in res["rows"]:
        assert r["calibrated"] == pytest.approx(human[r["run_id"]], abs=1e-12)
    skipped = calibrated_after_plan(plan, nist_labels.subset(qids=plan["pilot"]["qids"] + order[1:3]), judge)
    assert skipped["in_plan_order"] is False and "NOT" in skipped["note"]
