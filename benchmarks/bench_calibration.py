"""Benchmark: the calibrate workflow (5-fold cross-fitting repeated 10 times, nested selection over 3 inner folds,
every method, raw as a candidate, the estimated human leaderboard, fitted model) on a 56-topic x 45-run input.

The input is built by resampling the 21 NIST topics (with replacement, each copy a new topic id) to 56
topics - the size of the full TREC 2024 RAG human assessment - and drawing a synthetic judge through the
paper's Figure 6 matrix.  Target: under 30 s on 2 cores.  Prints figures; asserts nothing.

    python benchmarks/bench_calibration.py [--topics 56] [--folds 5] [--seed 0]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.inputs import resample_topics  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=56)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args()

    from metaeval.simulation import simulate_judge
    from metaeval.study.calibration_workflow import ALL_METHODS, calibrate_study
    from metaeval.io.assignments import read_assignments
    from metaeval.paths import shared_data_dir

    t0 = time.perf_counter()
    nist = read_assignments(shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl", name="nist")
    human = resample_topics(nist, args.topics, args.seed)
    judge = simulate_judge(human, seed=args.seed + 1, name="sim-judge")
    t_build = time.perf_counter() - t0
    print(f"input: {human.labels['qid'].nunique()} topics x {human.answers['run_id'].nunique()} runs, "
          f"{len(human.labels)} labels (built in {t_build:.2f} s)")

    t1 = time.perf_counter()
    res = calibrate_study(human, judge, {"folds": args.folds, "inner_folds": 3, "n_boot": 1000}, seed=args.seed)
    t_cv = time.perf_counter() - t1
    print(f"calibrate_study, {res['settings']['repeats']} x {args.folds}-fold with nested selection (3 inner folds), {', '.join(ALL_METHODS)} x 6 metrics: "
          f"{t_cv:.2f} s (target <= 30 s on 2 cores; OMP/BLAS threads = {os.environ['OMP_NUM_THREADS']})")
    print(f"{'method':<22}{'held-out MAE':>14}{'vs raw':>10}{'cover':>7}{'width':>7}   (V_strict)")
    for m, c in res["by_metric"]["v_strict"]["candidates"].items():
        if c["status"] != "ok":
            print(f"{m:<22}{c['status']}")
            continue
        h = c["held_out"]
        cover = "-" if h["coverage"] is None else f"{h['coverage']:.3f}"  # label-level: point estimates only
        width = "-" if h["mean_ci_width"] is None else f"{h['mean_ci_width']:.3f}"
        print(f"{m:<22}{h['mae']['mean']:14.4f}{h['diff_vs_raw']['mean']:+10.4f}{cover:>7}{width:>7}")
    print(res["recommendation"])
    if args.json:
        import json

        Path(args.json).write_text(json.dumps({"topics": args.topics, "folds": args.folds, "methods": list(ALL_METHODS),
                                               "validation_s": t_cv, "build_s": t_build}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
