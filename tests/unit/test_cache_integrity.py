"""Response cache integrity and identity, key redaction (issue 13: cache, redaction before truncation)."""

from __future__ import annotations

import asyncio
import email.utils
import os
import secrets
import sqlite3

import pytest

from metaeval.judges.backends.base import clip, parse_retry_after, redact, status_error
from metaeval.judges.cache import ResponseCache, cache_key, public_url

M = [{"role": "user", "content": "hi"}]


def _filled(path, n=50):
    c = ResponseCache(path)
    for i in range(n):
        c.put(f"k{i}", {"text": "x" * 3000 + str(i)}, deployment="d", url="http://a/v1")
    c.close()
    return path


@pytest.mark.parametrize("damage", ["garbage", "truncated", "pages"])
def test_a_damaged_cache_is_moved_aside_named_and_replaced(tmp_path, caplog, damage):
    path = tmp_path / "responses.sqlite"
    if damage == "garbage":
        path.write_bytes(os.urandom(5000))
    else:
        _filled(path)
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        data = bytearray(path.read_bytes())
        if damage == "truncated":
            data = data[: len(data) // 3]
        else:  # overwrite the middle pages with noise, keeping the header valid
            page = 4096
            for p in range(2, len(data) // page - 1):
                data[p * page + 8: p * page + 200] = os.urandom(192)
        path.write_bytes(bytes(data))
    with caplog.at_level("WARNING"):
        cache = ResponseCache(path)
    assert cache.moved_to and os.path.exists(cache.moved_to), caplog.text
    assert cache.moved_to in caplog.text and str(path) in caplog.text
    assert len(cache) == 0 and cache.get("k1") is None
    cache.put("new", {"text": "fresh"})
    assert ResponseCache(path).get("new") == {"text": "fresh"}


def test_an_undecodable_row_is_a_miss_not_a_failure(tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    cache.put("good", {"text": "ok"})
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO responses (key, value, created) VALUES ('bad', '{not json', 0)")
    conn.execute("INSERT INTO responses (key, value, created) VALUES ('odd', '[1, 2]', 0)")
    conn.commit()
    conn.close()
    with caplog.at_level("WARNING"):
        assert cache.get("bad") is None and cache.get("odd") is None
    assert cache.get("good") == {"text": "ok"} and cache.bad_rows == 2 and "treated as a miss" in caplog.text


def test_cache_key_holds_deployment_backend_model_revision_messages_params_sample_but_not_the_url():
    k = cache_key("openai", "m", M, {"temperature": 0}, 0, None)
    assert k == cache_key("openai", "m", [{"role": "user", "content": "hi"}], {"temperature": 0}, 0, None)
    others = [cache_key("anthropic", "m", M, {"temperature": 0}, 0), cache_key("openai", "m2", M, {"temperature": 0}, 0),
              cache_key("openai", "m", M, {"temperature": 0}, 0, "rev-2"),
              cache_key("openai", "m", [{"role": "user", "content": "hi!"}], {"temperature": 0}, 0),
              cache_key("openai", "m", M, {"temperature": 1}, 0), cache_key("openai", "m", M, {"temperature": 0}, 1),
              cache_key("openai", "m", M, {"temperature": 0}, 0, None, "another-deployment")]
    assert len({k, *others}) == 8
    import inspect

    assert "url" not in inspect.signature(cache_key).parameters


def test_the_cache_records_urls_and_warns_when_a_deployment_moves(tmp_path, caplog):
    cache = ResponseCache(tmp_path / "c.sqlite")
    assert cache.check_endpoint("judge-a", "http://user:pw@10.0.0.1:8000/v1/?token=abc") == []
    cache.put("k", {"text": "t"}, deployment="judge-a", url="http://user:pw@10.0.0.1:8000/v1/?token=abc")
    assert cache.url_of("k") == "http://10.0.0.1:8000/v1"  # no user, password or query written down
    with caplog.at_level("WARNING"):
        assert cache.check_endpoint("judge-a", "http://10.0.0.1:8000/v1") == []  # same server
        assert not caplog.text
        assert cache.check_endpoint("judge-a", "http://10.0.0.2:9000/v1") == ["http://10.0.0.1:8000/v1"]
    assert "judge-a" in caplog.text and "10.0.0.2:9000" in caplog.text and "revision" in caplog.text
    assert public_url(None) == ""


# ------------------------------------------------------------------------------------ redaction
def _key() -> str:
    return "sk-" + secrets.token_hex(13)  # 29 characters, like the key


def _fragments(key: str, n: int = 8) -> list[str]:
    return [key[i:i + n] for i in range(len(key) - n + 1)]


def test_redact_removes_the_key_and_every_8_character_fragment():
    key = _key()
    for text in (f"bad key {key}!", f"cut {key[:20]}", f"tail {key[-9:]} end", f"{key[3:11]} and {key[15:]}"):
        out = redact(text, key)
        assert not any(f in out for f in _fragments(key)), (text, out)
        assert "[REDACTED]" in out
    assert redact(f"short {key[:7]} stays", key) == f"short {key[:7]} stays"  # 7 characters is not a leak
    assert redact("nothing here", key) == "nothing here"


class _Resp:
    def __init__(self, headers):
        self.headers = headers


class _StatusError(Exception):
    def __init__(self, status, message, headers=None):
        self.status_code, self.message, self.response = status, message, _Resp(headers or {})


@pytest.mark.parametrize("offset", range(480, 505))
def test_a_401_body_with_the_key_straddling_character_500_leaves_no_fragment(offset):
    key = _key()
    body = "x" * offset + key + " more text after the key" * 5
    err = status_error(_StatusError(401, body), key)
    msg = str(err)
    assert err.status == 401 and not any(f in msg for f in _fragments(key)), msg[-80:]
    assert len(msg) < 560


def test_clip_says_how_much_was_cut():
    assert clip("a" * 10, 4) == "aaaa... [6 more characters]" and clip("abc", 4) == "abc"


# ------------------------------------------------------------------------------------ Retry-After
def test_http_date_retry_after_is_the_time_until_that_date(monkeypatch):
    """Mutation (c): the HTTP-date form with its sign flipped (``time.time() - when``) gives 0 here."""
    import metaeval.judges.backends.base as base

    now = 1_767_225_600.0  # a whole second: the HTTP date carries no fraction
    monkeypatch.setattr(base, "time", type("FrozenTime", (), {"time": staticmethod(lambda: now)}))
    assert parse_retry_after({"retry-after": email.utils.formatdate(now + 30, usegmt=True)}) == 30.0
    assert parse_retry_after({"retry-after": email.utils.formatdate(now - 30, usegmt=True)}) == 0.0
    assert parse_retry_after({"retry-after": "7"}) == 7.0 and parse_retry_after({"retry-after-ms": "1500"}) == 1.5


# ------------------------------------------------------------------------------------ offline replay
def test_offline_client_fails_on_a_miss_and_sends_nothing(tmp_path, monkeypatch):
    from metaeval.judges.backends import ChatReply
    from metaeval.judges.client import CallFailed, ChatClient

    class Backend:
        sent = 0

        async def complete(self, request):
            Backend.sent += 1
            return ChatReply(text="support", input_tokens=1, output_tokens=1)

        async def aclose(self):
            pass

    dep = {"name": "d", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}
    cache = ResponseCache(tmp_path / "c.sqlite")
    online = ChatClient(dep, cache=cache, backend=Backend(), offline=False)
    first = asyncio.run(online.complete(M))
    assert first.raw_output == "support" and Backend.sent == 1
    monkeypatch.setenv("METAEVAL_OFFLINE", "1")
    offline = ChatClient(dep, cache=cache, backend=Backend())
    assert offline.offline
    again = asyncio.run(offline.complete(M))
    assert again.cache_hit and again.raw_output == "support"
    with pytest.raises(CallFailed, match="offline: no cached reply"):
        asyncio.run(offline.complete([{"role": "user", "content": "not cached"}]))
    assert Backend.sent == 1 and offline.stats.offline_misses == 1


def test_a_reply_echoing_the_key_is_redacted_before_it_is_cached(tmp_path, monkeypatch):
    from metaeval.judges.backends import ChatReply
    from metaeval.judges.client import ChatClient

    key = _key()
    monkeypatch.setenv("METAEVAL_UNIT_ECHO_KEY", key)

    class Backend:
        async def complete(self, request):
            return ChatReply(text=f"your key is {key}", input_tokens=1, output_tokens=1)

        async def aclose(self):
            pass

    dep = {"name": "d", "backend": "openai", "model": "m", "api_key_env": "METAEVAL_UNIT_ECHO_KEY"}
    path = tmp_path / "c.sqlite"
    client = ChatClient(dep, cache=ResponseCache(path), backend=Backend(), offline=False)
    trace = asyncio.run(client.complete(M))
    assert key[:8] not in trace.raw_output and "[REDACTED]" in trace.raw_output
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert not any(f.encode() in raw for f in _fragments(key))
