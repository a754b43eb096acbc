"""Identical requests in flight at the same time go out once (with a cache); the others read the reply."""

from __future__ import annotations

import asyncio

from metaeval.judges.client import ChatClient
from metaeval.testing.server import ChatTestServer, Faults


def test_identical_concurrent_requests_are_sent_once(tmp_path):
    with ChatTestServer(faults=Faults(latency_s=0.2)) as srv:
        dep = {"name": "t", "backend": "openai", "model": "m", "base_url": srv.openai_base_url, "api_key_env": None}

        async def go():
            client = ChatClient(dep, cache=str(tmp_path / "c.sqlite"))
            same = [{"role": "user", "content": "say hello"}]
            other = [{"role": "user", "content": "say goodbye"}]
            traces = await asyncio.gather(*(client.complete(same) for _ in range(5)), client.complete(other))
            return client, traces

        client, traces = asyncio.run(go())
        assert srv.counts["requests"] == 2
    same = traces[:5]
    assert sum(not t.cache_hit for t in same) == 1 and len({t.raw_output for t in same}) == 1
    assert client.stats.calls == 6 and client.stats.cache_hits == 4 and client.stats.requests == 2


def test_without_cache_every_request_is_sent():
    with ChatTestServer() as srv:
        dep = {"name": "t", "backend": "openai", "model": "m", "base_url": srv.openai_base_url, "api_key_env": None}

        async def go():
            client = ChatClient(dep)
            await asyncio.gather(*(client.complete([{"role": "user", "content": "x"}]) for _ in range(3)))

        asyncio.run(go())
        assert srv.counts["requests"] == 3
