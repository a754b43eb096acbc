"""The results store never loses a good record (quarantine, latest wins), one sweep per folder (lock), and every
write goes through a unique temporary file (issue 13: store, lock, atomic writes)."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import time

import pytest

from metaeval.io.atomic import atomic_open, atomic_write_text
from metaeval.io.jsonl import write_jsonl
from metaeval.pipeline.lock import RunLock, RunLocked
from metaeval.pipeline.specs import JobSpec
from metaeval.pipeline.store import ResultsStore


def _specs(n):
    return [JobSpec("assign", "j", "p", f"q{i}", "h") for i in range(n)]


def _fill(folder, n):
    specs = _specs(n)
    with ResultsStore(folder) as store:
        for i, s in enumerate(specs):
            store.put(s, "done", {"labels": ["support"], "i": i})
    return specs


def test_a_corrupt_line_in_the_middle_is_quarantined_and_every_other_record_kept(tmp_path):
    specs = _fill(tmp_path, 150)
    path = tmp_path / "jobs.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[100] = b'{"key": "garbage' + lines[100][:20]  # line 101
    path.write_bytes(b"\n".join(lines))
    with ResultsStore(tmp_path) as store:
        assert len(store) == 149
        assert specs[100].key not in store and specs[99].key in store and specs[101].key in store
        assert [q["line"] for q in store.quarantined] == [101]
    q = [json.loads(x) for x in (tmp_path / "jobs.quarantine.jsonl").read_text().splitlines()]
    assert len(q) == 1 and q[0]["line"] == 101 and q[0]["raw"].startswith('{"key": "garbage')
    assert "not JSON" in q[0]["reason"]
    # the store was rewritten without the bad line, never truncated: 149 good lines, all parseable
    kept = path.read_text().splitlines()
    assert len(kept) == 149 and all(json.loads(x)["key"] for x in kept)
    with ResultsStore(tmp_path) as store:  # reopening finds nothing more to quarantine
        assert len(store) == 149 and not store.quarantined


def test_blank_lines_are_harmless_and_not_quarantined(tmp_path):
    _fill(tmp_path, 5)
    path = tmp_path / "jobs.jsonl"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\n\n  \n", 2))
    with ResultsStore(tmp_path) as store:
        assert len(store) == 5 and not store.quarantined
    assert not (tmp_path / "jobs.quarantine.jsonl").exists()


@pytest.mark.parametrize("line,why", [
    (b'[1, 2, 3]', "not a JSON object"),
    (b'{"spec": {}, "status": "done", "output": {}}', "'key'"),
    (b'{"key": "k", "spec": {}, "status": "maybe", "output": {}}', "status"),
    (b'{"key": "k", "status": "done", "output": {}}', "'spec'"),
    (b'"just a string"', "not a JSON object"),
    (b'{"key": 1' + b"0" * 5000 + b'}', "not JSON"),  # a 5,000-digit integer
    (b'\xff\xfe not utf-8', "not JSON"),
])
def test_lines_that_are_not_records_are_quarantined_not_keyerror(tmp_path, line, why):
    _fill(tmp_path, 3)
    path = tmp_path / "jobs.jsonl"
    path.write_bytes(path.read_bytes() + line + b"\n")
    with ResultsStore(tmp_path) as store:
        assert len(store) == 3
        assert store.quarantined[0]["line"] == 4 and why in store.quarantined[0]["reason"]


def test_a_line_cut_short_by_a_crash_is_quarantined_and_appends_stay_whole(tmp_path):
    specs = _specs(3)
    with ResultsStore(tmp_path) as store:
        for s in specs[:2]:
            store.put(s, "done", {"labels": ["support"]})
    with open(tmp_path / "jobs.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"key": "half a line')
    with ResultsStore(tmp_path) as store:
        assert len(store) == 2 and specs[2].key not in store
        assert "cut short" in store.quarantined[0]["reason"]
        store.put(specs[2], "failed", {"error": "x"})
    lines = (tmp_path / "jobs.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(json.loads(x)["key"] for x in lines)


def test_the_latest_record_of_a_key_wins(tmp_path):
    """Mutation (b): a store keeping the *first* record per key would return the failed record here and a rerun
    would send the job again."""
    spec = _specs(1)[0]
    with ResultsStore(tmp_path) as store:
        store.put(spec, "failed", {"error": "HTTP 503"})
        store.put(spec, "done", {"labels": ["support"]})
    with ResultsStore(tmp_path) as store:
        rec = store.get(spec.key)
        assert rec["status"] == "done" and rec["output"] == {"labels": ["support"]}
        assert len(store) == 1


def _hold_lock(folder, ready, stop):
    store = ResultsStore(folder)
    ready.set()
    stop.wait(30)
    store.release()


def test_a_second_store_on_one_folder_is_refused_with_one_line_naming_the_holder(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    ready, stop = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold_lock, args=(tmp_path, ready, stop))
    proc.start()
    try:
        assert ready.wait(60)
        with pytest.raises(RunLocked) as err:
            ResultsStore(tmp_path)
        msg = str(err.value)
        assert "\n" not in msg and f"pid {proc.pid}" in msg and socket.gethostname() in msg and "name=" in msg
    finally:
        stop.set()
        proc.join(30)
    with ResultsStore(tmp_path) as store:  # released: the next one gets it, and finds no stale record
        assert store.lock.held and store.lock.stale is None


def test_a_sweep_refused_before_the_holder_wrote_its_record_still_names_the_holder(tmp_path):
    """Two sweeps started together: the loser may find the lock taken and the record not yet written (the holder
    takes the lock, then writes).  It reads again until the record names the holder (at most HOLDER_WAIT_S)."""
    import fcntl
    import threading

    path = tmp_path / ".lock"
    path.write_text(json.dumps({"interrupted_runs": []}))  # what a clean release leaves: no holder named
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the lock is taken; the record comes 0.2 s later

    def write_record():
        time.sleep(0.2)
        os.pwrite(fd, json.dumps({"pid": 4242, "host": "the-holder", "started": "now"}).encode() + b" " * 8, 0)

    writer = threading.Thread(target=write_record)
    writer.start()
    try:
        with pytest.raises(RunLocked, match=r"in use by another sweep \(pid 4242 on the-holder, started now\)"):
            RunLock(path).acquire()
    finally:
        writer.join()
        os.close(fd)


def test_a_stale_lock_from_a_killed_sweep_is_detected_and_taken_over(tmp_path, caplog):
    (tmp_path / ".lock").write_text(json.dumps({"pid": 999999, "host": socket.gethostname(), "started": "then"}))
    with caplog.at_level("WARNING"):
        lock = RunLock(tmp_path / ".lock").acquire()
    assert lock.stale["pid"] == 999999 and "stale lock" in caplog.text
    assert json.loads((tmp_path / ".lock").read_text())["pid"] == os.getpid()
    lock.release()
    rec = json.loads((tmp_path / ".lock").read_text())
    assert "pid" not in rec and [r["pid"] for r in rec["interrupted_runs"]] == [999999]
    with ResultsStore(tmp_path) as store:  # a clean run after it: the killed one is still on record, nothing new
        assert store.lock.stale is None and [r["pid"] for r in store.interrupted_runs] == [999999]


def test_writes_use_unique_temporary_files_and_leave_none_behind(tmp_path):
    target = tmp_path / "labels.jsonl"
    (tmp_path / "labels.jsonl.tmp").write_text("someone else's temporary file")
    write_jsonl(target, [{"a": 1}])
    assert (tmp_path / "labels.jsonl.tmp").read_text() == "someone else's temporary file"  # not touched
    with atomic_open(target) as a, atomic_open(target) as b:  # two writers at once: distinct temporary files
        a.write('{"a": 3}\n')
        b.write('{"a": 2}\n')
        assert len(list(tmp_path.glob(".labels.jsonl.*.tmp"))) == 2
    assert target.read_text() == '{"a": 3}\n'  # the last writer to finish (a) wins, whole
    with pytest.raises(RuntimeError):
        with atomic_open(target) as fh:
            fh.write("half")
            raise RuntimeError("boom")
    assert target.read_text() == '{"a": 3}\n'
    atomic_write_text(tmp_path / "x.json.gz", "hello")
    import gzip

    assert gzip.open(tmp_path / "x.json.gz", "rt").read() == "hello"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.jsonl", "labels.jsonl.tmp", "x.json.gz"]
