"""Batch mode end to end on the NIST TREC 2024 RAG answers (927 answers, human_auto assignment) against the
wire test server: the same labels as synchronous mode, each job priced at the batch price (half), and a sweep
killed with SIGKILL while polling that, rerun, resumes the batches it had submitted instead of submitting them
again (every custom id reaches the server exactly once over both runs)."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metaeval.testing.server import ChatTestServer, Faults

pytestmark = pytest.mark.slow

CELL = "testserver__v1__human_auto"


def _cmd(nist: Path, url: str, results: Path, name: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "grid=single", "judge=testserver",
            "strategy=human_auto", "dataset=trec-rag-2024", f"dataset.source={nist}", "runtime=serial",
            f"judge.deployment.base_url={url}", "calibration.enabled=false", "analysis.bootstrap=0",
            f"results_dir={results}", f"name={name}", *extra]


BATCH = ["+judge.deployment.mode=batch", "+judge.deployment.batch={window_s:0.5,poll_s:0.2,max_poll_s:0.5}",
         "judge.deployment.limits.concurrency=2000"]


def _jobs(path: Path) -> dict[str, dict]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        out[rec["key"]] = rec
    return out


def _journal(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return out


def test_batch_sweep_matches_sync_costs_half_and_resumes_after_kill(nist_file, tmp_path):
    with ChatTestServer(faults=Faults(batch_delay_s=1.5)) as srv:
        sync = subprocess.run(_cmd(nist_file, srv.openai_base_url, tmp_path / "sync", "s"), capture_output=True,
                              text=True, timeout=600)
        assert sync.returncode == 0, sync.stderr[-3000:]
        sync_calls = srv.counts["requests"]
        assert sync_calls >= 1600  # 1,721 assignment calls, of which ~100 repeat a prompt (cache hits)

        srv.reset_counts()
        journal = tmp_path / "batch" / ".cache" / "batches" / "testserver.jsonl"
        proc = subprocess.Popen(_cmd(nist_file, srv.openai_base_url, tmp_path / "batch", "b", *BATCH),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                ev = collections.Counter(r["event"] for r in _journal(journal))
                if ev["ended"] >= 1 and ev["submitted"] > ev["ended"]:  # a batch done, another one being polled
                    os.kill(proc.pid, signal.SIGKILL)
                    break
                time.sleep(0.05)
        finally:
            proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL, "the batch sweep ended before it could be killed while polling"
        before = _journal(journal)
        pending = {r["batch"] for r in before if r["event"] == "submitted"} - {r["batch"] for r in before if r["event"] == "ended"}
        assert pending

        rerun = subprocess.run(_cmd(nist_file, srv.openai_base_url, tmp_path / "batch", "b", *BATCH),
                               capture_output=True, text=True, timeout=600)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert srv.counts["requests"] == 0  # the synchronous endpoint was never used
        # every request went to the server in exactly one batch over both runs: nothing was submitted again
        per_id = collections.Counter(item["custom_id"] for b in srv.batch_api.batches.values() for item in b.items)
        assert per_id and set(per_id.values()) == {1}
        after = _journal(journal)
        ended = {r["batch"] for r in after if r["event"] == "ended"}
        assert pending <= ended  # the batches pending at the kill were polled to the end by the rerun

    sync_labels = (tmp_path / "sync" / "s" / "cells" / CELL / "labels.jsonl").read_text(encoding="utf-8")
    batch_labels = (tmp_path / "batch" / "b" / "cells" / CELL / "labels.jsonl").read_text(encoding="utf-8")
    assert batch_labels == sync_labels

    # cost: a job that made its calls (no cache hit) in batch mode costs half its synchronous cost
    s_jobs, b_jobs = _jobs(tmp_path / "sync" / "s" / "jobs.jsonl"), _jobs(tmp_path / "batch" / "b" / "jobs.jsonl")
    assert s_jobs.keys() == b_jobs.keys() and len(b_jobs) == 927
    total = lambda jobs, k: sum(r["stats"][k] for r in jobs.values())  # noqa: E731
    assert total(b_jobs, "input_tokens") == total(s_jobs, "input_tokens")  # same usage (cache hits count theirs)
    assert total(b_jobs, "cost_usd") <= total(s_jobs, "cost_usd") / 2 + 1e-9  # hits after the kill cost nothing
    compared = 0
    for key, rec in b_jobs.items():
        st, ss = rec["stats"], s_jobs[key]["stats"]
        if st.get("cache_hits") or ss.get("cache_hits"):
            continue
        assert (st["input_tokens"], st["output_tokens"]) == (ss["input_tokens"], ss["output_tokens"])
        assert st["cost_usd"] == pytest.approx(ss["cost_usd"] / 2, rel=1e-9)
        compared += 1
    assert compared >= 50  # jobs made entirely of batch calls in one process (the kill splits the others)
