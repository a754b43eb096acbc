"""The store keeps records in memory without their transcripts and reads those back from jobs.jsonl by offset
(issue 15: driver memory does not grow with stored transcripts); the file's records are unchanged, survive a
kill -9 after any put (flushed per record), and offsets stay right across reopen, quarantine and non-ASCII text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from metaeval.pipeline.specs import JobSpec
from metaeval.pipeline.store import ResultsStore


def _tr(i: int, text: str = "") -> list[dict]:
    return [{"stage": "assign", "qid": f"q{i}", "calls": [{"messages": [{"role": "user", "content": f"prompt {i} {text}"}],
                                                          "raw_reply": f"reply é✓ {i}"}]}]


def _spec(i: int) -> JobSpec:
    return JobSpec("assign", "j", "p", f"q{i}", "h", run_id=f"r{i}")


def test_memory_records_have_no_transcripts_and_transcripts_read_back(tmp_path):
    with ResultsStore(tmp_path) as store:
        for i in range(20):
            store.put(_spec(i), "done", {"labels": ["support"], "transcripts": _tr(i, "ü" * i)}, {"calls": 1})
        store.put(_spec(3), "done", {"labels": ["partial_support"], "transcripts": _tr(3, "latest")})
        for i in range(20):
            rec = store.get(_spec(i).key)
            assert "transcripts" not in rec["output"] and rec["output"]["labels"]
            assert store.transcripts(_spec(i).key) == _tr(i, "latest" if i == 3 else "ü" * i)
        assert store.transcripts("no-such-key") == []
    lines = [json.loads(x) for x in (tmp_path / "jobs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 21 and lines[0]["output"]["transcripts"] == _tr(0)  # the file keeps everything
    with ResultsStore(tmp_path) as store:  # reopened: offsets from the file
        assert store.get(_spec(3).key)["output"]["labels"] == ["partial_support"]
        assert [store.transcripts(_spec(i).key) for i in range(20)] == [_tr(i, "latest" if i == 3 else "ü" * i) for i in range(20)]
        store.put(_spec(20), "done", {"labels": [], "transcripts": _tr(20)})
        assert store.transcripts(_spec(20).key) == _tr(20)


def test_offsets_after_quarantine(tmp_path):
    with ResultsStore(tmp_path) as store:
        for i in range(10):
            store.put(_spec(i), "done", {"labels": ["support"], "transcripts": _tr(i)})
    path = tmp_path / "jobs.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines.insert(4, b"{not json \xc3\xa9")
    lines.insert(7, b"")
    path.write_bytes(b"\n".join(lines))
    with ResultsStore(tmp_path) as store:
        assert len(store.quarantined) == 1 and len(store) == 10
        assert [store.transcripts(_spec(i).key) for i in range(10)] == [_tr(i) for i in range(10)]


def test_every_put_survives_kill_9(tmp_path):
    """A child puts records and is killed with SIGKILL right after its n-th put returned: all n are in the file
    and read back (with transcripts) by the next store."""
    code = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {os.getcwd()!r})
        from metaeval.pipeline.store import ResultsStore
        from tests.unit.test_store_memory import _spec, _tr
        n = int(sys.argv[1])
        store = ResultsStore({str(tmp_path)!r}, fsync_interval_s=3600)
        for i in range(n):
            store.put(_spec(i), "done", {{"labels": ["support"], "transcripts": _tr(i)}})
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    for n in (1, 7):
        res = subprocess.run([sys.executable, "-c", code, str(n)], timeout=120)
        assert res.returncode == -9
        with ResultsStore(tmp_path) as store:  # the killed run's stale lock is taken over
            assert all(store.transcripts(_spec(i).key) == _tr(i) for i in range(n)) and len(store) == max(n, 1)
