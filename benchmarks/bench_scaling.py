"""Benchmark: how the study grows, along the data (1x, 4x, 16x, 64x NIST) and along the grid (1-30 cells).

    .venv/bin/python -m benchmarks.bench_scaling [--scales 1,4,16,64] [--cells 1,2,4,8,16,30] [--json FILE]

Each point is one child process (imports and input building are not timed):

* data axis: ``benchmarks.bench_study --scale K --no-report`` - the real NIST reference (21 topics x 45 runs) with
  its topics repeated ``K`` times, one judge-like cell, its study (the warm pass);
* grid axis: ``benchmarks.bench_grid --cells N`` on a NIST-sized synthetic track (``--topics 21 --runs 45
  --nuggets 19 --labelled 10``: half the topics human-labelled), ``N`` judge-like cells named as a grid of judges x
  three strategies, so the study's default neighbour comparisons grow with ``N``.

Per point and per study step: wall seconds, CPU seconds (the process and its forked workers) and the process's
peak RSS.  The growth exponent of a figure ``y`` against size ``x`` is the least-squares slope of ``log y`` on
``log x`` over the points (``numpy.polyfit``; 1 = linear, 2 = quadratic); a step under 0.05 CPU s at the smallest
size gets none (its slope is noise).  One run per point: CPU seconds are the figures to read on a shared machine,
and the load average before and after each point is printed with it.  Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GRID_SHAPE = ("--topics", "21", "--runs", "45", "--nuggets", "19", "--labelled", "10")


def _point(module: str, args: list[str]) -> dict:
    """Run ``python -m module args --json F`` and return its figures (with the load average around it)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "point.json"
        load = [round(x, 2) for x in os.getloadavg()]
        subprocess.run([sys.executable, "-m", module, *args, "--json", str(out)], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        fig = json.loads(out.read_text(encoding="utf-8"))
    fig["load_around"] = [load, [round(x, 2) for x in os.getloadavg()]]
    return fig


def growth_exponent(sizes: list[float], values: list[float]) -> float | None:
    """Slope of ``log(values)`` on ``log(sizes)`` (least squares); None with fewer than two positive points."""
    import numpy as np

    pts = [(math.log(s), math.log(v)) for s, v in zip(sizes, values) if s > 0 and v and v > 0]
    if len(pts) < 2:
        return None
    x, y = np.array(pts).T
    return float(np.polyfit(x, y, 1)[0])


def _rows(points: list[dict], size_key: str) -> tuple[list[dict], dict[str, dict[str, float | None]]]:
    """One row per (point, step) and the exponents per step of wall, CPU and (whole study) peak RSS."""
    rows, by_step = [], {}
    for p in points:
        steps = [("study, all of it", p["study_s"], p["study_cpu_s"])]
        steps += [(s["step"], s["wall_s"], s["cpu_s"]) for s in p["steps"]]
        for name, wall, cpu in steps:
            rows.append({size_key: p[size_key], "step": name, "wall_s": wall, "cpu_s": cpu,
                         "peak_rss_mb": p["peak_rss_mb"] if name == "study, all of it" else None})
            by_step.setdefault(name, []).append((p[size_key], wall, cpu, p["peak_rss_mb"]))
    exps = {}
    for name, pts in by_step.items():
        sizes = [s for s, *_ in pts]
        small_cpu = min(pts)[2]
        exps[name] = {"wall": growth_exponent(sizes, [w for _, w, _, _ in pts]) if small_cpu >= 0.05 else None,
                      "cpu": growth_exponent(sizes, [c for _, _, c, _ in pts]) if small_cpu >= 0.05 else None,
                      "rss": growth_exponent(sizes, [r for *_, r in pts]) if name == "study, all of it" else None}
    return rows, exps


def _table(title: str, size_key: str, points: list[dict]) -> str:
    from metaeval.formatting import fixed

    rows, exps = _rows(points, size_key)
    sizes = [p[size_key] for p in points]
    steps = list(exps)
    head = f"| step (CPU s / wall s) | " + " | ".join(f"{size_key} {s}" for s in sizes) + " | exponent CPU / wall |"
    lines = [f"{title}", "", head, "|" + "---|" * (len(sizes) + 2)]
    for st in steps:
        cells = []
        for s in sizes:
            r = next(r for r in rows if r[size_key] == s and r["step"] == st)
            cells.append(f"{fixed(r['cpu_s'], 2)} / {fixed(r['wall_s'], 2)}")
        e = exps[st]
        ex = "-" if e["cpu"] is None else f"{fixed(e['cpu'], 2)} / {fixed(e['wall'], 2)}"
        lines.append(f"| {st} | " + " | ".join(cells) + f" | {ex} |")
    rss = " | ".join(fixed(p["peak_rss_mb"], 0) for p in points)
    e = exps["study, all of it"]["rss"]
    lines.append(f"| peak RSS MB | {rss} | {'-' if e is None else fixed(e, 2)} |")
    loads = ", ".join(f"{p['load_around'][0][0]}-{p['load_around'][1][0]}" for p in points)
    lines += ["", f"load average (1 min) before-after each point: {loads}"]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", default="1,4,16,64", help="data axis: NIST repeated K times (bench_study --scale)")
    ap.add_argument("--cells", default="1,2,4,8,16,30", help="grid axis: cells on a NIST-sized synthetic track")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--json", default=None, help="also write every point's figures to this JSON file")
    args = ap.parse_args(argv)
    scales = [int(x) for x in args.scales.split(",") if x]
    cells = [int(x) for x in args.cells.split(",") if x]
    data = [_point("benchmarks.bench_study", ["--scale", str(k), "--no-report", "--bootstrap", str(args.bootstrap)])
            for k in scales]
    grid = [_point("benchmarks.bench_grid", ["--cells", str(n), *GRID_SHAPE, "--bootstrap", str(args.bootstrap)])
            for n in cells]
    out = sys.stdout
    if data:
        out.write(_table("Data axis: one cell's study, NIST x K (bench_study --scale K, warm pass)", "scale", data)
                  + "\n\n")
    if grid:
        out.write(_table("Grid axis: the study of N cells, NIST-sized synthetic track (bench_grid "
                         + " ".join(GRID_SHAPE) + ")", "cells", grid) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"data": data, "grid": grid}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
