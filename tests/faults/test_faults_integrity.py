"""Run integrity through the real CLI (issue 13 "Must show"): a corrupt line of a finished run's ``jobs.jsonl``,
two sweeps on one name, a 401 body with the key across character 500, damaged response caches, an offline replay
with the server stopped, and a server that is down for a whole cell.

All runs: ``metaeval sweep runtime=serial strategy=human_auto`` on the demo (64 answers, one assignment job and
one request each) against loopback test servers.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest

from metaeval.testing.server import Faults, _error
from tests.faults.faultkit import CELL, SERIAL, RecordingServer, answer_of, check_accounting, jobs, limits, run_sweep, sweep_cmd

NOCACHE = [*SERIAL, "cache=off", *limits(concurrency=8, max_retries=1)]


def _labels(out: Path, cell: str = CELL) -> list[dict]:
    return [json.loads(x) for x in (out / "cells" / cell / "labels.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def _no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-3000:]


# ------------------------------------------------------------------ a corrupt line of jobs.jsonl
def test_a_corrupt_line_of_a_finished_run_costs_exactly_one_job(tmp_path):
    """Demo-sized version of the issue's 927-answer case: line 30 of 64 is overwritten with garbage; the rerun
    sends exactly that job again, keeps the other 63 records and moves the bad line to the quarantine file."""
    with RecordingServer() as srv:
        first = run_sweep(tmp_path, "c", srv.openai_base_url, *NOCACHE)
        assert first.returncode == 0, first.stderr[-3000:]
        path = tmp_path / "c" / "jobs.jsonl"
        lines = path.read_bytes().split(b"\n")
        assert len([x for x in lines if x.strip()]) == 64
        victim = json.loads(lines[29])
        lines[29] = b'{"key": "' + victim["key"].encode() + b'", "spec": {"stage": "ass'  # garbage, not JSON
        lines.insert(10, b"")  # and a blank line: harmless
        path.write_bytes(b"\n".join(lines))
        n0 = len(srv.log)
        again = run_sweep(tmp_path, "c", srv.openai_base_url, *NOCACHE)
        assert again.returncode == 0, again.stderr[-3000:]
        rerun = srv.log[n0:]
    _no_traceback(again)
    assert len(rerun) == 1, f"{len(rerun)} requests re-sent"
    ds_answer = {(r["spec"]["qid"], r["spec"]["run_id"]) for r in [victim]}
    from metaeval.data.dataset import load_dataset

    text = {(a.qid, a.run_id): a.text.strip() for a in load_dataset("demo").answers}
    assert rerun[0]["answer"] == text[next(iter(ds_answer))]
    recs = jobs(tmp_path / "c")
    assert len(recs) == 64 and len({r["key"] for r in recs}) == 64
    q = [json.loads(x) for x in (tmp_path / "c" / "jobs.quarantine.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["line"] for x in q] == [31] and q[0]["raw"].startswith('{"key": "' + victim["key"])  # line 31 after the blank
    assert "jobs.quarantine.jsonl" in again.stderr
    check_accounting(tmp_path / "c")


@pytest.mark.slow
def test_corrupt_line_101_of_the_927_answer_nist_run_costs_exactly_that_job(tmp_path, nist_file):
    """The issue's case on the real data: 927 NIST answers (1,721 requests, about 30 s here); line 101 of the
    finished run's jobs.jsonl is garbled; the rerun re-sends that one job's requests only and keeps the other 926."""
    args = [*SERIAL, "cache=off", "dataset=trec-rag-2024", f"dataset.source={nist_file}", *limits(concurrency=16, max_retries=1)]
    with RecordingServer() as srv:
        first = run_sweep(tmp_path, "nist", srv.openai_base_url, *args, timeout=900)
        assert first.returncode == 0, first.stderr[-3000:]
        path = tmp_path / "nist" / "jobs.jsonl"
        lines = path.read_bytes().split(b"\n")
        assert len([x for x in lines if x.strip()]) == 927
        victim = json.loads(lines[100])
        lines[100] = lines[100][: len(lines[100]) // 2]  # line 101 cut in the middle: not JSON
        path.write_bytes(b"\n".join(lines))
        n0 = len(srv.log)
        again = run_sweep(tmp_path, "nist", srv.openai_base_url, *args, timeout=900)
        assert again.returncode == 0, again.stderr[-3000:]
        rerun = srv.log[n0:]
    _no_traceback(again)
    from metaeval.data.dataset import load_dataset

    ds = load_dataset(str(nist_file))
    text = {(a.qid, a.run_id): a.text.strip() for a in ds.answers}
    want = text[(victim["spec"]["qid"], victim["spec"]["run_id"])]
    assert rerun and {e["answer"] for e in rerun} == {want}  # one job's requests (one per batch of <= 10 nuggets)
    assert len(rerun) == victim["stats"]["calls"]
    recs = jobs(tmp_path / "nist")
    assert len(recs) == 927 and len({r["key"] for r in recs}) == 927
    q = [json.loads(x) for x in (tmp_path / "nist" / "jobs.quarantine.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["line"] for x in q] == [101]


# ------------------------------------------------------------------ two sweeps on one name
def test_two_sweeps_started_together_on_one_name_one_runs_one_is_refused(tmp_path):
    with RecordingServer(faults=Faults(latency_s=0.15)) as srv:
        cmd = sweep_cmd(tmp_path, "conc", srv.openai_base_url, *SERIAL, *limits(concurrency=2))
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        requests = len(srv.log)
    rcs = sorted(p.returncode for p in procs)
    assert rcs == [0, 2], [(p.returncode, o[1][-1500:]) for p, o in zip(procs, outs)]
    refused = next(o for p, o in zip(procs, outs) if p.returncode == 2)
    err_lines = [x for x in refused[1].splitlines() if "error" in x]
    assert len(err_lines) == 1 and "is in use by another sweep" in err_lines[0] and "pid " in err_lines[0]
    assert "Traceback" not in refused[1]
    recs = jobs(tmp_path / "conc")
    assert len(recs) == 64 and len({r["key"] for r in recs}) == 64  # no duplicate keys
    assert requests <= 64
    check_accounting(tmp_path / "conc")


# ------------------------------------------------------------------ a key across character 500 of a 401 body
KEY_ENV = "METAEVAL_STRADDLE_KEY"


class StraddlingKeyServer(RecordingServer):
    """Answers every request 401 with the key it was sent placed so that it crosses character 500 of the error
    message the client builds (the padding varies per request, so every offset around the cut occurs)."""

    async def _common(self, request, flavour):
        raw = await request.read()
        n = len(self.log)
        self.log.append({"n": n, "answer": answer_of(json.loads(raw).get("messages", [])), "status": 401})
        sent = request.headers.get("Authorization", "").removeprefix("Bearer ")
        # the client's message is "HTTP 401: Error code: 401 - " + body: the key starts at character pad + 56,
        # i.e. 456..515 - before, across and after the cut at 500
        pad = "p" * (400 + n % 60)
        return _error(flavour, 401, "invalid_api_key", f"{pad}Incorrect API key provided: {sent} (see docs)"), None, None


def test_a_401_body_with_the_key_across_character_500_leaks_no_8_character_fragment(tmp_path):
    key = "sk-" + secrets.token_hex(13)  # 29 characters, as in the issue
    env = {**os.environ, KEY_ENV: key}
    with StraddlingKeyServer() as srv:
        cmd = sweep_cmd(tmp_path, "leak", srv.openai_base_url, *SERIAL, "-vv", f"judge.deployment.api_key_env={KEY_ENV}",
                        *limits(max_retries=1))
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        assert len(srv.log) >= 64
    _no_traceback(proc)
    assert proc.returncode == 4, proc.stderr[-2000:]  # every label FAILED: stored, then a non-zero exit
    frags = [key[i:i + 8] for i in range(len(key) - 7)]
    (tmp_path / "stdout.txt").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    hits = []
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [(str(path.relative_to(tmp_path)), f) for f in frags if f.encode() in data]
    assert hits == [], hits[:5]
    assert "[REDACTED]" in (tmp_path / "leak" / "jobs.jsonl").read_text(encoding="utf-8")


# ------------------------------------------------------------------ damaged response caches
def _damage(path: Path, how: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    data = bytearray(path.read_bytes())
    if how == "garbage":
        data = bytearray(os.urandom(len(data)))
    elif how == "truncated":
        data = data[: len(data) // 2]
    else:  # corrupt pages, valid header
        for p in range(1, len(data) // 4096):
            data[p * 4096 + 16: p * 4096 + 400] = os.urandom(384)
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def filled_cache(tmp_path_factory):
    root = tmp_path_factory.mktemp("cache")
    with RecordingServer() as srv:
        res = run_sweep(root, "fill", srv.openai_base_url, *SERIAL, f"cache.path={root / 'base.sqlite'}", *limits())
        assert res.returncode == 0, res.stderr[-3000:]
    return root / "base.sqlite"


@pytest.mark.parametrize("how", ["garbage", "truncated", "pages"])
def test_a_damaged_cache_is_moved_aside_named_and_the_run_completes_with_fresh_calls(tmp_path, filled_cache, how):
    cache = tmp_path / "responses.sqlite"
    shutil.copy(filled_cache, cache)
    _damage(cache, how)
    with RecordingServer() as srv:
        res = run_sweep(tmp_path, "d", srv.openai_base_url, *SERIAL, f"cache.path={cache}", *limits())
        sent = len(srv.log)
    _no_traceback(res)
    assert res.returncode == 0, res.stderr[-3000:]
    moved = sorted(tmp_path.glob("responses.sqlite.corrupt-*"))
    assert moved and moved[0].name in res.stderr, res.stderr[-2000:]
    assert sent >= 63  # every answer asked again (the two identical q02 answers share one request)
    acc = check_accounting(tmp_path / "d")
    assert acc["failed_labels"] == 0


# ------------------------------------------------------------------ offline replay with the server stopped
def test_offline_replay_with_the_server_stopped_reproduces_labels_and_summary(tmp_path):
    """The live run needs a key (the server accepts only it); the replay has no key and no server."""
    cache = f"cache.path={tmp_path / 'responses.sqlite'}"
    key_env = "METAEVAL_REPLAY_KEY"
    key = "sk-replay-" + secrets.token_hex(8)
    keyed = [f"judge.deployment.api_key_env={key_env}"]
    with RecordingServer(expected_key=key) as srv:
        url = srv.openai_base_url
        live = subprocess.run(sweep_cmd(tmp_path, "live", url, *SERIAL, cache, *keyed, *limits()), capture_output=True,
                              text=True, timeout=300, env={**os.environ, key_env: key})
        assert live.returncode == 0, live.stderr[-3000:]
        assert srv.counts["401"] == 0 and len(srv.log) >= 63
    # the server is stopped (any request would fail: connection refused) and the key variable is not set
    env = {k: v for k, v in os.environ.items() if k != key_env}
    env_cmd = sweep_cmd(tmp_path, "replay", url, "--offline", *SERIAL, cache, *keyed, *limits(max_retries=0))
    replay = subprocess.run(env_cmd, capture_output=True, text=True, timeout=300, env=env)
    _no_traceback(replay)
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert _labels(tmp_path / "live") == _labels(tmp_path / "replay")
    s_live = json.loads((tmp_path / "live" / "summary.json").read_text())
    s_rep = json.loads((tmp_path / "replay" / "summary.json").read_text())
    for a, b in zip(s_live["cells"], s_rep["cells"]):
        assert a["labels"] == b["labels"] and a["failed_labels"] == b["failed_labels"]
        assert json.dumps(a.get("analysis"), sort_keys=True) == json.dumps(b.get("analysis"), sort_keys=True)
    # a miss in offline mode fails (nothing sent), it does not call
    miss = subprocess.run(sweep_cmd(tmp_path, "miss", url, "--offline", *SERIAL, f"cache.path={tmp_path / 'empty.sqlite'}",
                                    *limits(max_retries=0)), capture_output=True, text=True, timeout=300)
    _no_traceback(miss)
    assert miss.returncode == 4 and "offline: no cached reply" in (tmp_path / "miss" / "jobs.jsonl").read_text()


# ------------------------------------------------------------------ a server down for a whole cell
def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_a_server_down_for_a_whole_cell_exits_non_zero_after_storing_and_a_rerun_resends_only_those(tmp_path):
    down = f"http://127.0.0.1:{_closed_port()}/v1"
    first = run_sweep(tmp_path, "down", down, *NOCACHE)
    _no_traceback(first)
    assert first.returncode == 4, (first.returncode, first.stderr[-2000:])
    cell_lines = [x for x in first.stderr.splitlines() if CELL in x and "FAILED" in x]
    assert len(cell_lines) == 1 and re.search(r"(\d+) of \1 labels FAILED \(100%", cell_lines[0]), first.stderr[-2000:]
    recs = jobs(tmp_path / "down")
    assert len(recs) == 64 and all(r["status"] == "failed" for r in recs)  # everything stored
    assert (tmp_path / "down" / "summary.json").exists() and len(_labels(tmp_path / "down")) == 64
    with RecordingServer() as srv:
        again = run_sweep(tmp_path, "down", srv.openai_base_url, *NOCACHE)
        assert again.returncode == 0, again.stderr[-3000:]
        assert len(srv.log) == 64  # exactly the failed jobs, each once
        n0 = len(srv.log)
        third = run_sweep(tmp_path, "down", srv.openai_base_url, *NOCACHE)
        assert third.returncode == 0 and len(srv.log) == n0  # mutation (b): nothing re-sent once done
    acc = check_accounting(tmp_path / "down")
    assert acc["failed_labels"] == 0


def test_every_call_hanging_exits_non_zero_after_storing(tmp_path):
    """Every request hangs (10 s) past the client's 1 s timeout: all labels FAILED, everything stored, exit 4."""
    with RecordingServer(faults=Faults(p_hang=1.0, hang_s=10.0)) as srv:
        res = run_sweep(tmp_path, "hang", srv.openai_base_url, *SERIAL, "cache=off",
                        *limits(concurrency=32, max_retries=0, timeout_s=1.0))
    _no_traceback(res)
    assert res.returncode == 4, (res.returncode, res.stderr[-2000:])
    recs = jobs(tmp_path / "hang")
    assert len(recs) == 64 and all(r["status"] == "failed" for r in recs)
    assert all("timeout" in r["output"]["failures"][0]["reason"] for r in recs)
