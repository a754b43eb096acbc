"""Benchmark: the analysis of a grid of N cells against one reference, and how its paired comparisons scale.

Input: the NIST assignment file (21 topics x 45 runs) as the reference; N judge-like cells, each a different
deterministic relabelling of it (``relabel(ref, k)``: the rules of ``metaeval.testing.relabel.judge_like`` with
the row hash shifted by ``k``), named as a grid ``j<k//2>__p<k%2>__human_auto`` (judge ``j<k//2>``, prompt
``p0`` / ``p1``) so the natural neighbours are the prompt pairs of each judge.

Timed: ``metaeval.analysis.meta_evaluation.analyze(ref, cells, n_boot=--bootstrap)`` (6 metrics x 3 levels, flips, label
agreement, descriptive statistics, and the paired comparisons between cells), CPU seconds (``process_time``) and
wall, after one untimed warm-up call on one cell (lazy imports).  ``--pairs all`` compares every two cells (what
``analyze`` always did before the comparisons took their differences from stored replicates); ``--pairs
neighbours`` only the grid's natural neighbours (same judge, other prompt or strategy: what the study computes);
``--pairs legacy`` times the code before that change (``analyze`` without ``pairs=``: every pair, each
re-bootstrapped).  Prints one JSON line per N with the load average; asserts nothing.

    .venv/bin/python -m benchmarks.bench_compare [--cells 1,2,4,8,16] [--bootstrap 1000] [--pairs all]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def relabel(labels, k: int, name: str):
    """``judge_like`` with its row hash shifted by ``k`` (k = 0: ``judge_like`` itself)."""
    from metaeval.testing.relabel import judge_like

    return judge_like(labels, name, shift=k)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default="1,2,4,8,16")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--pairs", choices=["all", "neighbours", "legacy"], default="all")
    args = ap.parse_args(argv)

    from metaeval.analysis.meta_evaluation import analyze
    from metaeval.io.assignments import read_assignments
    from metaeval.paths import shared_data_dir

    ref = read_assignments(shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl", name="nist")
    counts = [int(x) for x in args.cells.split(",")]
    names = [f"j{k // 2}__p{k % 2}__human_auto" for k in range(max(counts))]
    cells = [relabel(ref, k, names[k]) for k in range(max(counts))]
    analyze(ref, cells[:1], names=names[:1], n_boot=50)  # warm-up: lazy imports
    for n in counts:
        kw = {}
        if args.pairs != "legacy":
            from metaeval.analysis.comparison import neighbour_pairs

            grid = [dict(zip(("judge", "prompt", "strategy"), c.split("__"))) for c in names[:n]]
            kw["pairs"] = "all" if args.pairs == "all" else neighbour_pairs(names[:n], grid)
        c0, w0 = time.process_time(), time.perf_counter()
        res = analyze(ref, cells[:n], names=names[:n], n_boot=args.bootstrap, **kw)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        n_pairs = res.paired[["candidate_a", "candidate_b"]].drop_duplicates().shape[0] if len(res.paired) else 0
        print(json.dumps({"cells": n, "pairs": args.pairs, "pairs_compared": n_pairs, "bootstrap": args.bootstrap,
                          "analysis_cpu_s": round(cpu, 2), "analysis_wall_s": round(wall, 2),
                          "load": [round(x, 2) for x in os.getloadavg()]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
