"""Benchmark: full meta-evaluation (6 metrics x 3 levels, 1,000 topic-bootstrap replicates, flips, label
agreement, descriptive statistics) on a 56-topic x 45-run input made by resampling the NIST 21-topic file.

Run from the project root:  ``python benchmarks/bench_analysis.py [--boot 1000] [--topics 56] [--variant b]``
Prints the wall time of each part and the total (target: < 5 s on 2 cores for tau-b).

``--repeat 16`` instead uses the issue's scale input: the 21 NIST topics repeated 16 times under new ids (336
topics, 14,832 answers; ``benchmarks.bench_study.repeat_topics``), and prints the peak RSS of the process.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.inputs import resample_topics  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--topics", type=int, default=56)
    ap.add_argument("--variant", default="b")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=0, help="repeat the 21 NIST topics this many times instead of "
                    "resampling --topics (16 = the scale input of the architecture issue)")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args()

    from metaeval.analysis.agreement import label_agreement
    from metaeval.analysis.meta_evaluation import analyze
    from metaeval.io.assignments import read_assignments
    from metaeval.paths import shared_data_dir
    from metaeval.testing.relabel import judge_like

    nist = read_assignments(shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl", name="nist")
    if args.repeat:
        from benchmarks.bench_study import repeat_topics

        ref = repeat_topics(nist, args.repeat)
        args.topics = len(ref.qids)
    else:
        ref = resample_topics(nist, args.topics, args.seed)
    cand = judge_like(ref)
    n_cells = len(ref.answers)
    print(f"input: {args.topics} topics x {ref.answers['run_id'].nunique()} runs = {n_cells} answers, "
          f"{len(ref.labels)} labels; tau-{args.variant}, {args.boot} bootstrap replicates; "
          f"cores available {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()}")

    analyze(ref, cand, n_boot=20, variant=args.variant)  # warm-up: imports, first-call overheads
    t0 = time.perf_counter()
    res = analyze(ref, cand, n_boot=args.boot, seed=args.seed, variant=args.variant)
    total = time.perf_counter() - t0
    t1 = time.perf_counter()
    label_agreement(ref, cand)
    t_agree = time.perf_counter() - t1
    t2 = time.perf_counter()
    analyze(ref, cand, n_boot=0, variant=args.variant)
    t_point = time.perf_counter() - t2
    print(f"full analysis (6 metrics x 3 levels, {args.boot} replicates, flips, agreement, descriptive): {total:.2f} s")
    print(f"  of which label agreement: {t_agree:.2f} s; everything without the bootstrap: {t_point:.2f} s")
    v = res.tau[res.tau["metric"] == "v_strict"].set_index("level")
    print("V_strict tau:", ", ".join(f"{lvl} {v.loc[lvl, 'tau']:.3f} [{v.loc[lvl, 'ci_low']:.3f}, {v.loc[lvl, 'ci_high']:.3f}]"
                                    for lvl in ("run", "topic_avg", "pooled")))
    import resource

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(f"peak RSS of this process: {peak_mb:.0f} MB")
    if not args.repeat:
        print(f"target < 5 s: {'met' if total < 5 else 'NOT met'}")
    if args.json:
        import json

        Path(args.json).write_text(json.dumps({"topics": args.topics, "runs": int(ref.answers["run_id"].nunique()),
                                               "boot": args.boot, "variant": args.variant, "analysis_s": total,
                                               "agreement_s": t_agree, "point_estimates_s": t_point,
                                               "repeat": args.repeat, "peak_rss_mb": peak_mb}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
