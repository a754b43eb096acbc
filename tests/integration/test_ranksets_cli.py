"""Rank-sets end to end: ``metaeval calibrate`` on a labelled subset of the NIST file with a simulated judge prints
them, writes them into ``calibration.json``, and the report (HTML/Markdown section, LaTeX table) renders them."""

import json

import numpy as np
import pytest

from metaeval.cli import main
from metaeval.io.assignments import write_assignments
from metaeval.simulation import simulate_judge


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory, nist_labels):
    d = tmp_path_factory.mktemp("ranksets")
    write_assignments(simulate_judge(nist_labels, seed=21, name="simjudge"), d / "judge.jl")
    # human labels on 12 of 21 topics and 30 of 45 runs; the judge covers everything
    write_assignments(nist_labels.subset(qids=nist_labels.qids[:12], run_ids=nist_labels.run_ids[:30]), d / "human.jl")
    return d


def test_calibrate_prints_and_writes_rank_sets(calibrated, capsys):
    d = calibrated
    rc = main(["calibrate", "--human", str(d / "human.jl"), "--judge", str(d / "judge.jl"), "--method", "ppi",
               "--metric", "V_strict", "--folds", "3", "--repeats", "2", "--bootstrap", "200", "--out", str(d / "out")])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "which runs can be told apart, V_strict" in printed and "rank-set" in printed
    block = printed.split("which runs can be told apart")[1].split("\n\n")[0].splitlines()
    assert len(block) > 5 and all(len(line) <= 100 for line in block), [x for x in block if len(x) > 100]
    rs = json.loads((d / "out" / "calibration.json").read_text())["rank_sets"]
    assert rs["status"] == "ok" and rs["topics"] == 21 and rs["human_labelled_topics"] == 12
    assert rs["runs"] + len(rs["runs_left_out"]) == 45 and len(rs["runs_left_out"]) >= 15  # no human labels: left out
    assert len(rs["pairs"]) == rs["runs"] * (rs["runs"] - 1) // 2 == rs["summary"]["pairs"]
    by_run = {r["run_id"]: r for r in rs["rows"]}
    for p in rs["pairs"]:
        lo, hi = p["ci"]
        assert -1 <= lo <= p["diff"] <= hi <= 1
        assert p["decision"] == (">" if lo > 0 else "<" if hi < 0 else "~")
    for run, r in by_run.items():
        above = sum(1 for p in rs["pairs"] if (p["a"] == run and p["decision"] == ">") or
                    (p["b"] == run and p["decision"] == "<"))
        below = sum(1 for p in rs["pairs"] if (p["a"] == run and p["decision"] == "<") or
                    (p["b"] == run and p["decision"] == ">"))
        assert (r["beats"], r["beaten_by"]) == (above, below)
        assert r["rank_set"] == [1 + below, rs["runs"] - above]
        assert r["rank_set"][0] <= r["rank"] <= r["rank_set"][1]
    for key in ("shown", "ppi_pp", "raw_judge"):
        t = rs["tau"][key]
        assert -1 <= t["ci"][0] <= t["estimate"] <= t["ci"][1] <= 1
        # the bounds holding for any ranking (issue 30): beside the interval, wider, said what they are
        assert -1 <= t["bounds"][0] <= t["bounds"][1] <= 1 and "any ranking" in t["bounds_method"]
        assert t["bounds"][1] - t["bounds"][0] >= t["ci"][1] - t["ci"][0]
    for key, label in (("shown", "the leaderboard shown"), ("raw_judge", "the raw judge")):
        t = rs["tau"][key]
        line = " ".join(printed.split(f"tau-b of {label}")[1].split())
        assert line.split(" caveat: ")[0].split(" tau-b of ")[0].endswith(
            f"bounds holding for any ranking at 95%: [{t['bounds'][0]:.3f}, {t['bounds'][1]:.3f}]"), line
        assert f"{t['estimate']:.3f}, 95% CI [{t['ci'][0]:.3f}, {t['ci'][1]:.3f}] (basic bootstrap" in line
    assert rs["tau"]["shown"]["treated_as"] == "the PPI++ estimate"
    # the raw judge's ranking is held fixed, and its interval can under-cover (issue 30): the block says so
    raw_note = rs["tau"]["raw_judge"]["treated_as"]
    assert raw_note.startswith("fixed: ") and "under-cover" in raw_note and "bounds" in raw_note
    tail = " ".join(printed.split("tau-b of the raw judge")[1].split())  # ... and the terminal says it under the line
    assert tail.split(" tau-b of ")[0].count("caveat: fixed: basic-bootstrap interval for a ranking treated as fixed") == 1


def test_the_report_renders_the_rank_sets(calibrated):
    from metaeval.report.latex import paper_tables
    from metaeval.report.rankset_section import cell_blocks

    from metaeval.study.records import CellCalibration, decode

    cal = json.loads((calibrated / "out" / "calibration.json").read_text())
    blocks = cell_blocks("simjudge", decode(CellCalibration, cal, "calibration.json").rank_sets)
    assert blocks[0].columns[3] == "rank-set" and len(blocks[0].rows) == cal["rank_sets"]["runs"]
    notes = [b.text for b in blocks[1:] if getattr(b, "text", "").startswith("caveat: ")]
    assert notes == [f"caveat: {cal['rank_sets']['tau']['raw_judge']['treated_as']}"]  # under the raw judge's tau only
    raw = cal["rank_sets"]["tau"]["raw_judge"]
    want = (f"{raw['estimate']:.3f}, 95% CI [{raw['ci'][0]:.3f}, {raw['ci'][1]:.3f}] (basic bootstrap; ranking "
            f"treated as fixed: can under-cover near ties); bounds holding for any ranking at 95%: "
            f"[{raw['bounds'][0]:.3f}, {raw['bounds'][1]:.3f}]")
    texts = [getattr(b, "text", "") for b in blocks[1:]]
    assert [x for x in texts if x.startswith("Kendall tau-b of the raw judge")] == [
        f"Kendall tau-b of the raw judge with the human leaderboard on all 21 topics: {want}"]
    tex = paper_tables({"metric": "v_strict", "calibration": {"simjudge": cal}})["ranksets_simjudge"]
    assert "simultaneous" in tex and "rank-set" in tex  # the caption's details are in the folder's README
    from metaeval.report.latex import _Paper

    details = _Paper({"metric": "v_strict", "calibration": {"simjudge": cal}}).tables()["ranksets_simjudge"].paper.details
    assert f"Kendall tau-b of the raw judge with the human leaderboard on all 21 topics: {want}." in details
    # a file written before the bounds reads, and renders without them
    old = json.loads(json.dumps(cal))
    for t in old["rank_sets"]["tau"].values():
        del t["bounds"], t["bounds_method"]
    texts = [getattr(b, "text", "") for b in cell_blocks("simjudge", decode(CellCalibration, old, "c.json").rank_sets)]
    assert [x for x in texts if x.startswith("Kendall tau-b of the raw judge")] == [
        f"Kendall tau-b of the raw judge with the human leaderboard on all 21 topics: {want.split('; bounds')[0]}"]
    groups = cal["rank_sets"]["summary"]["groups"]
    assert ("$^{\\mathrm{a" in tex) == (groups <= 12)
    assert np.isfinite(cal["rank_sets"]["critical_value"])
