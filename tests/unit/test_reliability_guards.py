"""Guards the suite let pass before issue 25: each test below fails on a planted bug (said in its docstring) and
passes on the code as it is.

* ``RunLock.release`` must write its record while it still holds the lock (planted: unlock, then write);
* redaction must run before clipping (planted: clip, then redact - a 3-7 character key prefix survives before
  ``"... ["``);
* the response-cache key must not hold ``base_url`` (planted: ``cache_key(..., base_url)`` in ``ChatClient``) -
  a cache filled through ``ChatClient`` replays offline at another URL;
* plus the units of the reply redaction, the reply size cap and the lock file over 4,096 bytes.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os

import pytest

from metaeval.judges.backends.base import ChatReply, status_error
from metaeval.judges.cache import ResponseCache
from metaeval.judges.client import CallFailed, ChatClient
from metaeval.pipeline import lock as lockmod
from metaeval.pipeline.lock import RunLock
from metaeval.security.redaction import MAX_REPLY_CHARS, cap_reply, protect_loggers, redact_reply

KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
M = [{"role": "user", "content": "does the answer support the nugget?"}]


# ---------------------------------------------------------------- the lock writes its record before unlocking
def test_release_writes_its_record_while_still_holding_the_lock(tmp_path, monkeypatch):
    """Planted bug: ``release`` calls ``flock(LOCK_UN)`` before ``_write`` - another sweep could take the lock and
    read (or overwrite) a half-written record.  Here every ``_write`` checks that the lock is still held (a second
    open file description cannot take it)."""
    path = tmp_path / ".lock"
    held_during_write: list[bool] = []
    real_write = lockmod._write

    def checking_write(fd, rec):
        probe = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held_during_write.append(True)
        else:
            held_during_write.append(False)
            fcntl.flock(probe, fcntl.LOCK_UN)
        finally:
            os.close(probe)
        real_write(fd, rec)

    monkeypatch.setattr(lockmod, "_write", checking_write)
    lk = RunLock(path).acquire()
    lk.release(interrupted=True)
    assert held_during_write == [True, True]  # acquire's record and release's record
    rec = json.loads(path.read_text(encoding="utf-8"))
    assert "pid" not in rec and len(rec["interrupted_runs"]) == 1


def test_lock_record_over_4096_bytes_is_read_whole(tmp_path):
    """Item 12: many interrupted runs make the record longer than 4,096 bytes; it is read whole, so the stale
    holder is still detected and the history ("lower bounds") kept."""
    path = tmp_path / ".lock"
    history = [{"pid": 100000 + i, "host": "h" * 30, "started": "2026-01-01T00:00:00Z"} for i in range(120)]
    path.write_text(json.dumps({"pid": 4242, "host": "elsewhere", "started": "x", "interrupted_runs": history}),
                    encoding="utf-8")
    assert path.stat().st_size > 4096
    lk = RunLock(path).acquire()
    try:
        assert lk.stale == {"pid": 4242, "host": "elsewhere", "started": "x"}
        assert len(lk.interrupted_runs) == 121
    finally:
        lk.release()
    assert len(json.loads(path.read_text(encoding="utf-8"))["interrupted_runs"]) == 121


# ---------------------------------------------------------------- redact, then clip
class _StatusExc:
    def __init__(self, message: str):
        self.status_code = 401
        self.message = message
        self.response = None


@pytest.mark.parametrize("pad", range(480, 500))
def test_status_error_redacts_before_clipping(pad):
    """Planted bug: ``redact(clip(...))`` - when the key straddles the 500-character cut, the 3-7 characters of
    it left before ``"... ["`` are too short for the 8-character redaction and survive."""
    prefix = "HTTP 401: "
    msg = str(status_error(_StatusExc("x" * (pad - len(prefix)) + KEY + " rest of the body " * 20), KEY))
    head = msg.split("... [", 1)[0]
    for n in range(3, 8):
        assert not head.endswith(KEY[:n]), (pad, head[-12:])
    assert not any(KEY[i:i + 8] in msg for i in range(len(KEY) - 7))


# ---------------------------------------------------------------- every field of a reply
def test_redact_reply_covers_every_string_field():
    reply = ChatReply(text=f"support\nkey {KEY}", input_tokens=3, output_tokens=1, finish_reason=f"stop {KEY}",
                      model=f"m-{KEY[:20]}")
    clean = redact_reply(reply, KEY)
    for field in ("text", "finish_reason", "model"):
        v = getattr(clean, field)
        assert not any(KEY[i:i + 8] in v for i in range(len(KEY) - 7)), field
        assert "[REDACTED]" in v
    assert clean.input_tokens == 3 and clean.text.startswith("support")


def test_client_stores_no_key_in_any_reply_field(tmp_path, monkeypatch):
    """Item 1: the client redacts finish_reason and model too before the cache and the trace see them."""
    monkeypatch.setenv("METAEVAL_UNIT_KEY", KEY)

    class Backend:
        async def complete(self, request):
            return ChatReply(text=f"support {KEY}", input_tokens=5, output_tokens=1, finish_reason=f"stop {KEY}",
                             model=f"test-model {KEY}")

        async def aclose(self):
            pass

    dep = {"name": "d", "backend": "openai", "model": "m", "api_key_env": "METAEVAL_UNIT_KEY"}
    path = tmp_path / "c.sqlite"
    client = ChatClient(dep, cache=ResponseCache(path), backend=Backend(), offline=False)
    trace = asyncio.run(client.complete(M))
    blob = json.dumps(trace.to_dict())
    client.cache.close()
    raw = path.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("c.sqlite-*"))
    for i in range(len(KEY) - 7):
        frag = KEY[i:i + 8]
        assert frag not in blob and frag.encode() not in raw, frag


def test_http_loggers_stay_at_info_and_are_redacted(caplog):
    import logging

    logging.getLogger("httpcore").setLevel(logging.DEBUG)
    protect_loggers(KEY)
    assert logging.getLogger("httpcore").getEffectiveLevel() >= logging.INFO
    assert logging.getLogger("httpcore.http11").getEffectiveLevel() >= logging.INFO
    with caplog.at_level(logging.INFO):
        logging.getLogger("httpx").info("HTTP Request: header x-echo-key=%s", KEY)
    assert KEY not in caplog.text and KEY[5:13] not in caplog.text


# ---------------------------------------------------------------- the reply size cap
def test_cap_reply_marks_the_cut():
    assert cap_reply("abc", 5) == ("abc", 0)
    kept, cut = cap_reply("a" * 12, 5)
    assert cut == 7 and kept.startswith("aaaaa... [reply truncated by metaeval: 7 more characters")
    assert MAX_REPLY_CHARS >= 100_000


def test_oversized_reply_fails_the_call_and_is_stored_cut(tmp_path):
    """Item 20: a reply over the cap is never cached nor returned as a reply to parse; its trace keeps the cut
    raw text with the marker, and its tokens still count."""

    class Backend:
        async def complete(self, request):
            return ChatReply(text="support " * 5000, input_tokens=5, output_tokens=10_000)

        async def aclose(self):
            pass

    dep = {"name": "d", "backend": "openai", "model": "m", "api_key_env": None}
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = ChatClient(dep, cache=cache, backend=Backend(), offline=False)
    client.max_reply_chars = 1000
    with pytest.raises(CallFailed) as exc:
        asyncio.run(client.complete(M))
    tr = exc.value.trace
    assert "over the cap of 1000" in tr.error
    assert len(tr.raw_output) < 1100 and "reply truncated by metaeval" in tr.raw_output
    assert tr.output_tokens == 10_000 and client.stats.output_tokens == 10_000
    assert len(cache) == 0


# ---------------------------------------------------------------- the cache key has no URL
def test_cache_filled_through_client_replays_offline_at_another_url(tmp_path):
    """Planted bug: ``ChatClient`` puts ``base_url`` into ``cache_key`` - a cache filled against one server then
    misses when replayed offline with the deployment pointed elsewhere (TREC AutoJudge replays must work)."""
    from metaeval.testing.server import ChatTestServer

    path = tmp_path / "c.sqlite"
    with ChatTestServer() as srv:
        dep = {"name": "d", "backend": "openai", "model": "test-model", "base_url": srv.openai_base_url,
               "api_key_env": None, "limits": {"max_retries": 0, "timeout_s": 10}}
        online = ChatClient(dep, cache=ResponseCache(path), offline=False)
        first = asyncio.run(online.complete(M))
        assert not first.cache_hit and first.raw_output
    moved = {**dep, "base_url": "http://127.0.0.1:9/v1"}  # nothing listens there; offline sends nothing anyway
    offline = ChatClient(moved, cache=ResponseCache(path), offline=True)
    again = asyncio.run(offline.complete(M))
    assert again.cache_hit and again.raw_output == first.raw_output


# ---------------------------------------------------------------- batch journal
def test_batch_journal_sets_a_non_utf8_line_aside(tmp_path, caplog):
    """Item 13: one non-UTF-8 byte made the whole journal unreadable (every batch job failed until the file was
    deleted); now that line alone is set aside (once) and the rest is read."""
    from metaeval.judges.batch import BatchJournal

    path = tmp_path / "j.jsonl"
    good = [json.dumps({"event": "submitted", "batch": "b1", "custom_ids": ["r1", "r2"]}),
            json.dumps({"event": "submitted", "batch": "b2", "custom_ids": ["r3"]})]
    path.write_bytes(good[0].encode() + b"\n" + b'{"event": "ended", "batch": "b\xff"}\n' + good[1].encode() + b"\n")
    j = BatchJournal(path)
    assert j.pending() == ["b1", "b2"] and j.lookup("r3") == "b2"
    q = json.loads(j.quarantine_path.read_text(encoding="utf-8"))
    assert q["line"] == 2 and "UnicodeDecodeError" in q["reason"]
    BatchJournal(path)  # read again: the line is not set aside twice
    assert len(j.quarantine_path.read_text(encoding="utf-8").splitlines()) == 1
    assert "set aside" in caplog.text
