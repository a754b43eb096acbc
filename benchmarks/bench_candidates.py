"""Benchmark: where a calibration's cross-fitting time goes, per candidate method (fit and apply, seconds).

Input as ``benchmarks.bench_study``: the NIST assignment file as the reference, ``metaeval.testing.relabel.judge_like``
of it as the judge, ``--scale K`` repeating the topics K times.  Runs ``calibrate_study`` (10 repeats of 5-fold
cross-fitting with nested selection, every method) once to warm up, then once timed, in this process
(``workers=1``: the repeats are not forked, so every fit and apply is seen here), with each candidate's ``fit``,
``fit_point`` (the cheaper point-only fit) and ``apply`` wrapped by a wall-clock timer.  Prints the total, the time
inside the folds, and one line per candidate and call kind (``apply`` with intervals is ``applyci``), largest first.
Works on code from before ``Candidate.intervals`` existed too (every candidate then has intervals).

    .venv/bin/python -m benchmarks.bench_candidates [--scale 1] [--blas-threads 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--blas-threads", type=int, default=1, help="OpenBLAS/OpenMP threads (default 1)")
    args = ap.parse_args(argv)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.blas_threads)

    import metaeval.calibration.crossfit as cf
    from benchmarks.bench_study import repeat_topics
    from metaeval.io.assignments import read_assignments
    from metaeval.paths import shared_data_dir
    from metaeval.study.calibration_workflow.workflow import calibrate_study
    from metaeval.testing.relabel import judge_like

    nist = read_assignments(shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl", name="nist")
    ref = repeat_topics(nist, args.scale)
    judge = judge_like(ref, name="judge-like")
    seconds: dict[str, float] = defaultdict(float)
    calls: Counter = Counter()

    def timed(fn, label):
        def run(*a):
            t = time.perf_counter()
            try:
                return fn(*a)
            finally:
                seconds[label] += time.perf_counter() - t
                calls[label] += 1
        return run

    plain = cf._eval_folds

    def eval_folds(cands, *a, **k):
        wrapped = []
        for c in cands:
            ci = getattr(c, "intervals", True)
            apply_ci = timed(c.apply, f"{c.name}.applyci")
            apply_point = timed(c.apply, f"{c.name}.apply")
            extra = {"intervals": ci} if hasattr(c, "intervals") else {}
            wrapped.append(cf.Candidate(
                c.name, c.level, timed(c.fit, f"{c.name}.fit"),
                lambda m, te, want, _ci=apply_ci, _pt=apply_point: (_ci if want else _pt)(m, te, want),
                timed(c.fit_point, f"{c.name}.fit_point") if c.fit_point else None, **extra))
        return plain(wrapped, *a, **k)

    cf._eval_folds = eval_folds
    settings = {"folds": 5, "workers": 1}
    calibrate_study(ref, judge, settings, seed=0)  # warm-up: lazy imports
    seconds.clear()
    calls.clear()
    t = time.perf_counter()
    calibrate_study(ref, judge, settings, seed=0)
    total = time.perf_counter() - t
    print(f"calibrate_study, {args.scale}x NIST ({len(ref.qids)} topics), one process, {args.blas_threads} BLAS "
          f"thread(s): {total:.2f} s, of which in the cross-fitting folds {sum(seconds.values()):.2f} s")
    for label, s in sorted(seconds.items(), key=lambda x: -x[1]):
        print(f"  {label:<30} {s:8.3f} s  {calls[label]:5d} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
