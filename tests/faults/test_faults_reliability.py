"""Issue 25 (round two) and issue 23 items 4, 5, 11, 13 through the real CLI: no useless run that exits 0, no
traceback on a hostile path or a full disk, nothing overwritten before the folder lock, nothing lost.

Sweeps: ``metaeval sweep runtime=serial`` on the demo (64 answers) against loopback test servers, as in
``test_faults_integrity.py``.  Each test names the item it keeps fixed.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.pipeline.lock import RunLock
from metaeval.testing.server import ChatTestServer
from tests.faults.faultkit import CELL, SERIAL, limits, run_sweep

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "metaeval" / "data" / "demo"
BAD = ROOT / "tests" / "data" / "bad"
DOWN = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
FAST = limits(concurrency=8, max_retries=0, timeout_s=5)


def metaeval(*args: str, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metaeval", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def one_error(res: subprocess.CompletedProcess) -> str:
    out = res.stdout + res.stderr
    assert "Traceback" not in out, out[-3000:]
    errors = [ln for ln in res.stderr.splitlines() if ": error: " in ln]
    assert len(errors) == 1, res.stderr[-3000:]
    return errors[0]


def summary_cell(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))["cells"][0]


# ------------------------------------------------------------------ item 3: a stage that produced nothing
def test_auto_auto_with_the_server_down_exits_4_naming_the_creation_stage(tmp_path):
    res = run_sweep(tmp_path, "down", DOWN, "runtime=serial", "grid=single", "judge=testserver", "strategy=auto_auto",
                    "calibration.enabled=false", "analysis.bootstrap=0", "+report.enabled=false", *FAST)
    assert "Traceback" not in res.stderr
    assert res.returncode == 4, res.stderr[-2000:]
    assert "creation stage: no usable nugget" in res.stderr
    assert summary_cell(tmp_path / "down")["labels"] == 0  # stored first: the summary is there


def test_relevance_judge_with_the_server_down_exits_4_naming_the_relevance_stage(tmp_path):
    res = run_sweep(tmp_path, "rel", DOWN, "runtime=serial", "grid=single", "judge=testserver", "strategy=auto_auto",
                    "sweep.relevance=judge", "calibration.enabled=false", "analysis.bootstrap=0", "+report.enabled=false",
                    *FAST)
    assert "Traceback" not in res.stderr
    assert res.returncode == 4, res.stderr[-2000:]
    assert "relevance stage" in res.stderr or "creation stage" in res.stderr


def test_health_rules_per_stage():
    from metaeval.pipeline.health import failed_rate_problems, unusable_stage

    rows = [{"cell": "a", "strategy": "auto_auto", "labels": 0, "failed_labels": 0},
            {"cell": "b", "strategy": "human_judge_importance", "labels": 10, "failed_labels": 0, "failed_importance": 8},
            {"cell": "c", "strategy": "human_auto", "labels": 10, "failed_labels": 6},
            {"cell": "d", "strategy": "auto_auto", "labels": 10, "failed_labels": 0,
             "relevance": {"documents": 20, "relevant": 0, "failed_grades": 20}},
            {"cell": "e", "strategy": "human_auto", "labels": 0, "failed_labels": 0},  # nothing to judge: not flagged
            {"cell": "f", "strategy": "auto_auto", "labels": 10, "failed_labels": 1, "failed_importance": 1}]
    lines = failed_rate_problems(rows, 0.5)
    assert [ln.split(":")[0] for ln in lines] == ["cell a", "cell b", "cell c", "cell d"]
    assert "creation stage" in lines[0] and "importance stage" in lines[1] and "relevance stage" in lines[3]
    assert unusable_stage("assignment", usable=0, total=33, calls=33, errors=["permanent error: HTTP 401: no"]) \
        .startswith("assignment: nothing usable: 0 of 33 labels usable; 1 of 33 model calls failed")
    assert unusable_stage("assignment", usable=1, total=33) is None and unusable_stage("creation", usable=0, total=0) is None


# ------------------------------------------------------------------ item 4: assign / create when every call is refused
@pytest.fixture(scope="module")
def wrong_key_judge(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wk")
    with ChatTestServer(expected_key="sk-the-right-key-0123456789") as srv:
        cfg = tmp / "judge.yaml"
        cfg.write_text("judge: llm\nname: wk\ndeployment:\n  name: wk\n  backend: openai\n  model: test-model\n"
                       f"  base_url: {srv.openai_base_url}\n  api_key_env: METAEVAL_WRONG_KEY\n"
                       "  limits: {max_retries: 0, timeout_s: 5}\n", encoding="utf-8")
        yield tmp, cfg


def test_assign_exits_4_when_every_call_gets_a_401(wrong_key_judge):
    tmp, cfg = wrong_key_judge
    res = metaeval("assign", "--nuggets", str(DEMO / "nuggets.jsonl"), "--answers", str(DEMO / "runs.jsonl"),
                   "--judge", str(cfg), "--no-cache", "--out", str(tmp / "a.jsonl"), env={"METAEVAL_WRONG_KEY": "sk-wrong-987654321"})
    assert "Traceback" not in res.stderr
    assert res.returncode == 4, res.stderr[-2000:]
    assert "assignment: nothing usable" in res.stderr and "401" in res.stderr
    assert (tmp / "a.jsonl").exists() and (tmp / "a.transcripts.jsonl").exists()  # written first: nothing lost


def test_create_exits_4_when_every_call_gets_a_401(wrong_key_judge):
    tmp, cfg = wrong_key_judge
    pool = tmp / "pool.jsonl"
    cands = [{"docid": f"d{i}", "doc": {"segment": t}} for i, t in
             enumerate(["Cats purr by twitching the muscles of the larynx.", "Kittens purr to tell their mother they are fine."])]
    pool.write_text("".join(json.dumps({"query": {"qid": q, "text": "why do cats purr"}, "candidates": cands}) + "\n"
                            for q in ("q1", "q2")), encoding="utf-8")
    res = metaeval("create", "--pool", str(pool), "--judge", str(cfg), "--no-cache", "--out", str(tmp / "n.jsonl"),
                   env={"METAEVAL_WRONG_KEY": "sk-wrong-987654321"})
    assert "Traceback" not in res.stderr
    assert res.returncode == 4, res.stderr[-2000:]
    assert "creation: nothing usable" in res.stderr


# ------------------------------------------------------------------ item 5: nothing written before the lock
def test_a_second_sweep_on_a_locked_name_writes_nothing(tmp_path):
    first = metaeval("sweep", "--no-progress", f"results_dir={tmp_path}", "name=x", "runtime=serial", "grid=single",
                     "judge=lexical", "strategy=human_auto", "analysis.bootstrap=0", "calibration.enabled=false")
    assert first.returncode == 0, first.stderr[-2000:]
    folder = tmp_path / "x"
    before = {p: (folder / p).read_bytes() for p in ("config.yaml", "overrides.yaml", "fingerprint.json")}
    with RunLock(folder / ".lock"):  # a sweep of this name is running
        second = metaeval("sweep", "--no-progress", f"results_dir={tmp_path}", "name=x", "runtime=serial", "grid=single",
                          "judge=lexical", "strategy=human_auto", "analysis.bootstrap=0", "calibration.enabled=false",
                          "analysis.seed=999", "sweep.budget_usd=5")
    assert second.returncode == 2
    assert "in use by another sweep" in one_error(second)
    assert {p: (folder / p).read_bytes() for p in before} == before  # the first run's settings are intact


# ------------------------------------------------------------------ item 6: the same name at another URL
def test_a_new_base_url_is_announced_once_per_deployment(tmp_path):
    with ChatTestServer() as a, ChatTestServer() as b:
        first = run_sweep(tmp_path, "u", a.openai_base_url, *SERIAL, *FAST)
        assert first.returncode == 0, first.stderr[-2000:]
        again = run_sweep(tmp_path, "u", b.openai_base_url, *SERIAL, *FAST)
        assert again.returncode == 0, again.stderr[-2000:]
        assert b.counts["requests"] == 0  # every job reused ...
    lines = [ln for ln in again.stderr.splitlines() if "stored jobs" in ln]
    assert len(lines) == 1, again.stderr[-2000:]  # ... and said so once, with both URLs
    assert a.openai_base_url in lines[0] and b.openai_base_url in lines[0]
    assert sum("now points at" in ln for ln in again.stderr.splitlines()) <= 1  # the cache's note: once, not per stage


# ------------------------------------------------------------------ issue 23 item 4: a failed run does not block the retry
def test_a_failed_run_leaves_nothing_that_blocks_the_corrected_retry(tmp_path):
    base = ["sweep", "--no-progress", f"results_dir={tmp_path}", "name=r", "runtime=serial", "grid=single", "judge=lexical",
            "strategy=human_auto", "analysis.bootstrap=0", "calibration.enabled=false", "dataset=trec-rag-2024"]
    bad = metaeval(*base, f"dataset.source={BAD / 'truncated.jsonl'}")
    assert bad.returncode == 2 and "truncated.jsonl:9" in one_error(bad)
    good = metaeval(*base, f"dataset.source={BAD / 'good_small.jsonl'}")
    assert good.returncode == 0, good.stderr[-2000:]
    # a folder that does hold results still refuses another dataset
    other = metaeval(*base, f"dataset.source={BAD / 'bom_good_small.jsonl'}")
    assert other.returncode == 2 and "holds results of another dataset" in one_error(other)


# ------------------------------------------------------------------ items 10 and 14: broken records, stable cost
def test_broken_records_are_set_aside_and_redone_and_the_cost_holds(tmp_path):
    with ChatTestServer() as srv:
        first = run_sweep(tmp_path, "b", srv.openai_base_url, *SERIAL, *FAST)
        assert first.returncode == 0, first.stderr[-2000:]
        cost = summary_cell(tmp_path / "b")["stats"]["cost_usd"]
        path = tmp_path / "b" / "jobs.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines()
        nulled = json.loads(lines[3])
        nulled["output"] = None  # well-formed JSON, not a result
        lines[3] = json.dumps(nulled)
        short = json.loads(lines[7])
        short["output"]["labels"] = short["output"]["labels"][:1]  # a too-short label list
        lines[7] = json.dumps(short)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        n0 = srv.counts["requests"]
        again = run_sweep(tmp_path, "b", srv.openai_base_url, *SERIAL, *FAST)
        sent = srv.counts["requests"] - n0
    assert "Traceback" not in again.stderr and again.returncode == 0, again.stderr[-2000:]
    assert sent == 0  # both jobs replayed from the response cache
    q = [json.loads(x) for x in (tmp_path / "b" / "jobs.quarantine.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {x.get("line") for x in q if "line" in x} == {4} and any(x.get("key") == short["key"] for x in q)
    cell = summary_cell(tmp_path / "b")
    assert cell["failed_labels"] == 0 and cell["this_run"]["executed"] == 2 and cell["this_run"]["cost_usd"] == 0.0
    assert cell["stats"]["cost_usd"] == pytest.approx(cost, rel=1e-9)  # was lower after a quarantine (item 14)
    labels = [json.loads(x) for x in (tmp_path / "b" / "cells" / CELL / "labels.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(n["assignment"] != "FAILED" for r in labels for n in r["nuggets"])


# ------------------------------------------------------------------ items 17-19: hostile paths, full disk, read-only
def test_cache_path_a_folder_and_a_results_path_over_4kb_are_one_line(tmp_path):
    res = metaeval("sweep", "--no-progress", f"results_dir={tmp_path}", "name=c", *SERIAL, f"cache.path={tmp_path}")
    assert res.returncode == 2 and "cache.path" in one_error(res) and "is a folder" in one_error(res)
    long_dir = tmp_path / ("d" * 200) / ("e" * 200) / ("f" * 200)
    deep = "/".join(["g" * 250] * 18)
    res = metaeval("sweep", "--no-progress", f"results_dir={long_dir}/{deep}", "name=c", *SERIAL)
    assert res.returncode == 2 and "over the system's limit" in one_error(res)
    assert not list(tmp_path.glob("d*"))  # nothing created


def test_disk_full_while_writing_is_one_line_and_leaves_no_half_file(tmp_path, monkeypatch, capsys):
    from metaeval import cli
    from metaeval.io import atomic

    out = tmp_path / "s.csv"
    out.write_text("old\n", encoding="utf-8")
    real_replace = os.replace

    def full(src, dst):
        if str(dst) == str(out):
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", full)
    import metaeval.io.scores as scores

    monkeypatch.setattr(scores.os, "replace", full)
    rc = cli.main(["score", str(BAD / "good_small.jsonl"), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "disk full" in err and str(out) in err, err
    assert out.read_text(encoding="utf-8") == "old\n"  # the old file stands
    assert [p.name for p in tmp_path.iterdir()] == ["s.csv"]  # no temporary file left behind


def test_layout_write_on_a_full_disk_is_an_output_error(tmp_path, monkeypatch):
    from metaeval.io import atomic
    from metaeval.io.outputs import OutputError
    from metaeval.layout import ResultsLayout

    lay = ResultsLayout(tmp_path, "x")

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", full)
    with pytest.raises(OutputError, match="disk full"):
        lay.write_text(lay.summary_md, "text")
    assert not list(lay.root.glob(".*tmp"))


def test_read_only_folders_are_refused_up_front(tmp_path, monkeypatch, capsys):
    from metaeval import cli
    from metaeval.io import outputs

    monkeypatch.setattr(outputs, "_read_only", lambda folder: True)  # as a read-only mount reports (statvfs)
    rc = cli.main(["analyze", "--reference", str(BAD / "good_small.jsonl"), "--candidate", str(BAD / "good_small.jsonl"),
                   "--bootstrap", "0", "--out", str(tmp_path / "a")])
    assert rc == 2 and "read-only file system" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()


def test_report_print_on_a_read_only_results_folder_prints_then_one_line(tmp_path, monkeypatch, capsys):
    from metaeval import cli
    from metaeval.io import outputs

    res = metaeval("sweep", "--no-progress", f"results_dir={tmp_path}", "name=p", "runtime=serial", "grid=single",
                   "judge=lexical", "strategy=human_auto", "analysis.bootstrap=0", "calibration.enabled=false",
                   "+report.enabled=false")
    assert res.returncode == 0, res.stderr[-2000:]
    monkeypatch.setattr(outputs, "_read_only", lambda folder: True)
    rc = cli.main(["report", "--print", str(tmp_path / "p")])
    cap = capsys.readouterr()
    assert rc == 2 and "lexical" in cap.out and "printed only" in cap.err
    assert not (tmp_path / "p" / "report.html").exists()


# ------------------------------------------------------------------ issue 23 item 11: outputs honour the umask
def test_outputs_honour_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        res = metaeval("analyze", "--reference", str(BAD / "good_small.jsonl"), "--candidate", str(BAD / "unknown_labels.jsonl"),
                       "--bootstrap", "0", "--out", str(tmp_path / "a"))
        sw = metaeval("sweep", "--no-progress", f"results_dir={tmp_path}", "name=m", "runtime=serial", "grid=single",
                      "judge=lexical", "strategy=human_auto", "analysis.bootstrap=0", "calibration.enabled=false")
    finally:
        os.umask(old)
    assert res.returncode == 0 and sw.returncode == 0, sw.stderr[-2000:]
    files = [*(tmp_path / "a").iterdir(), tmp_path / "m" / "report.html", tmp_path / "m" / "summary.json",
             tmp_path / "m" / "config.yaml", tmp_path / "m" / "cells" / "lexical__human_auto" / "labels.jsonl"]
    modes = {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode)) for p in files}
    assert set(modes.values()) == {"0o644"}, modes  # was 0o600 (mkstemp) under umask 022


# ------------------------------------------------------------------ issue 23 item 13: analyze takes a cell folder
def test_analyze_accepts_a_cell_folder_and_named_candidates(tmp_path):
    sw = metaeval("sweep", "--no-progress", f"results_dir={tmp_path}", "name=s", "runtime=serial", "grid=single",
                  "judge=lexical", "strategy=human_auto", "analysis.bootstrap=0", "calibration.enabled=false")
    assert sw.returncode == 0, sw.stderr[-2000:]
    cell = tmp_path / "s" / "cells" / "lexical__human_auto"
    res = metaeval("analyze", "--reference", str(DEMO / "assignments.jsonl"), "--candidate", str(cell),
                   f"mine={cell / 'labels.jsonl'}", "--bootstrap", "0", "--out", str(tmp_path / "a"))
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads((tmp_path / "a" / "analysis.json").read_text(encoding="utf-8"))
    assert sorted(doc["candidates"]) == ["lexical__human_auto", "mine"]  # was "labels#1", "labels#2"
    two = metaeval("analyze", "--reference", str(DEMO / "assignments.jsonl"), "--candidate", str(cell / "labels.jsonl"),
                   "--bootstrap", "0", "--out", str(tmp_path / "b"))
    assert two.returncode == 0
    assert list(json.loads((tmp_path / "b" / "analysis.json").read_text(encoding="utf-8"))["candidates"]) == ["lexical__human_auto"]


def test_probe_exits_4_when_every_call_gets_a_401(wrong_key_judge):
    tmp, cfg = wrong_key_judge
    res = metaeval("probe", "--judge", str(cfg), "--answers", "3", "--probe", "control_neutral", "--out", str(tmp / "p.json"),
                   env={"METAEVAL_WRONG_KEY": "sk-wrong-987654321"})
    assert "Traceback" not in res.stderr
    assert res.returncode == 4, res.stderr[-2000:]
    assert "assignment: nothing usable" in res.stderr and (tmp / "p.json").exists()
