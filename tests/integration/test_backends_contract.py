"""One contract suite, run for the openai and the anthropic backend against the wire-compatible test server.

Each test talks HTTP to a real server on 127.0.0.1 through the official SDK; nothing in the SDKs is mocked.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from metaeval.errors import ConfigError
from metaeval.judges.client import CallFailed, ChatClient
from metaeval.judges.config import Deployment
from metaeval.testing.server import ChatTestServer, Faults

KEY = "sk-contract-sentinel-0123456789"
BACKENDS = ["openai", "anthropic"]
MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


def deployment(backend: str, srv: ChatTestServer | None, **limits) -> Deployment:
    lim = {"timeout_s": 0.5, "max_backoff_s": 0.02, "backoff_base_s": 0.01, "max_retries": 4, **limits}
    base = None if srv is None else (srv.openai_base_url if backend == "openai" else srv.anthropic_base_url)
    return Deployment.from_dict({
        "name": f"contract-{backend}", "backend": backend, "model": "test-model", "base_url": base,
        "api_key_env": "METAEVAL_CONTRACT_KEY", "params": {"temperature": 0, "max_tokens": 64},
        "limits": lim, "prices": {"input_per_1m": 1.0, "output_per_1m": 2.0},
    })


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("METAEVAL_CONTRACT_KEY", KEY)


def run(client: ChatClient, messages=MSGS, **kw):
    async def go():
        try:
            return await client.complete(messages, **kw)
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("backend", BACKENDS)
def test_round_trip_usage_cost_and_trace(backend):
    with ChatTestServer(expected_key=KEY) as srv:
        client = ChatClient(deployment(backend, srv))
        tr = run(client, prompt={"prompt_id": "p", "prompt_version": "v9", "prompt_sha": "abc"})
        assert srv.counts["requests"] == 1 and srv.counts["ok"] == 1
    assert tr.raw_output == "Hello from the metaeval test server."
    assert tr.input_tokens > 0 and tr.output_tokens > 0
    assert tr.cost_usd == pytest.approx((tr.input_tokens * 1.0 + tr.output_tokens * 2.0) / 1e6)
    assert (tr.deployment, tr.backend, tr.model) == (f"contract-{backend}", backend, "test-model")
    assert (tr.prompt_id, tr.prompt_version, tr.prompt_sha) == ("p", "v9", "abc")
    assert tr.params == {"temperature": 0, "max_tokens": 64}
    assert len(tr.message_hash) == 64 and tr.retries == 0 and not tr.cache_hit and tr.timestamp.endswith("+00:00")
    assert KEY not in repr(tr.to_dict())


@pytest.mark.parametrize("backend", BACKENDS)
def test_wrong_key_is_permanent_and_not_retried(backend):
    with ChatTestServer(expected_key="sk-some-other-key") as srv:
        client = ChatClient(deployment(backend, srv))
        with pytest.raises(CallFailed) as info:
            run(client)
        assert srv.counts["requests"] == 1 and srv.counts["401"] == 1
    assert "401" in str(info.value) and KEY not in str(info.value)
    assert info.value.trace.error and info.value.trace.raw_output is None


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fault,kind", [("p_429", "rate_limit"), ("p_500", "server"), ("p_hang", "timeout"),
                                        ("p_drop", "connection"), ("p_bad_json", "bad_response")])
def test_transient_faults_are_retried_and_traced(backend, fault, kind):
    faults = Faults(**{fault: 1.0}, hang_s=5.0, retry_after="7")
    with ChatTestServer(faults=faults) as srv:
        # a hang (5 s) is cut by a 1 s timeout; every other fault answers at once and gets 10 s, so a slow, loaded
        # machine cannot turn a 429 or a 500 into a timeout
        client = ChatClient(deployment(backend, srv, max_retries=2, timeout_s=1.0 if kind == "timeout" else 10.0))
        with pytest.raises(CallFailed) as info:
            run(client)
        # the SDKs' own retries are off: exactly 1 + max_retries requests reached the server
        assert srv.counts["requests"] == 3
    tr = info.value.trace
    assert tr.retries == 2 and [e.kind for e in tr.retry_events] == [kind] * 3
    assert "gave up after 3 attempts" in tr.error
    if kind == "rate_limit":
        assert all(e.retry_after == 7.0 for e in tr.retry_events)
        assert all(e.delay_s == pytest.approx(0.02) for e in tr.retry_events[:-1])  # Retry-After capped by max_backoff_s


@pytest.mark.parametrize("backend", BACKENDS)
def test_retry_then_success(backend):
    with ChatTestServer(faults=Faults(p_500=0.5, seed=3)) as srv:
        client = ChatClient(deployment(backend, srv, max_retries=20))
        tr = run(client)
        assert srv.counts["requests"] == tr.retries + 1 and srv.counts["500"] == tr.retries
    assert tr.raw_output and all(e.kind == "server" and e.status == 500 for e in tr.retry_events)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cache_hit_makes_no_request(backend, tmp_path):
    cache = str(tmp_path / "cache.sqlite")
    with ChatTestServer() as srv:
        first = run(ChatClient(deployment(backend, srv), cache=cache))
        second = run(ChatClient(deployment(backend, srv), cache=cache))
        third = run(ChatClient(deployment(backend, srv), cache=cache), sample_index=1)  # another sample: new key
        assert srv.counts["requests"] == 2
    assert not first.cache_hit and second.cache_hit and not third.cache_hit
    assert second.raw_output == first.raw_output and second.message_hash == first.message_hash
    assert third.message_hash != first.message_hash


@pytest.mark.parametrize("backend", BACKENDS)
def test_base_url_from_sdk_environment_variable(backend, monkeypatch):
    with ChatTestServer() as srv:
        var, url = ("OPENAI_BASE_URL", srv.openai_base_url) if backend == "openai" else ("ANTHROPIC_BASE_URL", srv.anthropic_base_url)
        monkeypatch.setenv(var, url)
        tr = run(ChatClient(deployment(backend, None)))
        assert srv.counts["requests"] == 1
    assert tr.raw_output


@pytest.mark.parametrize("backend", BACKENDS)
def test_missing_key_is_a_clear_error_before_any_request(backend, monkeypatch):
    monkeypatch.delenv("METAEVAL_CONTRACT_KEY")
    with ChatTestServer() as srv:
        with pytest.raises(ConfigError, match="METAEVAL_CONTRACT_KEY is not set"):
            ChatClient(deployment(backend, srv))
        assert srv.counts["requests"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrency_limit_is_respected(backend):
    with ChatTestServer(faults=Faults(latency_s=0.1)) as srv:
        client = ChatClient(deployment(backend, srv, concurrency=4))
        msgs = [[{"role": "user", "content": f"q{i}"}] for i in range(12)]

        async def go():
            import time

            t = time.perf_counter()
            await asyncio.gather(*(client.complete(m) for m in msgs))
            await client.aclose()
            return time.perf_counter() - t

        wall = asyncio.run(go())
        assert srv.counts["requests"] == 12
    assert wall >= 0.3  # 12 requests, 4 at a time, 0.1 s each: at least 3 rounds


def test_key_in_config_is_refused():
    with pytest.raises(ConfigError, match="api_key_env"):
        Deployment.from_dict({"backend": "openai", "model": "m", "api_key": "sk-x"})
    assert os.environ.get("METAEVAL_CONTRACT_KEY") == KEY


@pytest.mark.parametrize("params", [
    {"temperature": 0, "max_tokens": 64},
    {"temperature": 0.3, "max_tokens": 64, "seed": 7, "stop": ["\n\n"], "top_p": None, "top_k": 5,  # top_k: extra_body
     "response_format": {"type": "json_schema", "json_schema": {"name": "labels", "strict": True,
                                                                "schema": {"type": "object", "properties": {}}}}},
])
def test_openai_fast_path_sends_what_create_sends(monkeypatch, params):
    """The plain-JSON fast path (``client.post``) and ``chat.completions.create`` put the same JSON body on the
    wire, authenticate the same way and return the same reply (issue 15: per-call cost at the ceiling)."""
    from metaeval.judges.backends import openai_backend

    seen = {}
    with ChatTestServer(expected_key=KEY) as srv:
        for fast in ("1", "0"):
            monkeypatch.setenv("METAEVAL_OPENAI_FAST_PATH", fast)
            dep = Deployment.from_dict({**deployment("openai", srv).public_dict(), "api_key_env": "METAEVAL_CONTRACT_KEY",
                                        "params": params})
            client = ChatClient(dep)
            assert client.backend._fast is (fast == "1")
            seen[fast] = (run(client, sample_index=int(fast)), srv.recent[-1])
        assert srv.counts["ok"] == 2 and srv.counts["401"] == 0
    (fast_tr, fast_body), (slow_tr, slow_body) = seen["1"], seen["0"]
    assert fast_body == slow_body and fast_body.get("top_k") == params.get("top_k") and fast_body["messages"] == MSGS
    assert (fast_tr.raw_output, fast_tr.input_tokens, fast_tr.output_tokens, fast_tr.finish_reason) == \
        (slow_tr.raw_output, slow_tr.input_tokens, slow_tr.output_tokens, slow_tr.finish_reason)
    assert openai_backend.plain_json(params) and not openai_backend.plain_json({"stop": ("a",)})


def test_openai_non_plain_params_take_create(monkeypatch):
    """A value the SDK's transform may change (here a tuple) goes through ``create`` as before."""
    from openai.resources.chat.completions import completions

    transforms = []
    real = completions.async_maybe_transform

    async def spy(data, *a, **kw):
        transforms.append(1)
        return await real(data, *a, **kw)

    monkeypatch.setattr(completions, "async_maybe_transform", spy)
    with ChatTestServer(expected_key=KEY) as srv:
        dep = Deployment.from_dict({**deployment("openai", srv).public_dict(), "api_key_env": "METAEVAL_CONTRACT_KEY",
                                    "params": {"temperature": 0, "stop": ("END",)}})
        tr = run(ChatClient(dep))
        assert srv.counts["ok"] == 1 and srv.recent[-1]["stop"] == ["END"]
    assert tr.raw_output and len(transforms) == 1
