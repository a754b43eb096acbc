"""Servers that break HTTP itself, and two sweeps sharing one cache (issue 33 rows 6, 11, 12, 15):

* slowloris (a 200 whose body drips one byte every 0.5 s): the call fails within its wall-clock deadline
  (``timeout_s`` per attempt), where the per-read timeout let one call last 131 s;
* a gzip bomb (~200 KB expanding to 200 MB): the call fails permanently while reading, peak RSS bounded;
* negative usage from a server: counted 0, never summed into tokens or cost;
* two sweeps of different names on one response cache at once: the server sees each distinct request once.

The two limit cases run in a fresh interpreter each (``tests/faults/limit_probe.py``), so the peak RSS measured is
that one call's.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metaeval.testing.server import ChatTestServer
from tests.faults.faultkit import RecordingServer, SERIAL, limits, sweep_cmd

ROOT = Path(__file__).resolve().parents[2]


def _probe(mode: str) -> dict:
    res = subprocess.run([sys.executable, "-m", "tests.faults.limit_probe", mode], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_slowloris_is_bounded_by_the_request_deadline():
    out = _probe("slowloris")  # timeout_s=2, max_retries=1: two attempts of at most 2 s each
    assert out["outcome"].startswith("failed") and "deadline" in out["outcome"], out
    assert out["wall_s"] < 15, out  # the call (SDK imports before the clock): 2 x 2 s; the per-read timeout: 131 s


def test_gzip_bomb_is_stopped_while_reading():
    out = _probe("gzip_bomb")
    assert "expands past" in out["outcome"] and "permanent" in out["outcome"], out
    assert out["peak_rss_mib"] < 400, out  # 671 MiB before with a 200 MB bomb (and it grows with the bomb)
    assert out["server_requests"] == 1, out  # not retried: the same bomb would come again


class NegativeUsage(ChatTestServer):
    def openai_reply(self, body, text):
        reply = super().openai_reply(body, text)
        reply["usage"] = {"prompt_tokens": -100_000_000, "completion_tokens": -5, "total_tokens": -100_000_005}
        return reply


def test_negative_usage_is_not_summed():
    from metaeval.judges.client import ChatClient

    with NegativeUsage() as srv:
        client = ChatClient({"name": "neg", "backend": "openai", "model": "test-model", "base_url": srv.openai_base_url,
                             "api_key_env": None, "prices": {"input_per_1m": 25.0, "output_per_1m": 10.0},
                             "limits": {"max_retries": 0, "timeout_s": 10}})

        async def go():
            try:
                return await client.complete([{"role": "user", "content": "hi"}])
            finally:
                await client.aclose()

        tr = asyncio.run(go())
    assert (tr.input_tokens, tr.output_tokens, tr.cost_usd) == (0, 0, 0.0)
    assert client.stats.input_tokens == 0 and client.stats.cost_usd == 0.0


def test_two_sweeps_on_one_cache_send_each_request_once(tmp_path):
    """Two sweeps with different names at once on one cache file: the server sees each distinct request once
    (101 requests for 63 distinct prompts before the lease, in the issue's run 126)."""
    from metaeval.testing.server import Faults

    with RecordingServer(faults=Faults(latency_s=0.2)) as srv:  # slow enough that both sweeps overlap
        cache = tmp_path / "shared.sqlite"
        procs = [subprocess.Popen(sweep_cmd(tmp_path / "results", name, srv.openai_base_url, *SERIAL,
                                            *limits(concurrency=8, max_retries=1), f"cache.path={cache}"),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in ("A", "B")]
        outs = [p.communicate(timeout=500) for p in procs]
        for p, (so, se) in zip(procs, outs):
            assert p.returncode == 0, se[-3000:]
        distinct = {e["sha"] for e in srv.log}
        with sqlite3.connect(cache) as c:
            stored = c.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            leases = c.execute("SELECT COUNT(*) FROM leases").fetchone()[0]
        assert len(srv.log) == len(distinct) == stored, (len(srv.log), len(distinct), stored)
        assert leases == 0  # every lease ended
    a = (tmp_path / "results" / "A" / "cells").glob("*/labels.jsonl")
    b = (tmp_path / "results" / "B" / "cells").glob("*/labels.jsonl")
    assert [p.read_bytes() for p in sorted(a)] == [p.read_bytes() for p in sorted(b)]
