"""Benchmark: ``metaeval sweep`` (human_auto over the NIST 21x45 answers) vs a bare SDK baseline, side by side.

Workload: 927 answers, 1,721 assignment calls (NIST nuggets in windows of 10), against the wire-compatible test
server in its own process at ``--latency`` (default 100 ms), concurrency 32.  Per repetition, alternating:

* baseline: ``openai.AsyncOpenAI`` under an ``asyncio.Semaphore(32)`` (``benchmarks.bench_client.run_baseline``);
* serial: the sweep's judging phase with ``runtime=serial`` (asyncio in the driver), fresh results folder and cache;
* ray: the same with ``runtime=ray_local`` (one async actor for the deployment, ``max_concurrency`` 32); Ray's
  start-up is timed once, separately, before the repetitions.

The sweep figure is the judging phase (``summary["judging_s"]``: job building, dispatch, the results store and the
label sets), without scoring/analysis.  Printed: medians of each, the ratios serial/baseline (target <= 1.10) and
ray/baseline (target <= 1.20), the ideal (calls x latency / concurrency), Ray start-up, and peak RSS of the driver.

    .venv/bin/python -m benchmarks.bench_sweep [--latency 0.1] [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time

from benchmarks.bench_client import run_baseline, start_server, units


def sweep_once(url: str, runtime: str, root: str, concurrency: int) -> tuple[float, int]:
    from metaeval.paths import shared_data_dir
    from metaeval.workflow.compose import compose_sweep
    from metaeval.pipeline.sweep import open_sweep

    nist = shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl"
    config, cells = compose_sweep([
        "grid=single", "judge=testserver", "strategy=human_auto", f"runtime={runtime}", f"dataset.source={nist}",
        f"judge.deployment.base_url={url}/v1", f"judge.deployment.limits.concurrency={concurrency}",
        f"results_dir={root}", "name=bench", "calibration.enabled=false", "analysis.bootstrap=0",
        "sweep.progress=false",
    ])
    sw = open_sweep(config.pipeline, cells)
    out = sw.run()  # the pipeline stops at label sets: this times the judging phase only
    calls = sum(s.judge_calls for s in sw.stats.values())  # units; a few are cache hits (identical prompts)
    return out.judging_s, calls


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    work = units()
    n_calls = len(work)
    ideal = n_calls * args.latency / args.concurrency
    proc, url = start_server(args.latency)
    try:
        from metaeval.pipeline.ray_setup import init_ray

        t = time.perf_counter()
        init_ray(num_cpus=2)
        ray_start = time.perf_counter() - t
        asyncio.run(run_baseline(url, work[:64], args.concurrency))  # warm-up
        times: dict[str, list[float]] = {"baseline": [], "serial": [], "ray": []}
        for _ in range(args.reps):
            times["baseline"].append(asyncio.run(run_baseline(url, work, args.concurrency)))
            for runtime, key in (("serial", "serial"), ("ray_local", "ray")):
                with tempfile.TemporaryDirectory() as root:
                    wall, calls = sweep_once(url, runtime, root, args.concurrency)
                    assert calls == n_calls, (calls, n_calls)
                    times[key].append(wall)
    finally:
        proc.kill()
    med = {k: statistics.median(v) for k, v in times.items()}
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"calls {n_calls}, latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, reps {args.reps} (medians)")
    print(f"{'':<22} {'wall (s)':>9} {'vs baseline':>12} {'share of ideal':>15}")
    print(f"{'ideal':<22} {ideal:9.2f} {'':>12} {'100%':>15}")
    for k, label in (("baseline", "bare AsyncOpenAI"), ("serial", "sweep, serial"), ("ray", "sweep, ray_local")):
        print(f"{label:<22} {med[k]:9.2f} {med[k] / med['baseline']:12.3f} {ideal / med[k] * 100:14.0f}%")
    print(f"Ray start-up (once): {ray_start:.2f} s; driver peak RSS: {rss_mb:.0f} MB")
    ok_serial, ok_ray = med["serial"] / med["baseline"] <= 1.10, med["ray"] / med["baseline"] <= 1.20
    print(f"targets: serial <= 1.10x baseline: {'PASS' if ok_serial else 'FAIL'}; ray <= 1.20x baseline: {'PASS' if ok_ray else 'FAIL'}")
    if args.json:
        print(json.dumps({"times": times, "medians": med, "ideal_s": ideal, "ray_start_s": ray_start, "peak_rss_mb": rss_mb,
                          "calls": n_calls, "latency_s": args.latency, "concurrency": args.concurrency}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
