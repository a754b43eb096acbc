"""One runner for every benchmark: each script runs in its own subprocess, figures are medians (or ratios of
medians) over ``--reps`` runs, peak memory is read per benchmark, and the result is one table plus a JSON file.

    .venv/bin/python -m benchmarks [--reps 3] [--quick] [--only scoring,analysis] [--out results/bench.json]
    metaeval bench ...            (the same runner, from a repository checkout)

Benchmarks (registry ``BENCHMARKS``; each is an existing ``benchmarks/bench_*.py`` script):

* ``scoring``: read + score the NIST 927-line file and a 2,500-line resample (each run is itself a median of 5);
* ``analysis``: full meta-evaluation, 56 topics x 45 runs, 1,000 topic-bootstrap replicates;
* ``calibration``: the calibrate workflow (5-fold cross-fitting, nested selection of every method) on 56 x 45;
* ``study`` / ``study16``: the study of one grid cell (reference = NIST 21 x 45, judge = ``testing.relabel.judge_like``)
  plus its report; ``study16`` repeats the topics 16 times under new ids (14,832 answers) and times the study only;
* ``client``: 1,721 assignment calls through ``LLMJudge``/``ChatClient`` vs bare ``AsyncOpenAI`` + semaphore(32),
  test server at 200 ms (the script alternates both sides ``--reps`` times and reports medians);
* ``sweep``: ``metaeval sweep`` human_auto on NIST 21 x 45 (1,721 calls), 100 ms, serial and Ray vs the same
  baseline, ``--reps`` alternating repetitions.

Scripts without their own repetitions (scoring, analysis, calibration) are started ``reps`` times and every
numeric figure is the median over those runs; client and sweep get ``--reps`` and report medians themselves.
Ratios (metaeval / baseline) are ratios of those medians.  Per-call overhead is
``(wall_metaeval - wall_baseline) x concurrency / calls``: the extra time each call holds a concurrency slot.

Peak memory, two figures per benchmark:

* ``peak_rss_mb``: the benchmark process itself (``resource.getrusage(RUSAGE_SELF).ru_maxrss``, read by a
  wrapper in the child just before it exits) - the driver's own footprint;
* ``tree_peak_rss_mb``: ``os.wait4`` on the child, i.e. the largest single process among the child and the
  descendants it waited for (the test server subprocess of client/sweep; Ray's workers are not its children).
  The maximum over repetitions is reported.

A benchmark whose input data (``../shared/data``) is missing is reported as skipped with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]

#: env var naming the file where the child wrapper writes its own peak RSS
_RSS_ENV = "METAEVAL_BENCH_RSS_FILE"


# ------------------------------------------------------------------ figure extraction
def _last_json_line(stdout: str, _json_path: Path) -> dict[str, Any]:
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line in the benchmark's output")


def _json_file(_stdout: str, json_path: Path) -> dict[str, Any]:
    return json.loads(json_path.read_text(encoding="utf-8"))


def _scoring_figures(raw: dict[str, Any]) -> dict[str, float]:
    return {"score_927_s": raw["927 lines"]["read_and_score_s"], "score_2500_s": raw["2,500 lines"]["read_and_score_s"],
            "read_927_s": raw["927 lines"]["read_s"], "read_2500_s": raw["2,500 lines"]["read_s"]}


def _analysis_figures(raw: dict[str, Any]) -> dict[str, float]:
    return {"analysis_s": raw["analysis_s"], "agreement_s": raw["agreement_s"], "point_estimates_s": raw["point_estimates_s"]}


def _calibration_figures(raw: dict[str, Any]) -> dict[str, float]:
    return {"validation_s": raw["validation_s"]}


def _client_figures(raw: dict[str, Any]) -> dict[str, float]:
    return {"calls": raw["calls"], "ideal_s": raw["ideal_s"], "baseline_s": raw["baseline_wall_s"],
            "metaeval_s": raw["metaeval_wall_s"], "ratio": raw["ratio"], "overhead_ms_per_call": raw["overhead_ms_per_call"],
            "baseline_share_of_ideal": raw["baseline_vs_ideal"]}


def _sweep_figures(raw: dict[str, Any]) -> dict[str, float]:
    med = raw["medians"]
    calls, conc = raw.get("calls", 1721), raw.get("concurrency", 32)
    per_call = lambda wall: (wall - med["baseline"]) * conc / calls * 1000  # noqa: E731
    return {"calls": calls, "ideal_s": raw["ideal_s"], "baseline_s": med["baseline"], "serial_s": med["serial"],
            "ray_s": med["ray"], "serial_ratio": med["serial"] / med["baseline"], "ray_ratio": med["ray"] / med["baseline"],
            "serial_overhead_ms_per_call": per_call(med["serial"]), "ray_overhead_ms_per_call": per_call(med["ray"]),
            "ray_start_s": raw["ray_start_s"]}


def _study_figures(raw: dict[str, Any]) -> dict[str, float]:
    out = {"study_s": raw["study_s"], "study_peak_rss_mb": raw["peak_rss_mb"], "answers": raw["answers"]}
    if raw.get("report_s") is not None:
        out.update(report_s=raw["report_s"], total_s=raw["total_s"])
        if raw.get("cold_total_s") is not None:
            out["cold_total_s"] = raw["cold_total_s"]
    return out


@dataclass(frozen=True)
class Bench:
    """One benchmark script: how to start it, how to read its figures, and what the table shows."""

    module: str
    args: tuple[str, ...]
    read: Callable[[str, Path], dict[str, Any]]
    figures: Callable[[dict[str, Any]], dict[str, float]]
    own_reps: bool  # the script takes --reps and reports medians itself
    what: str
    #: table rows: (figure key, label, unit, target as (op, value) or None)
    rows: tuple[tuple[str, str, str, tuple[str, float] | None], ...]
    needs_data: bool = True
    json_arg: tuple[str, ...] = field(default=())  # e.g. ("--json", "{json}") - {json} becomes the temp path


BENCHMARKS: dict[str, Bench] = {
    "scoring": Bench(
        "benchmarks.bench_scoring", ("--json",), _last_json_line, _scoring_figures, False,
        "read + score NIST assignment files (after imports; each run a median of 5)",
        (("score_927_s", "read+score 927 lines", "s", ("<", 1.0)), ("score_2500_s", "read+score 2,500 lines", "s", None))),
    "analysis": Bench(
        "benchmarks.bench_analysis", (), _json_file, _analysis_figures, False,
        "full analysis 56 topics x 45 runs, 6 metrics x 3 levels, 1,000 bootstrap, agreement",
        (("analysis_s", "analysis 56x45, 1,000 bootstrap", "s", ("<", 5.0)),), json_arg=("--json", "{json}")),
    "calibration": Bench(
        "benchmarks.bench_calibration", (), _json_file, _calibration_figures, False,
        "calibrate workflow: 5-fold cross-fitting with nested selection of all methods, 56 x 45",
        (("validation_s", "calibration 5-fold with nested selection", "s", ("<=", 30.0)),), json_arg=("--json", "{json}")),
    "study": Bench(
        "benchmarks.bench_study", (), _json_file, _study_figures, False,
        "study of one NIST 21x45 cell (scores, analysis 1,000 bootstrap, cross-validated calibration) + its report",
        (("total_s", "study + report, one NIST cell (warm)", "s", ("<=", 3.0)), ("study_s", "study, one NIST cell", "s", None),
         ("report_s", "report of that cell", "s", None),
         ("cold_total_s", "same, first pass (+ one-time library imports)", "s", None)), json_arg=("--json", "{json}")),
    "study16": Bench(
        "benchmarks.bench_study", ("--scale", "16", "--no-report"), _json_file, _study_figures, False,
        "study of one cell on NIST x16 (336 topics, 14,832 answers: topics repeated under new ids)",
        (("study_s", "study, one cell, 16x NIST", "s", ("<=", 20.0)),
         ("study_peak_rss_mb", "study 16x peak RSS", "MB", ("<=", 1024.0))), json_arg=("--json", "{json}")),
    "client": Bench(
        "benchmarks.bench_client", (), _json_file, _client_figures, True,
        "1,721 assignment calls, 200 ms, concurrency 32: LLMJudge+ChatClient vs AsyncOpenAI+semaphore",
        (("ideal_s", "client: ideal (calls x latency / conc.)", "s", None),
         ("baseline_s", "client: bare AsyncOpenAI baseline", "s", None),
         ("metaeval_s", "client: metaeval", "s", None),
         ("ratio", "client: metaeval / baseline", "x", ("<=", 1.10)),
         ("overhead_ms_per_call", "client: per-call overhead", "ms", None)),
        json_arg=("--json", "{json}")),
    "sweep": Bench(
        "benchmarks.bench_sweep", ("--json",), _last_json_line, _sweep_figures, True,
        "sweep human_auto NIST 21x45 (1,721 calls), 100 ms, concurrency 32: serial and Ray vs baseline",
        (("ideal_s", "sweep: ideal", "s", None),
         ("baseline_s", "sweep: bare AsyncOpenAI baseline", "s", None),
         ("serial_s", "sweep: serial", "s", None),
         ("ray_s", "sweep: ray_local", "s", None),
         ("serial_ratio", "sweep: serial / baseline", "x", ("<=", 1.10)),
         ("ray_ratio", "sweep: ray / baseline", "x", ("<=", 1.20)),
         ("serial_overhead_ms_per_call", "sweep: serial per-call overhead", "ms", None),
         ("ray_overhead_ms_per_call", "sweep: ray per-call overhead", "ms", None),
         ("ray_start_s", "sweep: Ray start-up (once)", "s", None))),
}


# ------------------------------------------------------------------ running one benchmark
def _data_missing() -> str | None:
    try:
        from metaeval.paths import shared_data_dir

        nist = shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl"
    except Exception as exc:  # noqa: BLE001 - reported as the skip reason
        return f"shared data not found ({exc})"
    return None if nist.exists() else f"shared data not found: {nist} (set METAEVAL_SHARED_DATA)"


def run_child(bench: Bench, extra: list[str], timeout_s: float) -> dict[str, Any]:
    """Start ``bench`` once in a subprocess (through the RSS wrapper); returns figures, RSS, wall time, output."""
    with tempfile.TemporaryDirectory(prefix="metaeval-bench-") as tmp:
        json_path, rss_path, out_path = Path(tmp) / "figures.json", Path(tmp) / "rss.json", Path(tmp) / "stdout.txt"
        args = [a.replace("{json}", str(json_path)) for a in (*bench.args, *bench.json_arg)] + extra
        cmd = [sys.executable, "-m", "benchmarks.runner", "--child", bench.module, *args]
        env = {**os.environ, _RSS_ENV: str(rss_path),
               "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
        t0 = time.perf_counter()
        with open(out_path, "w", encoding="utf-8") as out:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + timeout_s
            while True:  # os.wait4 gives this child's own rusage (not a running total over all children)
                pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:
                    proc.kill()
                    pid, status, ru = os.wait4(proc.pid, 0)
                    break
                time.sleep(0.05)
            proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        stdout = out_path.read_text(encoding="utf-8", errors="replace")
        res: dict[str, Any] = {"command": " ".join(["python", "-m", bench.module, *args]), "returncode": proc.returncode,
                               "wall_s": wall, "tree_peak_rss_mb": ru.ru_maxrss / 1024, "output_tail": stdout[-2000:]}
        if rss_path.exists():
            res["peak_rss_mb"] = json.loads(rss_path.read_text())["maxrss_kb"] / 1024
        if proc.returncode != 0:
            res["error"] = f"exit status {proc.returncode}" + (" (timed out)" if time.monotonic() > deadline else "")
            return res
        try:
            res["raw"] = bench.read(stdout, json_path)
            res["figures"] = bench.figures(res["raw"])
        except Exception as exc:  # noqa: BLE001 - a benchmark that prints no figures is reported, not hidden
            res["error"] = f"could not read figures: {type(exc).__name__}: {exc}"
        return res


def run_bench(name: str, reps: int, timeout_s: float, log: Callable[[str], None]) -> dict[str, Any]:
    bench = BENCHMARKS[name]
    if bench.needs_data:
        missing = _data_missing()
        if missing:
            return {"skipped": missing, "what": bench.what}
    runs = []
    n_starts = 1 if bench.own_reps else reps
    extra = ["--reps", str(reps)] if bench.own_reps else []
    for i in range(n_starts):
        log(f"[{name}] run {i + 1}/{n_starts}: python -m {bench.module} {' '.join((*bench.args, *bench.json_arg, *extra))}")
        res = run_child(bench, extra, timeout_s)
        runs.append(res)
        if "error" in res:
            log(f"[{name}] failed: {res['error']}\n{res['output_tail']}")
            break
        log(f"[{name}] {res['wall_s']:.1f} s wall, peak RSS {res.get('peak_rss_mb', float('nan')):.0f} MB")
    out: dict[str, Any] = {"what": bench.what, "command": runs[0]["command"], "reps": reps, "starts": len(runs), "runs": runs}
    ok = [r for r in runs if "figures" in r]
    if len(ok) != len(runs):
        out["error"] = runs[-1].get("error")
    if ok:
        keys = ok[0]["figures"].keys()
        out["figures"] = {k: statistics.median(r["figures"][k] for r in ok) for k in keys}
        out["peak_rss_mb"] = max(r.get("peak_rss_mb", 0.0) for r in ok)
        out["tree_peak_rss_mb"] = max(r["tree_peak_rss_mb"] for r in ok)
    return out


# ------------------------------------------------------------------ the table
def _check(value: float, target: tuple[str, float] | None) -> str:
    if target is None:
        return ""
    op, bound = target
    ok = value < bound if op == "<" else value <= bound
    return "PASS" if ok else "FAIL"


def table_rows(results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for name, res in results.items():
        bench = BENCHMARKS[name]
        if "figures" not in res:
            rows.append({"benchmark": name, "figure": bench.rows[0][1], "value": None, "unit": "", "target": "",
                         "status": "SKIP" if "skipped" in res else "ERROR", "note": res.get("skipped") or res.get("error"),
                         "peak_rss_mb": None})
            continue
        for i, (key, label, unit, target) in enumerate(bench.rows):
            rows.append({"benchmark": name, "figure": label, "value": res["figures"][key], "unit": unit,
                         "target": f"{target[0]} {target[1]:g}" if target else "", "status": _check(res["figures"][key], target),
                         "peak_rss_mb": res["peak_rss_mb"] if i == 0 else None,
                         "tree_peak_rss_mb": res["tree_peak_rss_mb"] if i == 0 else None})
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    head = f"{'figure':<42} {'value':>9} {'unit':<4} {'target':<8} {'status':<6} {'peak RSS MB':>11} {'tree MB':>8}"
    lines = [head, "-" * len(head)]
    for r in rows:
        val = "-" if r["value"] is None else (f"{r['value']:.3f}" if abs(r["value"]) < 100 else f"{r['value']:.1f}")
        rss = "" if r.get("peak_rss_mb") is None else f"{r['peak_rss_mb']:.0f}"
        tree = "" if r.get("tree_peak_rss_mb") is None else f"{r['tree_peak_rss_mb']:.0f}"
        lines.append(f"{r['figure']:<42} {val:>9} {r['unit']:<4} {r['target']:<8} {r['status']:<6} {rss:>11} {tree:>8}")
        if r.get("note"):
            lines.append(f"    {r['note']}")
    return "\n".join(lines)


def _meta(args: argparse.Namespace, reps: int) -> dict[str, Any]:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "reps": reps, "quick": args.quick,
            "python": platform.python_version(), "platform": platform.platform(), "commit": commit,
            "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "load_avg_at_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}


# ------------------------------------------------------------------ entry points
def build_parser(prog: str = "python -m benchmarks") -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description="Run every metaeval benchmark; print one table, write JSON.")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per benchmark; figures are medians (default 3)")
    ap.add_argument("--quick", action="store_true", help="smoke mode: 1 repetition")
    ap.add_argument("--only", default=None, help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    ap.add_argument("--out", default="results/bench.json", help="JSON output (default results/bench.json)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per benchmark start (default 1800)")
    ap.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    return ap


def run(args: argparse.Namespace, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the selected benchmarks; returns the JSON document (also written to ``args.out``)."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    names = list(BENCHMARKS) if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    reps = 1 if args.quick else max(1, args.reps)
    doc: dict[str, Any] = {"meta": _meta(args, reps), "benchmarks": {}}
    t0 = time.perf_counter()
    for name in names:
        doc["benchmarks"][name] = run_bench(name, reps, args.timeout, log)
    doc["meta"]["total_wall_s"] = time.perf_counter() - t0
    doc["table"] = table_rows(doc["benchmarks"])
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return doc


def main(argv: list[str] | None = None, prog: str = "python -m benchmarks") -> int:
    args = build_parser(prog).parse_args(argv)
    if args.list:
        for name, b in BENCHMARKS.items():
            print(f"{name:<12} python -m {b.module}  - {b.what}")
        return 0
    doc = run(args)
    m = doc["meta"]
    print(f"metaeval benchmarks: {m['reps']} rep(s), {m['cpus']} CPU(s), load {m['load_avg_at_start']}, "
          f"commit {m['commit']}, {m['total_wall_s']:.0f} s in all")
    print(format_table(doc["table"]))
    if args.out:
        print(f"wrote {args.out}")
    bad = [r for r in doc["table"] if r["status"] in ("ERROR",)]
    return 1 if bad else 0


def _child(argv: list[str]) -> int:
    """``--child MODULE ARGS...``: run MODULE as ``__main__`` and record this process's peak RSS on the way out."""
    import resource

    module, rest = argv[0], argv[1:]
    sys.argv = [module, *rest]
    code: Any = 0
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
    finally:
        path = os.environ.get(_RSS_ENV)
        if path:
            Path(path).write_text(json.dumps({"maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
    return code if isinstance(code, int) else (0 if code is None else 1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(_child(sys.argv[2:]))
    sys.exit(main())
