"""Benchmark: metaeval's judge client vs a bare SDK baseline, side by side, against the test server.

Workload: the 1,721 assignment calls of the NIST TREC 2024 RAG 21x45 export (927 answers, nuggets in windows of
10), prompt ``assign@v1``.  The test server runs in its own process (``python -m metaeval.testing.server``) with
a fixed latency (default 200 ms), so client and server do not share an event loop.

* baseline: ``openai.AsyncOpenAI`` (max_retries=0) under an ``asyncio.Semaphore(32)``; the same rendered messages;
  no cache, no parsing.
* metaeval: ``LLMJudge.assign`` through ``ChatClient`` (concurrency 32, fresh SQLite cache per repetition, so every
  call is a miss that is written), parsing and result objects included.

Printed: wall time of each (median over ``--reps`` alternating repetitions), the ratio metaeval / baseline
(target <= 1.10), the ideal ``calls x latency / concurrency``, and the per-call client overhead
``(wall_metaeval - wall_baseline) x concurrency / calls`` in ms (the extra time each call holds a slot).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_client.py [--latency 0.2] [--concurrency 32] [--reps 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "metaeval.testing.server", "--port", str(port), "--latency", str(latency)],
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(url + "/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("test server did not start")


def units():
    from metaeval.io.assignments import read_assignments
    from metaeval.paths import shared_data_dir
    from metaeval.types import Answer, Topic

    labels = read_assignments(shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl", name="nist")
    texts = {(r.qid, r.run_id): r.answer_text for r in labels.answers.itertuples()}
    out = []
    for (qid, run), grp in labels.labels.groupby(["qid", "run_id"], sort=True, observed=True):
        nug = grp.sort_values("nugget_id")["nugget"].tolist()
        for s in range(0, len(nug), 10):
            out.append((Topic(qid, labels.topics[qid]), Answer(run, qid, texts[(qid, run)]), nug[s:s + 10]))
    return out


async def run_baseline(url: str, work, concurrency: int) -> float:
    from openai import AsyncOpenAI

    from metaeval.prompts import load_template
    from metaeval.prompts.templates_io import assign_values

    tmpl = load_template("assign@v1")
    payloads = [tmpl.render(**assign_values(t.text, a.text, n)) for t, a, n in work]  # rendering is not timed
    client = AsyncOpenAI(api_key="sk-bench", base_url=url + "/v1", max_retries=0, timeout=60)
    sem = asyncio.Semaphore(concurrency)

    async def one(msgs):
        async with sem:
            r = await client.chat.completions.create(model="test-model", messages=msgs, temperature=0)
            return r.choices[0].message.content

    t = time.perf_counter()
    replies = await asyncio.gather(*(one(m) for m in payloads))
    wall = time.perf_counter() - t
    await client.close()
    assert len(replies) == len(work) and all(replies)
    return wall


async def run_metaeval(url: str, work, concurrency: int, cache_path: str) -> tuple[float, dict]:
    from metaeval.judges import make_judge

    os.environ["METAEVAL_BENCH_KEY"] = "sk-bench"
    judge = make_judge({"judge": "llm", "cache": cache_path, "deployment": {
        "name": "bench", "backend": "openai", "model": "test-model", "base_url": url + "/v1",
        "api_key_env": "METAEVAL_BENCH_KEY", "params": {"temperature": 0},
        "limits": {"concurrency": concurrency, "timeout_s": 60, "max_retries": 2}}})
    t = time.perf_counter()
    results = await asyncio.gather(*(judge.assign(tp, a, n) for tp, a, n in work))
    wall = time.perf_counter() - t
    await judge.aclose()
    assert len(results) == len(work) and all(r.status == "ok" for r in results)
    lat = statistics.mean(tr.latency_s for r in results for tr in r.traces)
    return wall, {**judge.client.stats.to_dict(), "mean_call_latency_s": lat}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    work = units()
    proc, url = start_server(args.latency)
    base, me, stats = [], [], {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # warm-up both sides (imports, first connections), not timed
            asyncio.run(run_baseline(url, work[:64], args.concurrency))
            asyncio.run(run_metaeval(url, work[:64], args.concurrency, f"{tmp}/warmup.sqlite"))
            for rep in range(args.reps):
                base.append(asyncio.run(run_baseline(url, work, args.concurrency)))
                wall, stats = asyncio.run(run_metaeval(url, work, args.concurrency, f"{tmp}/cache{rep}.sqlite"))
                me.append(wall)
                print(f"rep {rep + 1}: baseline {base[-1]:.2f} s   metaeval {me[-1]:.2f} s", flush=True)
    finally:
        proc.terminate()
        proc.wait(10)
    b, m = statistics.median(base), statistics.median(me)
    ideal = len(work) * args.latency / args.concurrency
    fig = {
        "calls": len(work), "latency_s": args.latency, "concurrency": args.concurrency, "reps": args.reps,
        "baseline_wall_s": round(b, 3), "metaeval_wall_s": round(m, 3), "ratio": round(m / b, 3),
        "ideal_s": round(ideal, 3), "baseline_vs_ideal": round(ideal / b, 3), "metaeval_vs_ideal": round(ideal / m, 3),
        "overhead_ms_per_call": round((m - b) * args.concurrency / len(work) * 1000, 2),
        "metaeval_mean_call_latency_ms": round(stats.get("mean_call_latency_s", 0) * 1000, 1),
        "requests": stats.get("requests"), "cache_hits": stats.get("cache_hits"),
    }
    print(f"calls {fig['calls']}  latency {args.latency * 1000:.0f} ms  concurrency {args.concurrency}  reps {args.reps}")
    print(f"ideal (calls x latency / concurrency): {ideal:.2f} s")
    print(f"baseline (AsyncOpenAI + semaphore):   {b:.2f} s  ({fig['baseline_vs_ideal']:.0%} of ideal)")
    print(f"metaeval (cache+limits+retry+parse):  {m:.2f} s  ({fig['metaeval_vs_ideal']:.0%} of ideal)")
    print(f"ratio metaeval / baseline:            {fig['ratio']:.3f}  (target <= 1.10)")
    print(f"per-call client overhead:             {fig['overhead_ms_per_call']:.2f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
