"""Soak: a long judging run compressed, with the client process's memory and open files sampled every second.

Workload: ``--requests`` (default 20,000) distinct assignment units (synthetic topic, a ~1,200-character answer and
10 nuggets each, about the size of a NIST window) through ``LLMJudge.assign`` -> ``ChatClient`` (SQLite cache in
WAL mode, limits, retries, parsing) against the wire-compatible test server in its own process at ``--latency``
(default 5 ms), ``--concurrency`` (default 32) units in flight.  Results are counted and dropped as they finish,
as a sweep does once it has stored them, so steady-state memory should be flat.  20,000 requests is about 30
minutes of a real deployment at 11 requests/s (~660 requests per minute).

Sampled every ``--interval`` seconds in a thread of the client process and at every 2% of the units (so the
sample count does not depend on the machine's speed): RSS (``VmRSS`` in /proc/self/status),
open file descriptors (entries of /proc/self/fd), completed units, and the cache's file sizes (db + -wal).

Bounds (checked by ``check_bounds``; the soak test and this script use the same function):

* **RSS growth** after warm-up (the first ``warmup`` share of the units, default 20%: imports, connection pool,
  SQLite page cache, allocator arenas) <= ``RSS_FIXED_MB`` (24 MB) + ``RSS_PER_CALL_B`` (256 bytes) x post-warm-up
  calls.  Why: everything the client keeps per call is bounded (counters, one limiter per loop, a pool of at most
  ``concurrency`` connections, SQLite's page cache of ~2 MB), so a correct client stays flat apart from allocator
  noise (a few MB).  A leak of one call's trace (messages hash, raw reply, params, usage: well over 1 KB) or of its
  rendered messages (~2 KB) would add 16-32+ MB over 16,000 calls and break the bound; 256 B/call leaves room
  for noise without hiding such a leak.
* **Open files** after warm-up <= the warm-up maximum + ``FD_SLACK`` (8): connections are pooled and reused,
  the cache holds 3 descriptors (db, -wal, -shm); a leak of one socket or file per call would add thousands.

Printed: requests, wall time, throughput, RSS (start of steady state, max, growth), descriptors, the cache size
per 1,000 calls (db + WAL as written, and the db alone after a WAL checkpoint), and PASS/FAIL per bound.

    .venv/bin/python -m benchmarks.soak [--requests 20000] [--latency 0.005] [--concurrency 32] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

RSS_FIXED_MB = 24.0
RSS_PER_CALL_B = 256.0
FD_SLACK = 8

_WORDS = ("solar wind ocean river market policy health energy carbon battery grid storage water farm city tax "
          "school vaccine climate trade rail port coal steel rice wheat price labour bank loan court law").split()


def unit(i: int) -> tuple[Any, Any, list[str]]:
    """Unit ``i``: a distinct topic, answer (~1,200 characters) and 10 nuggets, deterministic in ``i``."""
    from metaeval.types import Answer, Topic

    h = hashlib.sha256(str(i).encode()).digest()
    words = [_WORDS[(b + k) % len(_WORDS)] for k, b in enumerate(h)]
    qid = f"soak-{i // 50}"
    topic = Topic(qid, f"how does {words[0]} affect {words[1]} in case {i}?")
    sentences = [f"Sentence {k} of answer {i}: the {words[k % 32]} and {words[(k + 3) % 32]} of {words[(k + 7) % 32]} "
                 f"changed by {h[k % 32]} percent." for k in range(14)]
    answer = Answer(f"run-{i % 45}", qid, " ".join(sentences))
    nuggets = [f"The {words[k]} of {words[k + 10]} changed ({i}.{k})" for k in range(10)]
    return topic, answer, nuggets


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def cache_bytes(path: Path) -> tuple[int, int]:
    """(db bytes, -wal bytes) of the SQLite cache."""
    db = path.stat().st_size if path.exists() else 0
    wal = Path(str(path) + "-wal")
    return db, (wal.stat().st_size if wal.exists() else 0)


class Sampler(threading.Thread):
    def __init__(self, interval: float, progress: list[int], cache: Path):
        super().__init__(daemon=True, name="soak-sampler")
        self.interval, self.progress, self.cache = interval, progress, cache
        self.samples: list[dict[str, float]] = []
        self._stop_evt = threading.Event()
        self.t0 = time.perf_counter()

    def sample(self) -> None:
        db, wal = cache_bytes(self.cache)
        self.samples.append({"t": time.perf_counter() - self.t0, "done": self.progress[0], "rss_mb": rss_mb(),
                             "fds": open_fds(), "cache_db": db, "cache_wal": wal})

    def run(self) -> None:
        while not self._stop_evt.wait(self.interval):
            self.sample()

    def stop(self) -> None:
        self._stop_evt.set()
        self.join(5)
        self.sample()


async def _drive(judge: Any, n: int, concurrency: int, progress: list[int], statuses: dict[str, int],
                 on_milestone: Any = None, every: int = 0) -> None:
    nxt = iter(range(n))

    async def worker() -> None:
        for i in nxt:  # a shared iterator: each unit is taken exactly once
            topic, answer, nuggets = unit(i)
            res = await judge.assign(topic, answer, nuggets)
            statuses[res.status] = statuses.get(res.status, 0) + 1
            progress[0] += 1
            if on_milestone is not None and every and progress[0] % every == 0:
                on_milestone()  # a sample every n/50 units: the sample count does not depend on the machine's speed
            del res  # counted and dropped, as a sweep drops a result once it is stored

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def run_soak(n_requests: int = 20000, latency: float = 0.005, concurrency: int = 32, interval: float = 1.0,
             warmup: float = 0.2, workdir: str | None = None) -> dict[str, Any]:
    """Run the soak (see module docstring) and return its figures, samples and bound checks."""
    from benchmarks.bench_client import start_server
    from metaeval.judges import make_judge

    os.environ.setdefault("METAEVAL_SOAK_KEY", "sk-soak")
    with tempfile.TemporaryDirectory(prefix="metaeval-soak-", dir=workdir) as tmp:
        cache = Path(tmp) / "responses.sqlite"
        proc, url = start_server(latency)
        try:
            judge = make_judge({"judge": "llm", "cache": str(cache), "max_reasks": 0, "deployment": {
                "name": "soak", "backend": "openai", "model": "test-model", "base_url": url + "/v1",
                "api_key_env": "METAEVAL_SOAK_KEY", "params": {"temperature": 0},
                "limits": {"concurrency": concurrency, "timeout_s": 30, "max_retries": 3, "backoff_base_s": 0.05,
                           "max_backoff_s": 1.0}}})
            progress, statuses = [0], {}
            sampler = Sampler(interval, progress, cache)
            sampler.sample()
            sampler.start()
            t0 = time.perf_counter()

            async def go() -> None:
                try:
                    await _drive(judge, n_requests, concurrency, progress, statuses, sampler.sample,
                                 max(1, n_requests // 50))
                finally:
                    await judge.aclose()

            asyncio.run(go())
            wall = time.perf_counter() - t0
            sampler.stop()
            stats = judge.client.stats.to_dict()
            db, wal = cache_bytes(cache)  # as written, before the last connection closes (which checkpoints)
            if judge.client.cache is not None:
                judge.client.cache.close()
            con = sqlite3.connect(cache)
            rows = con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            con.close()
            db_ckpt, _ = cache_bytes(cache)
            import urllib.request

            server_counts = json.loads(urllib.request.urlopen(url + "/health", timeout=5).read())["counts"]
        finally:
            proc.terminate()
            proc.wait(10)
    samples = sampler.samples
    result = {
        "requests": n_requests, "latency_s": latency, "concurrency": concurrency, "wall_s": wall,
        "throughput_per_s": n_requests / wall, "statuses": statuses, "client_stats": stats,
        "server_requests": server_counts.get("requests", 0), "cache_rows": rows,
        "cache_db_bytes": db, "cache_wal_bytes": wal, "cache_db_after_checkpoint_bytes": db_ckpt,
        "cache_kb_per_1000_calls": (db + wal) / n_requests * 1000 / 1024,
        "cache_kb_per_1000_calls_checkpointed": db_ckpt / n_requests * 1000 / 1024,
        "samples": samples,
    }
    result.update(check_bounds(samples, n_requests, warmup))
    return result


def check_bounds(samples: list[dict[str, float]], n_requests: int, warmup: float = 0.2) -> dict[str, Any]:
    """RSS and descriptor growth after warm-up against the stated bounds (module docstring)."""
    cut = warmup * n_requests
    pre = [s for s in samples if s["done"] < cut]
    post = [s for s in samples if s["done"] >= cut]
    if not post or not pre:
        return {"bounds_ok": False, "bounds_note": f"too few samples around the warm-up cut ({len(pre)} before, {len(post)} after)"}
    rss_base = post[0]["rss_mb"]
    rss_max = max(s["rss_mb"] for s in post)
    growth = rss_max - rss_base
    calls_after = n_requests - post[0]["done"]
    rss_bound = RSS_FIXED_MB + RSS_PER_CALL_B * calls_after / 2**20
    fd_warm = max(s["fds"] for s in pre + post[:1])
    fd_max = max(s["fds"] for s in post)
    fd_bound = fd_warm + FD_SLACK
    return {
        "rss_start_mb": samples[0]["rss_mb"], "rss_steady_base_mb": rss_base, "rss_max_mb": rss_max,
        "rss_growth_mb": growth, "rss_bound_mb": rss_bound, "rss_ok": growth <= rss_bound,
        "rss_growth_b_per_call": growth * 2**20 / calls_after if calls_after else 0.0,
        "fds_warmup_max": fd_warm, "fds_max": fd_max, "fds_bound": fd_bound, "fds_ok": fd_max <= fd_bound,
        "bounds_ok": growth <= rss_bound and fd_max <= fd_bound, "samples_n": len(samples),
    }


def report(r: dict[str, Any]) -> str:
    lines = [
        f"soak: {r['requests']} requests, latency {r['latency_s'] * 1000:.0f} ms, concurrency {r['concurrency']}: "
        f"{r['wall_s']:.1f} s, {r['throughput_per_s']:.0f} requests/s; unit statuses {r['statuses']}; "
        f"server saw {r['server_requests']} requests; {r['samples_n']} samples",
        f"RSS: {r['rss_start_mb']:.0f} MB at start, {r['rss_steady_base_mb']:.1f} MB after warm-up, max "
        f"{r['rss_max_mb']:.1f} MB after it: growth {r['rss_growth_mb']:+.1f} MB "
        f"({r['rss_growth_b_per_call']:.0f} B/call); bound {r['rss_bound_mb']:.1f} MB "
        f"({RSS_FIXED_MB:.0f} MB + {RSS_PER_CALL_B:.0f} B/call): {'PASS' if r['rss_ok'] else 'FAIL'}",
        f"open files: max {r['fds_warmup_max']} during warm-up, max {r['fds_max']} after; bound {r['fds_bound']} "
        f"(+{FD_SLACK}): {'PASS' if r['fds_ok'] else 'FAIL'}",
        f"cache: {r['cache_rows']} rows; db {r['cache_db_bytes'] / 2**20:.2f} MB + WAL {r['cache_wal_bytes'] / 2**20:.2f} MB "
        f"= {r['cache_kb_per_1000_calls']:.0f} KB per 1,000 calls as written; "
        f"{r['cache_kb_per_1000_calls_checkpointed']:.0f} KB per 1,000 calls after a WAL checkpoint",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--latency", type=float, default=0.005)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--json", default=None, help="also write figures and samples to this JSON file")
    args = ap.parse_args(argv)
    r = run_soak(args.requests, args.latency, args.concurrency, args.interval)
    print(report(r))
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2))
    return 0 if r["bounds_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
