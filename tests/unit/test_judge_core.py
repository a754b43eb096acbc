"""Judge-layer plumbing without a network: config, cache, rate limits, backoff, registry, sync wrapper."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import time

import pytest

from metaeval.errors import ConfigError
from metaeval.judges import Deployment, SyncJudge, make_judge, resolve_judge
from metaeval.judges.backends.base import parse_retry_after, redact, split_params
from metaeval.judges.cache import ResponseCache, cache_key
from metaeval.judges.client import ChatClient
from metaeval.judges.limits import RateLimiter, TokenBucket
from metaeval.types import Answer, Support, Topic

DEP = {"name": "d", "backend": "openai", "model": "m", "api_key_env": "METAEVAL_UNIT_KEY"}


def test_deployment_from_dict_defaults_and_errors(monkeypatch):
    d = Deployment.from_dict({"backend": "openai", "model": "gpt-x", "limits": {"rpm": 60}, "prices": {"input_per_1m": 2}})
    assert d.name == "gpt-x" and d.limits.rpm == 60 and d.limits.concurrency == 8 and d.prices.input_per_1m == 2
    assert d.prices.cost(1_000_000, 0) == pytest.approx(2.0)
    with pytest.raises(ConfigError, match="unknown field"):
        Deployment.from_dict({"backend": "openai", "model": "m", "temprature": 0})
    with pytest.raises(ConfigError, match="limits: unknown field"):
        Deployment.from_dict({"backend": "openai", "model": "m", "limits": {"rmp": 1}})
    with pytest.raises(ConfigError, match="'model' is required"):
        Deployment.from_dict({"backend": "openai"})
    with pytest.raises(ConfigError, match="concurrency"):
        Deployment.from_dict({"backend": "openai", "model": "m", "limits": {"concurrency": 0}})
    monkeypatch.delenv("METAEVAL_UNIT_KEY", raising=False)
    with pytest.raises(ConfigError, match="METAEVAL_UNIT_KEY is not set"):
        Deployment.from_dict(DEP).api_key()
    with pytest.raises(ConfigError, match="unknown backend"):
        monkeypatch.setenv("METAEVAL_UNIT_KEY", "sk-unit")
        ChatClient({**DEP, "backend": "nope"})


def test_public_dict_and_repr_never_hold_the_key(monkeypatch):
    monkeypatch.setenv("METAEVAL_UNIT_KEY", "sk-unit-secret-123")
    client = ChatClient(DEP)
    assert "sk-unit-secret-123" not in repr(client.describe()) + repr(client) + repr(client.backend)
    assert redact("error sk-unit-secret-123 here", "sk-unit-secret-123") == "error [REDACTED] here"


def test_cache_key_depends_on_exactly_the_output_relevant_fields():
    m = [{"role": "user", "content": "hi"}]
    k = cache_key("d", "m", m, {"temperature": 0}, 0)
    assert k == cache_key("d", "m", [{"role": "user", "content": "hi"}], {"temperature": 0}, 0)
    others = [cache_key("d2", "m", m, {"temperature": 0}, 0), cache_key("d", "m2", m, {"temperature": 0}, 0),
              cache_key("d", "m", [{"role": "user", "content": "hi!"}], {"temperature": 0}, 0),
              cache_key("d", "m", m, {"temperature": 1}, 0), cache_key("d", "m", m, {"temperature": 0}, 1)]
    assert len({k, *others}) == 6


def _writer(path: str, start: int, n: int) -> None:
    cache = ResponseCache(path)
    for i in range(start, start + n):
        cache.put(f"k{i}", {"text": f"v{i}"})


def test_cache_survives_reopen_and_concurrent_processes(tmp_path):
    path = str(tmp_path / "c.sqlite")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, i * 200, 200)) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = ResponseCache(path)
    assert len(cache) == 600 and cache.get("k399") == {"text": "v399"} and cache.get("nope") is None
    assert cache._connect().execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_token_bucket_paces_requests(monkeypatch):
    """From an empty bucket at 8 tokens/s, three takes of 1 wait 0.125 s each (on a fake clock: exactly; 8/s keeps
    every figure exact in binary), and on the real clock never let the three through in less than their 0.375 s
    (a lower bound only: a slow machine waits longer)."""
    import metaeval.judges.limits as limits

    async def go():
        bucket = TokenBucket(per_minute=480)  # 8/s, burst 480
        bucket.tokens = 0.0
        t = time.perf_counter()
        waits = [await bucket.take(1) for _ in range(3)]
        return waits, time.perf_counter() - t

    assert asyncio.run(go())[1] >= 0.35
    clock, slept = [0.0], []

    async def fake_sleep(delay):
        assert len(slept) < 10, slept  # a bucket that never fills up fails here instead of spinning
        slept.append(delay)
        clock[0] += delay

    monkeypatch.setattr(limits, "time", type("FakeTime", (), {"monotonic": staticmethod(lambda: clock[0])}))
    monkeypatch.setattr(limits.asyncio, "sleep", fake_sleep)
    waits, _ = asyncio.run(go())
    assert waits == [0.125, 0.125, 0.125] and slept == [0.125, 0.125, 0.125] and clock[0] == 0.375


def test_rate_limiter_concurrency_cap():
    async def go():
        lim = RateLimiter(concurrency=2)
        live, peak = 0, 0

        async def one():
            nonlocal live, peak
            async with lim.slot(10):
                live += 1
                peak = max(peak, live)
                await asyncio.sleep(0.01)
                live -= 1

        await asyncio.gather(*(one() for _ in range(10)))
        return peak

    assert asyncio.run(go()) == 2


def test_backoff_is_bounded_jittered_and_honours_retry_after(monkeypatch):
    monkeypatch.setenv("METAEVAL_UNIT_KEY", "sk-unit")
    client = ChatClient({**DEP, "limits": {"backoff_base_s": 0.5, "max_backoff_s": 4.0, "jitter": 0.25}})
    delays = [client.backoff(k, None) for k in range(8)]
    assert 0.5 <= delays[0] <= 0.625 and 1.0 <= delays[1] <= 1.25 and max(delays) == 4.0
    assert client.backoff(0, 3.0) == 3.0 and client.backoff(0, 100.0) == 4.0
    assert parse_retry_after({"retry-after": "2"}) == 2.0 and parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({}) is None and parse_retry_after({"retry-after": "soon"}) is None


def test_split_params_moves_unknown_generation_params_to_extra_body():
    def create(*, model, messages, temperature=None, timeout=None, extra_body=None): ...

    assert split_params(create, {"temperature": 0, "top_k": 5}) == {"temperature": 0, "extra_body": {"top_k": 5}}


def test_registry_and_sync_wrapper(tmp_path):
    assert resolve_judge("lexical").kind == "lexical"
    cfg = tmp_path / "dep.yaml"
    cfg.write_text("backend: openai\nmodel: m\napi_key_env: X\n")
    spec = resolve_judge(str(cfg))
    assert spec.kind == "llm" and spec.key_env == "X" and spec.deployment.model == "m"
    with pytest.raises(ConfigError, match="unknown judge"):
        make_judge({"judge": "oracle"})
    with pytest.raises(ConfigError, match="unknown judge 'gpt-5'; config names: .*gpt-4o"):
        make_judge("gpt-5")
    with SyncJudge(make_judge({"judge": "lexical", "support_threshold": 0.5})) as sj:
        res = sj.assign(Topic("q", "cats"), Answer("r", "q", "Cats purr when content."), ["cats purr", "dogs bark loudly"])
    assert res.labels == (Support.SUPPORT, Support.NOT_SUPPORT)
    with pytest.raises(ValueError, match="at most 10"):
        SyncJudge(make_judge("lexical")).assign(Topic("q", "x"), Answer("r", "q", "x"), ["n"] * 11)


def _killed_writer(path: str) -> None:
    import os
    import signal

    cache = ResponseCache(path)
    for i in range(100):
        cache.put(f"k{i}", {"text": f"v{i}"})
    os.kill(os.getpid(), signal.SIGKILL)  # no close, no checkpoint


def test_cache_survives_a_killed_writer(tmp_path):
    path = str(tmp_path / "c.sqlite")
    p = mp.get_context("spawn").Process(target=_killed_writer, args=(path,))
    p.start()
    p.join(60)
    assert p.exitcode == -9
    cache = ResponseCache(path)
    assert len(cache) == 100 and cache.get("k99") == {"text": "v99"}
    assert cache._connect().execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_structured_output_is_refused_for_anthropic_at_construction():
    import pytest

    from metaeval.errors import ConfigError
    from metaeval.judges.catalog import build_judge as make_judge

    dep = {"backend": "anthropic", "model": "m", "base_url": "http://127.0.0.1:9", "api_key_env": None}
    with pytest.raises(ConfigError, match="needs a backend that takes a response_format"):
        make_judge({"judge": "llm", "deployment": dep, "structured_output": "json_schema"})
    make_judge({"judge": "llm", "deployment": dep})  # without a schema it is fine
