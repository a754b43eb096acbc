"""Soak (slow tier): 5,000 distinct assignment calls through ``LLMJudge`` / ``ChatClient`` against the test server
in its own process at 5 ms latency, concurrency 32, with the client process's RSS and open descriptors sampled every
second and at every 2% of the units (50 samples at least, on any machine).  The bounds and why they are what they are: ``benchmarks/soak.py`` (the script runs the full 20,000)."""

from __future__ import annotations

import pytest

from benchmarks.soak import FD_SLACK, RSS_FIXED_MB, RSS_PER_CALL_B, check_bounds, report, run_soak

N = 5000
pytestmark = pytest.mark.soak  # the heavy tier (tests/conftest.py)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_soak_memory_and_open_files_stay_bounded(tmp_path):
    r = run_soak(N, latency=0.005, concurrency=32, interval=1.0, workdir=str(tmp_path))
    print(report(r))
    # every unit answered once, exactly one request each, every reply cached
    assert r["statuses"] == {"ok": N} and r["server_requests"] == N and r["cache_rows"] == N
    assert r["client_stats"]["requests"] == N and r["client_stats"]["retries"] == 0
    assert r["samples_n"] >= 50, "too few samples to judge growth"  # one per 2% of the units, plus the timed ones
    assert r["rss_ok"], f"RSS grew {r['rss_growth_mb']:.1f} MB after warm-up (bound {r['rss_bound_mb']:.1f} MB)"
    assert r["fds_ok"], f"open files reached {r['fds_max']} (bound {r['fds_bound']})"
    # the cache grows linearly with distinct calls: a row is the reply plus usage, well under 2 KB
    assert 0 < r["cache_kb_per_1000_calls_checkpointed"] < 2000


def test_bounds_catch_a_leak():
    """The bound check itself: flat samples pass; a per-call leak of 2 KB, or one descriptor per 100 calls, fails."""
    n = 20000
    flat = [{"done": d, "rss_mb": 70.0 + (d % 3) * 0.5, "fds": 44} for d in range(0, n + 1, 500)]
    assert check_bounds(flat, n)["bounds_ok"]
    leak = [{**s, "rss_mb": 70.0 + s["done"] * 2048 / 2**20} for s in flat]
    res = check_bounds(leak, n)
    assert not res["rss_ok"] and res["fds_ok"]
    fd_leak = [{**s, "fds": 44 + s["done"] // 100} for s in flat]
    res = check_bounds(fd_leak, n)
    assert res["rss_ok"] and not res["fds_ok"]
    assert RSS_FIXED_MB + RSS_PER_CALL_B * 0.8 * n / 2**20 < 2048 * 0.8 * n / 2**20 and FD_SLACK < 0.8 * n / 100
