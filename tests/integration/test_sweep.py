"""``metaeval sweep`` end to end on the demo data: offline judges, the wire-compatible test server, resume."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path


from metaeval.data.dataset import load_dataset
from metaeval.testing.server import ChatTestServer, Faults

OFFLINE = ["runtime=serial", "grid.optional_judges=[]", "analysis.bootstrap=200"]


def sweep(tmp_path: Path, *overrides: str, check: bool = True, timeout: int = 300) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", f"results_dir={tmp_path}", *overrides]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check:
        assert res.returncode == 0, res.stderr[-3000:]
    return res


def summary(tmp_path: Path, name: str) -> dict:
    return json.loads((tmp_path / name / "summary.json").read_text(encoding="utf-8"))


def test_default_grid_offline_then_resume_makes_no_calls(tmp_path):
    sweep(tmp_path, *OFFLINE, "name=demo")
    s = summary(tmp_path, "demo")
    cells = {c["cell"]: c for c in s["cells"]}
    assert {"lexical__auto_auto", "lexical__human_auto", "simulated_fig6__human_auto"} <= set(cells)
    assert "simulated_fig6__auto_auto" not in cells  # it only assigns: left out of auto_auto, said once
    assert any(n.startswith("judge simulated_fig6 joins only human_auto: cannot perform stage(s) create, importance")
               for n in s["grid_notes"])
    for cid in ("lexical__auto_auto", "lexical__human_auto", "simulated_fig6__human_auto"):
        c = cells[cid]
        assert c["stats"]["judge_calls"] > 0 and c["stats"]["reused"] == 0
        for level in ("run", "topic_avg", "pooled"):
            block = c["analysis"]["metrics"]["v_strict"][level]
            assert -1 <= block["tau"] <= 1 and block["ci"][0] <= block["tau"] <= block["ci"][1]
    # calibration for the cells that label the human nuggets, held out by topic
    cal = cells["lexical__human_auto"]["calibration"]
    assert "raw" in cal["candidates"] and "composite" in cal["candidates"]  # raw and composite are always candidates
    assert cal == json.loads((tmp_path / "demo" / "cells" / "lexical__human_auto" / "calibration.json").read_text(encoding="utf-8"))
    # the selection of every cell x metric, against values derived from the demo data by hand: its 8 topics are all
    # human-labelled (8 < min_topics 10), so the procedure cannot decide: composite (= the human run score here,
    # nothing judge-only), no split computed, nothing fitted or nested, the reason in the one line
    from metaeval.scoring import run_scores as _run_scores, score_answers as _score_answers

    demo = load_dataset("demo")
    n_demo = len(demo.labels.qids)
    assert n_demo == 8
    human_runs = _run_scores(_score_answers(demo.labels)).set_index("run_id")
    checked = 0
    for cid, c in cells.items():
        for m, block in (c.get("calibration") or {}).get("by_metric", {}).items():
            sel, board = block["selection"], block["leaderboard"]
            checked += 1
            assert (sel["method"], sel["verdict"]) == ("composite", "cannot decide"), (cid, m, sel)
            assert sel["why"] == f"too few human-labelled topics to evaluate a correction ({n_demo} < min_topics 10)"
            assert (sel["n_topics"], sel["n_applied"], sel["splits"], sel["fit_topics"], sel["nested_splits"]) == (
                n_demo, 0, 0, None, 0), (cid, m)
            assert sel["beats_raw"] is False and sel["wins"] == {} and sel["held_out_mae"]["mean"] is None
            assert board["estimated_by"] == "composite" and board["judge_only_topics"] == 0  # what is chosen is shown
            for row in board["rows"]:  # composite with nothing judge-only is the human run score itself
                assert abs(row["human_estimate"] - human_runs.loc[row["run_id"], m]) < 1e-12, (cid, m, row)
            assert block["recommendation"].endswith(f"({n_demo} < min_topics 10): nothing evaluated, nothing fitted "
                                                    "is shown"), (cid, m)
    assert checked >= 18  # three calibrated cells x six metrics
    # own nuggets: no label pairs with the reference, so label-level methods are refused (score-level ones run)
    assert cells["lexical__auto_auto"]["calibration"]["pairing"]["matched"] == 0
    assert cells["lexical__auto_auto"]["calibration"]["pairing"]["label_level"] == "refused"
    # the run-level tau recomputed independently from the files: labels.jsonl -> scores -> run means -> scipy
    from scipy.stats import kendalltau

    from metaeval.io.assignments import read_assignments
    from metaeval.scoring import run_scores, score_answers

    ref = run_scores(score_answers(load_dataset("demo").labels)).set_index("run_id")["v_strict"]
    for cid in ("lexical__auto_auto", "lexical__human_auto", "simulated_fig6__human_auto"):
        judge = run_scores(score_answers(read_assignments(tmp_path / "demo" / "cells" / cid / "labels.jsonl"))).set_index("run_id")["v_strict"]
        want = kendalltau(ref.loc[judge.index], judge, variant="b").statistic
        assert abs(cells[cid]["analysis"]["metrics"]["v_strict"]["run"]["tau"] - want) < 1e-12, cid
        # per-topic mean (over topics where tau is defined) and pooled tau from the same files, with scipy
        per_ref = score_answers(load_dataset("demo").labels).set_index(["qid", "run_id"])["v_strict"]
        per_j = score_answers(read_assignments(tmp_path / "demo" / "cells" / cid / "labels.jsonl")).set_index(["qid", "run_id"])["v_strict"]
        both = per_ref.to_frame("r").join(per_j.to_frame("j"), how="inner").dropna()
        taus = [kendalltau(g["r"], g["j"], variant="b").statistic for _, g in both.groupby(level="qid")]
        taus = [t for t in taus if math.isfinite(t)]
        block = cells[cid]["analysis"]["metrics"]["v_strict"]
        assert abs(block["topic_avg"]["tau"] - sum(taus) / len(taus)) < 1e-9, cid
        assert abs(block["pooled"]["tau"] - kendalltau(both["r"], both["j"], variant="b").statistic) < 1e-9, cid
    study = json.loads((tmp_path / "demo" / "study" / "study.json").read_text(encoding="utf-8"))
    assert set(study["cells"]) == {c for c in cells if not cells[c].get("skipped")}
    # label agreement exists where nuggets are shared, not where the judge made its own
    assert cells["lexical__human_auto"]["analysis"]["labels"]["confusion"]
    assert cells["lexical__auto_auto"]["analysis"]["labels"] is None
    assert (tmp_path / "demo" / "summary.md").read_text(encoding="utf-8").startswith("# Sweep `demo`")
    first = (tmp_path / "demo" / "cells" / "lexical__human_auto" / "labels.jsonl").read_text(encoding="utf-8")

    sweep(tmp_path, *OFFLINE, "name=demo")  # again: everything is in the store
    s2 = summary(tmp_path, "demo")
    assert s2["evaluation_reused"] and not s["evaluation_reused"]
    for c in s2["cells"]:
        if "skipped" not in c:
            assert c["this_run"]["judge_calls"] == 0 and c["this_run"]["executed"] == 0
            assert c["stats"]["reused"] == c["stats"]["jobs"] > 0
            assert c["stats"]["judge_calls"] == cells[c["cell"]]["stats"]["judge_calls"]  # totals still describe the results
            assert c["analysis"] == cells[c["cell"]]["analysis"]
    assert (tmp_path / "demo" / "cells" / "lexical__human_auto" / "labels.jsonl").read_text(encoding="utf-8") == first


def test_paper_batching_request_counts_against_test_server(tmp_path):
    ds = load_dataset("demo")
    with ChatTestServer() as srv:
        sweep(tmp_path, "runtime=serial", "grid=single", "judge=testserver", "strategy=auto_auto", "name=batching",
              f"judge.deployment.base_url={srv.openai_base_url}", "calibration.enabled=false", "analysis.bootstrap=0")
        total = srv.counts["requests"]
    jobs = [json.loads(x) for x in (tmp_path / "batching" / "jobs.jsonl").read_text(encoding="utf-8").splitlines()]
    by_stage = {}
    for j in jobs:
        by_stage.setdefault(j["spec"]["stage"], []).append(j)
    graded = ds.qrels[ds.qrels["grade"] >= 1]
    want_create = sum(math.ceil(len(set(graded[graded.qid == q].docid) & {d.docid for d in ds.documents.get(q, [])}) / 10) for q in ds.qids)
    assert sum(j["stats"]["judge_calls"] for j in by_stage["create"]) == want_create
    for j in by_stage["importance"]:
        assert j["stats"]["judge_calls"] == math.ceil(len(j["output"]["importance"]) / 10)
    kept = {j["spec"]["qid"]: min(len(j["output"]["importance"]), 20) for j in by_stage["importance"]}
    assert len(by_stage["assign"]) == len(ds.answers)
    for j in by_stage["assign"]:
        assert len(j["output"]["labels"]) == kept[j["spec"]["qid"]]
        assert j["stats"]["judge_calls"] == math.ceil(kept[j["spec"]["qid"]] / 10)
    # every request the server saw is one the paper's batching (or a traced re-ask) needs; identical requests
    # (the demo has two runs with the same answer text) are sent once and read from the cache
    expected = sum(j["stats"]["judge_calls"] + j["stats"]["reasks"] - j["stats"]["cache_hits"] for j in jobs)
    assert total == expected and total == sum(j["stats"]["calls"] for j in jobs)
    # in-process, the judge's SDK is imported before the first request and reported apart from judging (as the
    # bare-SDK baselines import it before their timer), inside the wall time
    summary = json.loads((tmp_path / "batching" / "summary.json").read_text(encoding="utf-8"))
    assert summary["runtime_start"] == "judge SDK imports" and summary["runtime_start_s"] > 0
    assert summary["judging_s"] + summary["runtime_start_s"] <= summary["elapsed_s"]


def test_kill_9_midway_then_resume(tmp_path):
    """SIGKILL a sweep midway; the rerun completes, sends no finished job again, and equals an uninterrupted run."""
    common = ["runtime=serial", "grid=single", "judge=testserver", "strategy=human_auto", "calibration.enabled=false",
              "analysis.bootstrap=0", "judge.deployment.limits.concurrency=4"]
    with ChatTestServer(faults=Faults(latency_s=0.05)) as srv:
        url = f"judge.deployment.base_url={srv.openai_base_url}"
        cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", f"results_dir={tmp_path / 'a'}", "name=k",
               url, *common]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        store = tmp_path / "a" / "k" / "jobs.jsonl"
        deadline = time.time() + 120
        while time.time() < deadline and (not store.exists() or len(store.read_text(encoding="utf-8").splitlines()) < 20):
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        done_before = len(store.read_text(encoding="utf-8").splitlines())
        assert 20 <= done_before < 64, "the kill should land midway"
        sent_before = srv.counts["requests"]
        sweep(tmp_path / "a", url, "name=k", *common)
        resumed = srv.counts["requests"] - sent_before
        repeated = sum(n - 1 for n in srv.bodies.values() if n > 1)
        distinct_interrupted = len(srv.bodies)
        srv.reset_counts()
        sweep(tmp_path / "b", url, "name=k", *common)  # uninterrupted, its own cache
        fresh, distinct_fresh = srv.counts["requests"], len(srv.bodies)
    assert resumed > 0
    # the interrupted + resumed runs asked for exactly the distinct requests of an uninterrupted run, and the only
    # requests that went out twice are those in flight at the kill (concurrency 4): finished jobs were not resent.
    # (Raw request counts are not compared exactly: a request cut off mid-transfer by the kill is counted by the
    # server without a body.)
    assert distinct_interrupted == distinct_fresh == fresh
    assert repeated <= 4
    assert fresh + repeated <= sent_before + resumed <= fresh + repeated + 4
    a = (tmp_path / "a" / "k" / "cells" / "testserver__v1__human_auto" / "labels.jsonl").read_text(encoding="utf-8")
    b = (tmp_path / "b" / "k" / "cells" / "testserver__v1__human_auto" / "labels.jsonl").read_text(encoding="utf-8")
    assert a == b


def test_dry_run_sends_nothing_and_budget_cap_stops(tmp_path):
    with ChatTestServer() as srv:
        url = f"judge.deployment.base_url={srv.openai_base_url}"
        res = sweep(tmp_path, "--dry-run", "runtime=serial", "grid=single", "judge=testserver", "strategy=human_auto", url, "name=dry")
        assert srv.counts["requests"] == 0
        assert "testserver__v1__human_auto" in res.stdout and "est. USD" in res.stdout and "nothing was sent" in res.stdout
        row = next(line for line in res.stdout.splitlines() if line.startswith("testserver__v1__human_auto"))
        assert int(row.split()[1]) == 64  # one assignment call per demo answer (<= 10 human nuggets each)
        res = sweep(tmp_path, "runtime=serial", "grid=single", "judge=testserver", "strategy=human_auto", url, "name=cap",
                    "sweep.budget_usd=0.01", "calibration.enabled=false", "analysis.bootstrap=0", check=False)
        assert res.returncode == 3 and "budget cap of $0.01 reached" in res.stdout
        sent = srv.counts["requests"]
        m = re.search(r"budget cap of \$0\.01 reached before stage 'assign': (\d+) job\(s\) not dispatched "
                      r"\(estimated spend so far \$(\d+\.\d+)\)", res.stdout)
        assert m, res.stdout[-2000:]
        not_sent, spent = int(m.group(1)), float(m.group(2))
        assert 0 < sent < 64 and sent + not_sent == 64  # one request per dispatched job (<= 10 nuggets, no faults)
        assert 0 < spent <= 0.01  # the cap counts each job's estimate before sending it: never past the budget
        (cell,) = summary(tmp_path, "cap")["cells"]
        assert cell["stats"]["executed"] == sent and cell["stats"]["jobs"] == 64
        # the jobs not sent are stored as FAILED labels ("not run"), the sent ones as judgments: nothing is dropped
        from metaeval.io.assignments import read_assignments

        lab = read_assignments(tmp_path / "cap" / "cells" / "testserver__v1__human_auto" / "labels.jsonl").labels
        judged = lab[lab["support"].astype(str) != "FAILED"]
        assert lab.groupby(["qid", "run_id"]).ngroups == 64 and judged.groupby(["qid", "run_id"]).ngroups == sent
        assert cell["labels"] == len(lab) and cell["failed_labels"] == len(lab) - len(judged)


def test_unreachable_server_jobs_are_failed_and_retried_on_rerun(tmp_path):
    """No reply at all (server down) is not a judgment: the job is stored as failed and a rerun sends it again."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    common = ["runtime=serial", "grid=single", "judge=testserver", "strategy=human_auto", "calibration.enabled=false",
              "analysis.bootstrap=0", "judge.deployment.limits.max_retries=0", "name=dead", "+report.enabled=false"]
    res = sweep(tmp_path, f"judge.deployment.base_url=http://127.0.0.1:{port}/v1", *common, check=False)
    # every label FAILED: everything is stored, but the run does not look like a success (exit 4, one line per cell)
    assert res.returncode == 4, res.stderr[-3000:]
    lines = [ln for ln in res.stderr.splitlines() if "max_failed_rate" in ln or "FAILED" in ln]
    assert len(lines) == 1 and "testserver__v1__human_auto" in lines[0], res.stderr[-3000:]
    s = summary(tmp_path, "dead")
    (cell,) = s["cells"]
    assert cell["failed_labels"] == cell["labels"] > 0 and cell["stats"]["failed_jobs"] == 64
    labels = (tmp_path / "dead" / "cells" / cell["cell"] / "labels.jsonl").read_text(encoding="utf-8")
    assert "call failed" in labels  # FAILED labels carry the reason
    with ChatTestServer() as srv:
        sweep(tmp_path, f"judge.deployment.base_url={srv.openai_base_url}", *common)
        assert srv.counts["requests"] > 0
    (cell,) = summary(tmp_path, "dead")["cells"]
    assert cell["failed_labels"] == 0 and cell["stats"]["executed"] == 64


def test_disagreements_carry_what_the_judge_said(tmp_path):
    """The study's worst-topic pairs carry the judge's raw reply from the cell's transcripts; the label at the
    nugget's position in that reply is the judge's label."""
    with ChatTestServer() as srv:
        sweep(tmp_path, "runtime=serial", "grid=single", "judge=testserver", "strategy=human_auto", "analysis.bootstrap=50",
              f"judge.deployment.base_url={srv.openai_base_url}", "name=ts")
    study = json.loads((tmp_path / "ts" / "study" / "study.json").read_text(encoding="utf-8"))
    (cell,) = study["cells"].values()
    pairs = [p for t in cell["disagreements"]["v_strict"]["topics"] for p in t.get("pairs", [])]
    assert pairs
    for p in pairs:
        assert p["judge_model_call"] and p["judge_position"] >= 1
        assert json.loads(p["judge_reply"])[p["judge_position"] - 1] == p["judge"], p
