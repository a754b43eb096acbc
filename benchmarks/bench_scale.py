"""Benchmark at the ceiling: bare SDK vs metaeval (serial, Ray local, two-node Ray cluster) at 32/64/128 in flight.

Workload: the NIST TREC 2024 RAG human_auto assignment (927 answers, 1,721 calls in windows of 10 nuggets)
against the wire-compatible test server in its own process at ``--latency`` (default 200 ms); ``--server fake_openai``
uses instead the independent harness's server (``../shared/bench/fake_openai.py``: a stdlib ``ThreadingHTTPServer``, a
thread per connection, that also writes its request count to a file on every request), so that this benchmark's
rows and that harness's figures come from the same server.  Every measurement
is its own Python process, so each row has two figures:

* ``judging`` - inside the process: the bare script's ``asyncio.gather`` under a semaphore, or the sweep's
  judging phase (``Sweep.run().judging_s``: job building, dispatch, results store, label sets).  Ray's own
  start-up (``init_ray``: a local runtime, or joining the cluster) is timed apart and NOT included, nor is the
  ``openai`` import (the bare script imports it before its timer starts too);
* ``process`` - the whole process, from ``exec`` to exit (imports, dataset, Ray start, judging, shutdown).

Runtimes: ``baseline`` (``openai.AsyncOpenAI`` + ``asyncio.Semaphore(C)``), ``serial``, ``ray_local`` (the default
``replicas: auto``: one async actor per 32 in flight up to the CPUs, so one at 32 and two on a 2-core machine at
64-128, where one client process is CPU-bound against a 200 ms server), ``ray_local_1`` (``deployment.replicas=1``:
one actor, ``max_concurrency`` C), ``cluster`` (a two-node loopback cluster started here, ``metaeval.testing.cluster``:
two replicas pinned one per node, C split between them; its start-up is reported once; ``cluster`` ships the
driver's package to the nodes (``runtime_env`` ``py_modules``, the default), ``cluster_installed`` uses the copy
installed on the nodes, ``runtime.ship_package=false``).  Ratios are against the
baseline at the same concurrency, one run each unless ``--reps``.  Timing figures are only meaningful on an
otherwise idle machine.

    .venv/bin/python -m benchmarks.bench_scale [--latency 0.2] [--concurrency 32,64,128]
        [--runtimes baseline,serial,ray_local,cluster] [--reps 1] [--limit N] [--json] [--server test|fake_openai]

``--limit N`` uses the first N answers' lines of the NIST file (a smoke run).  ``--zero-cost COPIES`` measures the
per-job overhead instead, no model call, on COPIES x the NIST answers (16 -> 14,832 jobs): the simulated judge
(Figure 6 confusion: a seeded draw per label, ~14 per job, is the judge's own cost) and the same judge with an
identity confusion (the reference labels, no draw: metaeval's own per-job cost), ``serial`` and ``ray_local``:
judging time / jobs, and the driver's peak RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIMES = ("baseline", "serial", "ray_local", "ray_local_1", "cluster", "cluster_installed")
CLUSTERS = ("cluster", "cluster_installed")


def nist_copies(copies: int, tmp: Path) -> Path:
    """The NIST file repeated ``copies`` times, each copy's topics under new ids (``<qid>-c<k>``)."""
    from metaeval.paths import shared_data_dir

    lines = (shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl").read_text(encoding="utf-8").splitlines()
    out = tmp / f"nist-x{copies}.jl"
    with open(out, "w", encoding="utf-8") as dst:
        for k in range(copies):
            for line in lines:
                rec = json.loads(line)
                rec["qid"] = f"{rec['qid']}-c{k}"
                dst.write(json.dumps(rec) + "\n")
    return out


def nist_source(limit: int | None, tmp: Path) -> Path:
    from metaeval.paths import shared_data_dir

    nist = shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl"
    if not limit:
        return nist
    part = tmp / "nist-part.jl"
    with open(nist, encoding="utf-8") as src, open(part, "w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i >= limit:
                break
            dst.write(line)
    return part


def start_fake_openai(latency: float, tmp: Path) -> tuple[subprocess.Popen, str]:
    """The independent harness's server (``<shared>/bench/fake_openai.py``), started as that harness starts it."""
    from metaeval.paths import shared_data_dir

    script = shared_data_dir().parent / "bench" / "fake_openai.py"
    if not script.is_file():
        raise SystemExit(f"--server fake_openai: {script} not found (the shared bench harness)")
    port_file = tmp / "fake_openai.port"
    proc = subprocess.Popen([sys.executable, str(script), str(port_file), "auto", str(latency)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    for _ in range(100):
        if port_file.is_file() and port_file.read_text().strip():
            return proc, f"http://127.0.0.1:{port_file.read_text().strip()}"
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("fake_openai.py did not start")


# ---------------------------------------------------------------------------- one measurement (child process)
def one_baseline(url: str, source: Path, conc: int) -> dict:
    from benchmarks.bench_client import run_baseline
    from metaeval.io.assignments import read_assignments
    from metaeval.types import Answer, Topic

    labels = read_assignments(source, name="nist")
    texts = {(r.qid, r.run_id): r.answer_text for r in labels.answers.itertuples()}
    work = []
    for (qid, run), grp in labels.labels.groupby(["qid", "run_id"], sort=True, observed=True):
        nug = grp.sort_values("nugget_id")["nugget"].tolist()
        for s in range(0, len(nug), 10):
            work.append((Topic(qid, labels.topics[qid]), Answer(run, qid, texts[(qid, run)]), nug[s:s + 10]))
    return {"judging_s": asyncio.run(run_baseline(url, work, conc)), "calls": len(work)}


#: ``--zero-cost`` judges: the Figure 6 simulated judge (one seeded draw per label: the judge's own cost) and the
#: same judge with an identity confusion (the reference labels replayed, no draw: what is left is metaeval's)
ZERO_COST_JUDGES = {"simulated": ["judge=simulated_fig6"],
                    "identity": ["judge=simulated_fig6", "judge.confusion=[[1,0,0],[0,1,0],[0,0,1]]"]}


def one_sweep(url: str, source: Path, conc: int, runtime: str, address: str | None, root: str,
              zero_cost: str = "") -> dict:
    from metaeval.workflow.compose import compose_sweep
    from metaeval.pipeline.sweep import open_sweep

    judge = ([*ZERO_COST_JUDGES[zero_cost], f"judge.concurrency={conc}"] if zero_cost else
             ["judge=testserver", f"judge.deployment.base_url={url}/v1", f"judge.deployment.limits.concurrency={conc}"])
    overrides = ["grid=single", *judge, "strategy=human_auto", f"dataset.source={source}",
                 "dataset=trec-rag-2024", f"results_dir={root}", "name=bench",
                 "calibration.enabled=false", "analysis.bootstrap=0", "sweep.progress=false",
                 {"cluster": "runtime=ray_cluster", "cluster_installed": "runtime=ray_cluster",
                  "ray_local_1": "runtime=ray_local"}.get(runtime, f"runtime={runtime}")]
    if runtime == "ray_local_1":  # one actor whatever the concurrency (replicas: auto gives more at 64+)
        overrides += ["+judge.deployment.replicas=1"]
    if runtime in CLUSTERS:
        overrides += [f"runtime.address={address}", "+judge.deployment.resources=[{head_node:0.001},{worker_node:0.001}]"]
    if runtime == "cluster_installed":
        overrides += ["runtime.ship_package=false"]
    config, cells = compose_sweep(overrides)
    importlib.import_module("openai")  # the SDK import is outside both judging figures (the bare script's too)

    ray_start = 0.0
    if runtime != "serial":
        from metaeval.pipeline.ray_setup import cluster_runtime_env, init_ray

        t = time.perf_counter()
        rt = config.pipeline.runtime
        init_ray(rt.address, rt.num_cpus, cluster_runtime_env(rt.ship_package) if rt.address else None)
        ray_start = time.perf_counter() - t
    sweep = open_sweep(config.pipeline, cells)
    out = sweep.run()
    judging = out.judging_s if hasattr(out, "judging_s") else out["judging_s"]
    import resource

    jobs = sum(st.executed for st in sweep.stats.values())
    return {"judging_s": judging, "ray_start_s": ray_start, "actor_start_s": sweep.actor_start_s,
            "actors": sweep.actors, "jobs": jobs,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def child(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", choices=RUNTIMES, required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--conc", type=int, required=True)
    ap.add_argument("--address", default=None)
    ap.add_argument("--zero-cost", choices=sorted(ZERO_COST_JUDGES), default="")
    a = ap.parse_args(argv)
    if a.one == "baseline":
        res = one_baseline(a.url, Path(a.source), a.conc)
    else:
        with tempfile.TemporaryDirectory() as root:
            res = one_sweep(a.url, Path(a.source), a.conc, a.one, a.address, root, a.zero_cost)
    print("RESULT " + json.dumps(res), flush=True)
    return 0


# ---------------------------------------------------------------------------- the table (parent process)
def measure(runtime: str, url: str, source: Path, conc: int, address: str | None, env: dict,
            zero_cost: str = "") -> dict:
    cmd = [sys.executable, "-m", "benchmarks.bench_scale", "--one", runtime, "--url", url, "--source", str(source),
           "--conc", str(conc)] + (["--address", address] if address else []) + (["--zero-cost", zero_cost] if zero_cost else [])
    t = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"{runtime} at {conc}: exit {res.returncode}\n{res.stderr[-3000:]}")
    line = [x for x in res.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return {**json.loads(line[7:]), "process_s": wall}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--one" in argv:
        return child(argv)
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", default="32,64,128")
    ap.add_argument("--runtimes", default=",".join(RUNTIMES))
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--server", choices=("test", "fake_openai"), default="test",
                    help="the project's test server (default) or the independent harness's fake_openai.py")
    ap.add_argument("--zero-cost", type=int, default=0, metavar="COPIES",
                    help="instead: per-job overhead with the simulated judge (no calls) on COPIES x the NIST file, "
                         "serial and ray_local")
    args = ap.parse_args(argv)
    if args.zero_cost:
        return zero_cost(args.zero_cost, args.json, args.reps)
    runtimes = [r for r in args.runtimes.split(",") if r]
    bad = sorted(set(runtimes) - set(RUNTIMES))
    if bad:
        raise SystemExit(f"unknown runtime(s) {bad}; choose from {RUNTIMES}")
    concs = [int(c) for c in args.concurrency.split(",")]
    from benchmarks.bench_client import start_server

    tmp = Path(tempfile.mkdtemp(prefix="bench_scale_"))
    source = nist_source(args.limit, tmp)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    cluster, cluster_start = None, None
    proc, url = start_server(args.latency) if args.server == "test" else start_fake_openai(args.latency, tmp)
    rows: dict[tuple[str, int], list[dict]] = {}
    try:
        if set(CLUSTERS) & set(runtimes):
            from metaeval.testing.cluster import LoopbackCluster

            t = time.perf_counter()
            cluster = LoopbackCluster(tmp).start()
            cluster_start = time.perf_counter() - t
            env = {**cluster.env, "PYTHONPATH": env["PYTHONPATH"]}
        for conc in concs:
            for _ in range(args.reps):
                for rt in runtimes:
                    rows.setdefault((rt, conc), []).append(
                        measure(rt, url, source, conc, cluster.address if rt in CLUSTERS and cluster else None, env))
    finally:
        proc.kill()
        if cluster is not None:
            cluster.stop()
    med = {k: {f: statistics.median(r[f] for r in v) for f in ("judging_s", "process_s")} for k, v in rows.items()}
    starts = {k: statistics.median(r.get("ray_start_s", 0.0) for r in v) for k, v in rows.items()}
    actors = {k: statistics.median(r.get("actor_start_s") or 0.0 for r in v) for k, v in rows.items()}
    counts = {k: max(r.get("actors", 0) for r in v) for k, v in rows.items()}
    server = "test server" if args.server == "test" else "fake_openai.py (the independent harness's server)"
    print(f"NIST human_auto assignment{f' (first {args.limit} lines)' if args.limit else ''}, {server}, latency "
          f"{args.latency * 1000:.0f} ms, {args.reps} run(s) each (medians); ratios vs the bare script at the same concurrency")
    print("judging includes the actors' start (launch to ready, SDK imported: 'actor start s'); Ray's own start is apart")
    print(f"{'runtime':<17} {'in flight':>9} {'judging s':>10} {'x bare':>7} {'process s':>10} {'x bare':>7} {'ray start s':>12} "
          f"{'actor start s':>14} {'actors':>6}")
    for conc in concs:
        base = med.get(("baseline", conc))
        for rt in runtimes:
            m = med[(rt, conc)]
            rj = f"{m['judging_s'] / base['judging_s']:.3f}" if base else "-"
            rp = f"{m['process_s'] / base['process_s']:.3f}" if base else "-"
            ray = rt.startswith("ray_local") or rt in CLUSTERS
            st = f"{starts[(rt, conc)]:.2f}" if ray else ""
            at = f"{actors[(rt, conc)]:.2f}" if ray else ""
            n = str(counts[(rt, conc)]) if ray else ""
            print(f"{rt:<17} {conc:>9} {m['judging_s']:10.2f} {rj:>7} {m['process_s']:10.2f} {rp:>7} {st:>12} {at:>14} {n:>6}")
    if cluster_start is not None:
        print(f"two-node cluster start (ray start head + worker, once): {cluster_start:.1f} s")
    if args.json:
        print(json.dumps({"rows": {f"{k[0]}@{k[1]}": v for k, v in rows.items()}, "latency_s": args.latency,
                          "cluster_start_s": cluster_start}))
    return 0


def zero_cost(copies: int, as_json: bool, reps: int = 1) -> int:
    """Per-job overhead on ``copies`` x the 927 NIST answers, no model call: the simulated judge (Figure 6
    confusion, one seeded draw per label) and the identity-confusion judge (no draw), serial and ``ray_local``."""
    tmp = Path(tempfile.mkdtemp(prefix="bench_zero_"))
    source = nist_copies(copies, tmp)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(reps):  # interleaved, so a slow spell of the machine touches every row
        for j in ("simulated", "identity"):
            for rt in ("serial", "ray_local"):
                runs.setdefault((j, rt), []).append(measure(rt, "http://127.0.0.1:9", source, 32, None, env, zero_cost=j))
    rows = {k: {f: statistics.median(r[f] for r in v) for f in v[0] if all(r[f] is not None for r in v)}
            for k, v in runs.items()}
    n = rows[("identity", "serial")]["jobs"]
    print(f"no model call, {copies} x NIST = {n:.0f} assignment jobs, concurrency 32, median of {reps} run(s); judge "
          f"'simulated' = Figure 6 confusion (a seeded draw per label), 'identity' = identity confusion (reference "
          f"labels, no draw)")
    print(f"{'judge':<10} {'runtime':<10} {'judging s':>10} {'ms per job':>11} {'process s':>10} {'peak RSS MB':>12}")
    for (j, rt), r in rows.items():
        print(f"{j:<10} {rt:<10} {r['judging_s']:10.2f} {r['judging_s'] / max(1, r['jobs']) * 1000:11.3f} "
              f"{r['process_s']:10.2f} {r['peak_rss_mb']:12.0f}")
    if as_json:
        print(json.dumps({"zero_cost": {f"{j}@{rt}": r for (j, rt), r in runs.items()}, "copies": copies}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
