"""metaeval.study: the files it writes, what they hold, and reuse when nothing it reads has changed."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from scipy.stats import kendalltau

from metaeval.data.dataset import load_dataset
from metaeval.layout import ResultsLayout
from metaeval.scoring import run_scores, score_answers
from metaeval.study.run import StudyInput, run_study
from metaeval.study.settings import build_study_settings
from metaeval.testing.relabel import judge_like


def _input(tmp_path, bootstrap=50, judge=None):
    ref = load_dataset("demo").labels
    judge = judge if judge is not None else judge_like(ref, name="jl")
    settings = build_study_settings({"metrics": ["v_strict", "a"], "tau": "b", "bootstrap": bootstrap, "seed": 0},
                                    {"enabled": False})
    return StudyInput(layout=ResultsLayout(tmp_path, "t"), label_sets={"jl__human_auto": judge}, reference=ref,
                      settings=settings, config={"name": "t"}, calibratable=["jl__human_auto"], dataset={"name": "demo"})


def test_study_files_and_figures(tmp_path):
    inp = _input(tmp_path)
    s = run_study(inp)
    lay = inp.layout
    assert not s.evaluation_reused and s.cells[0].tau("v_strict", "run").tau is not None
    from metaeval.study.records import read_study, read_summary

    assert read_summary(lay) == s  # the typed summary returned is the one written (results schema round trip)
    assert read_study(lay).cell("jl__human_auto").shares_reference_nuggets
    assert s.provenance.packages["pandas"] and s.provenance.metaeval  # recorded when the study ran
    for p in (lay.labels("jl__human_auto"), lay.scores("jl__human_auto"), lay.runs("jl__human_auto"), lay.study_json,
              lay.reference_scores, lay.reference_runs, lay.summary_json, lay.summary_md, lay.analysis_dir / "analysis.json"):
        assert p.exists(), p
    study = json.loads(lay.study_json.read_text(encoding="utf-8"))
    assert study["metrics"] == ["v_strict", "a"] and study["bootstrap"] == 50
    cell = study["cells"]["jl__human_auto"]
    assert cell["shares_reference_nuggets"]
    # per-topic tau against scipy, and their mean = the analysis' topic_avg level
    ref_s, j_s = score_answers(inp.reference), score_answers(inp.label_sets["jl__human_auto"])
    got = {r["qid"]: r["tau"] for r in cell["per_topic_tau"]["v_strict"]}
    for q, g in ref_s.merge(j_s, on=["qid", "run_id"]).groupby("qid"):
        want = kendalltau(g["v_strict_x"], g["v_strict_y"]).statistic
        assert (got[q] is None and np.isnan(want)) or got[q] == pytest.approx(want, abs=1e-12)
    defined = [t for t in got.values() if t is not None]
    assert np.mean(defined) == pytest.approx(s.cells[0].tau("v_strict", "topic_avg").tau, abs=1e-12)
    # leaderboard: run means of the judge, reference run scores, intervals around the estimate
    lb = cell["leaderboard"]
    assert lb["n_boot"] == 50 and lb["seed"] == 0
    jr = run_scores(j_s).set_index("run_id")["v_strict"]
    rr = run_scores(ref_s).set_index("run_id")["v_strict"]
    for row in lb["metrics"]["v_strict"]:
        assert row["raw"] == pytest.approx(jr[row["run_id"]], abs=1e-12)
        assert row["reference"] == pytest.approx(rr[row["run_id"]], abs=1e-12)
        assert row["raw_ci"][0] <= row["raw"] <= row["raw_ci"][1]
    # disagreements: only on the primary metric; the worst topic shown is the lowest defined per-topic tau
    dis = cell["disagreements"]
    assert list(dis) == ["v_strict"]
    if dis["v_strict"]["topics"]:
        assert dis["v_strict"]["topics"][0]["tau"] == pytest.approx(min(defined), abs=1e-12)
        for p in dis["v_strict"]["topics"][0].get("pairs", []):
            assert p["human"] != p["judge"]


def test_study_is_reused_only_when_nothing_changed(tmp_path):
    s = run_study(_input(tmp_path))
    lay = ResultsLayout(tmp_path, "t")
    stamp = lay.study_json.stat().st_mtime_ns
    again = run_study(_input(tmp_path))
    assert again.evaluation_reused and lay.study_json.stat().st_mtime_ns == stamp
    assert again.cells == s.cells  # the reused figures are the stored ones
    other = run_study(_input(tmp_path, bootstrap=60))  # a setting changed
    assert not other.evaluation_reused
    assert json.loads(lay.study_json.read_text(encoding="utf-8"))["bootstrap"] == 60
    ref = load_dataset("demo").labels
    changed = judge_like(ref, name="jl")
    sup = changed.labels["support"].astype(str).to_numpy().copy()
    sup[0] = "support" if sup[0] != "support" else "not_support"
    changed = changed.with_labels(sup, name="jl")
    assert not run_study(_input(tmp_path, bootstrap=60, judge=changed)).evaluation_reused  # a label changed


def test_a_calibrated_cell_shows_one_raw_interval(tmp_path):
    """With calibration on, the calibration leaderboard's judge-score column is the study's raw leaderboard (one
    function, seeded by analysis.seed: one interval per run, not a second bootstrap with another stream)."""
    inp = _input(tmp_path)
    inp.settings = build_study_settings(dataclasses.asdict(inp.settings.analysis), {"enabled": True, "folds": 4, "seed": 0})
    run_study(inp)
    lay = inp.layout
    cal = json.loads(lay.calibration("jl__human_auto").read_text(encoding="utf-8"))
    lb = json.loads(lay.study_json.read_text(encoding="utf-8"))["cells"]["jl__human_auto"]["leaderboard"]
    for m in ("v_strict", "a"):
        want = {r["run_id"]: (r["judge_score"], r["judge_score_ci"]) for r in cal["by_metric"][m]["leaderboard"]["rows"]}
        got = {r["run_id"]: (r["raw"], r["raw_ci"]) for r in lb["metrics"][m]}
        assert got == want
        ranks = [r["raw_rank"] for r in lb["metrics"][m]]
        assert ranks == sorted(ranks) and ranks[0] == 1
