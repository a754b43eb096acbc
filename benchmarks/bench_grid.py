"""Benchmark: the study of a full-track-sized synthetic grid (301 topics x 90 runs x 20 nuggets), one cell or many.

Input, built deterministically (:func:`synthetic_track`, seed 0; no shared data needed):

* human labels everywhere: topic ``t<i>``, run ``r<j>``, nugget ``k`` of 20 per topic (vital with probability
  0.45); support code ``0 / 1 / 2`` (not / partial / support) from thresholds on ``a_j + e_ik + u`` (run ability
  ``a_j ~ N(0, 0.6)``, nugget easiness ``e_ik ~ N(0, 1)``, ``u ~ N(0, 1)`` per label), every run answering every
  topic: ``301 x 90 x 20 = 541,800`` labels;
* the reference (what the track's assessors labelled): those labels on ``--labelled`` topics drawn at random
  (default 60, a fifth of the track; ``--labelled 301``: every topic, the worst case for calibration);
* cell ``k`` of the grid: :func:`metaeval.testing.relabel.judge_like` with ``shift=k`` of the human labels on every
  topic (a stricter-than-human judge), named like a grid of 10 judges x 3 strategies
  (``j<k // 3>__v1__<human_auto | auto_auto | auto_human>``), so the study's default neighbour pairs are the
  strategy pairs of each judge.

Timed, after metaeval's imports and building the input, one pass of ``metaeval.study.run_study`` (scores, analysis
with ``--bootstrap`` topic-bootstrap replicates and the default neighbour pairs, calibration of every cell with the
default settings, study.json) into a temporary results folder: wall, CPU (this process, all threads, plus its
finished children: the calibration's or the study's forked workers), peak RSS of this process and of its largest
finished child (a forked worker; the two are not added: a fork shares its parent's pages); per study step (the steps of ``benchmarks.phase_times``) wall and CPU seconds (CPU with
children).  ``--study-workers N`` (``study.workers``) studies N cells at once in forked workers
(``metaeval.study.fanout``; default 1: one cell after the other in this process, each cell's calibration repeats
forked over ``--workers``); ``--ray`` starts a local Ray runtime first (not timed; ``--address HOST:PORT`` joins a running cluster
instead) so the cells run as Ray tasks (with ``--study-workers auto``; their CPU is the Ray workers', not in the
CPU figure).  ``--profile N`` prints the N top functions by cumulative
CPU (cProfile; forked workers are not in it: use ``--workers 1 --study-workers 1`` with it).  Prints one JSON line
with the load average before and after; asserts nothing.

    .venv/bin/python -m benchmarks.bench_grid [--cells 1] [--labelled 60] [--bootstrap 1000] [--workers auto]
        [--study-workers 1] [--ray] [--profile N] [--json FILE]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_study import cpu_with_children  # noqa: E402
from benchmarks.phase_times import time_steps  # noqa: E402

STRATEGIES = ("human_auto", "auto_auto", "auto_human")
#: (module, function, shown as): the study's steps timed (``benchmarks.phase_times.time_steps``)
STEPS = tuple(("metaeval.study.run", name, label) for name, label in (
    ("write_cell_files", "cell files"), ("study_cells", "cells' tasks (analysis, calibration, figures)"),
    ("analyse", "analysis files and pairs"), ("calibrate", "calibration files"),
    ("self_consistency", "self-consistency files"), ("write_study_json", "study.json")))


def synthetic_track(topics: int = 301, runs: int = 90, nuggets: int = 20, seed: int = 0):
    """The human label set described in the module docstring (every run answers every topic)."""
    import numpy as np
    import pandas as pd

    from metaeval.types import LabelSet, make_importance_categorical, make_support_categorical

    rng = np.random.default_rng(seed)
    qids = np.array([f"t{i:03d}" for i in range(topics)], dtype=object)
    rids = np.array([f"r{j:02d}" for j in range(runs)], dtype=object)
    ability = rng.normal(0.0, 0.6, runs)
    ease = rng.normal(0.0, 1.0, (topics, nuggets))
    vital = rng.random((topics, nuggets)) < 0.45
    latent = ability[None, :, None] + ease[:, None, :] + rng.normal(0.0, 1.0, (topics, runs, nuggets))
    code = np.digitize(latent, [0.3, 1.1])  # 0 not / 1 partial / 2 support
    ti, rj, nk = (a.ravel() for a in np.meshgrid(np.arange(topics), np.arange(runs), np.arange(nuggets),
                                                 indexing="ij"))
    support = np.array(["not_support", "partial_support", "support"], dtype=object)[code.ravel()]
    importance = np.where(vital[ti, nk], "vital", "okay").astype(object)
    text = np.array([f"nugget {k} of topic {q}" for q in qids for k in range(nuggets)], dtype=object)
    labels = pd.DataFrame({
        "qid": qids[ti], "run_id": rids[rj], "nugget_id": nk.astype("int64"), "nugget": text[ti * nuggets + nk],
        "importance": make_importance_categorical(importance), "support": make_support_categorical(support),
        "importance_raw": importance, "support_raw": support, "line": np.arange(1, len(ti) + 1, dtype="int64")})
    at, ar = (a.ravel() for a in np.meshgrid(np.arange(topics), np.arange(runs), indexing="ij"))
    answers = pd.DataFrame({"qid": qids[at], "run_id": rids[ar], "answer_text": "",
                            "response_length": np.full(len(at), 200, dtype="int64"),
                            "line": np.arange(1, len(at) + 1, dtype="int64")})
    return LabelSet("synthetic-human", labels, answers, topics={q: "" for q in qids})


def cell_name(k: int) -> str:
    return f"j{k // len(STRATEGIES)}__v1__{STRATEGIES[k % len(STRATEGIES)]}"


def build_input(root: Path, human, labelled: int, n_cells: int, bootstrap: int, workers, seed: int = 0,
                study_workers=1):
    """The study's input: the reference on ``labelled`` random topics and ``n_cells`` judge-like cells."""
    import numpy as np

    from metaeval.layout import ResultsLayout
    from metaeval.study.run import StudyInput
    from metaeval.study.settings import build_study_settings
    from metaeval.testing.relabel import judge_like

    qids = human.qids
    pick = np.random.default_rng(seed + 1).choice(len(qids), size=min(labelled, len(qids)), replace=False)
    ref = human.subset(qids=[qids[i] for i in sorted(pick)], name="synthetic-reference")
    names = [cell_name(k) for k in range(n_cells)]
    cells = {n: judge_like(human, name=n.split("__")[0], shift=k) for k, n in enumerate(names)}
    settings = build_study_settings({"tau": "b", "bootstrap": bootstrap, "seed": 0},
                                    {"enabled": not os.environ.get("BENCH_NO_CAL"), "methods": None, "folds": 5,
                                     "seed": 0, "workers": workers}, study={"workers": study_workers})
    rows = [dict(zip(("judge", "prompt", "strategy"), n.split("__")), cell=n, stats={"judge_calls": 0, "calls": 0})
            for n in names]
    return StudyInput(layout=ResultsLayout(root, "bench-grid"), label_sets=cells, reference=ref, settings=settings,
                      config={"name": "bench-grid"}, cells=rows, calibratable=names,
                      dataset={"name": "synthetic-track", "topics": len(qids), "runs": len(human.run_ids),
                               "answers": len(human.answers)},
                      topics={q: "" for q in qids})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=1)
    ap.add_argument("--labelled", type=int, default=60, help="human-labelled topics of the 301 (default 60)")
    ap.add_argument("--topics", type=int, default=301)
    ap.add_argument("--runs", type=int, default=90)
    ap.add_argument("--nuggets", type=int, default=20)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--workers", default="auto", help="calibration.workers (default auto; 1 = in-process)")
    ap.add_argument("--study-workers", default="1",
                    help="study.workers: cells studied at once in forked workers (auto: the CPUs; default 1: one "
                         "cell after the other in this process, as before the fan-out)")
    ap.add_argument("--ray", action="store_true",
                    help="start a local Ray runtime first (runtime.num_cpus 2), so the cells run as Ray tasks; "
                         "its start is not timed")
    ap.add_argument("--address", default=None,
                    help="with --ray: join this running Ray cluster (HOST:PORT, e.g. a two-node loopback cluster "
                         "started with `ray start --head` and `ray start --address`) instead of a local runtime")
    ap.add_argument("--profile", type=int, default=0, help="print the N top functions by cumulative CPU time")
    ap.add_argument("--profile-out", default=None, help="also write the raw cProfile stats to this file")
    ap.add_argument("--keep", default=None, help="write the results folder here (must not hold results) and keep it")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)

    import metaeval.analysis  # noqa: F401  (imports are not timed)
    import metaeval.study.calibration_workflow.workflow  # noqa: F401
    import metaeval.study.run  # noqa: F401

    load_before = [round(x, 2) for x in os.getloadavg()]
    t = time.perf_counter()
    human = synthetic_track(args.topics, args.runs, args.nuggets)
    workers = args.workers if args.workers == "auto" else int(args.workers)
    study_workers = args.study_workers if args.study_workers == "auto" else int(args.study_workers)
    if args.ray:
        from metaeval.pipeline.ray_setup import init_ray

        init_ray(address=args.address) if args.address else init_ray(num_cpus=2)
    steps: list[dict] = []
    time_steps(STEPS, steps, t, cpu=cpu_with_children)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        inp = build_input(root, human, args.labelled, args.cells, args.bootstrap, workers,
                          study_workers=study_workers)
        build_s = time.perf_counter() - t
        prof = None
        if args.profile:
            import cProfile

            prof = cProfile.Profile(time.process_time)
            prof.enable()
        w, c = time.perf_counter(), cpu_with_children()
        run_study = sys.modules["metaeval.study.run"].run_study
        summary = run_study(inp)
        study_s, study_cpu = time.perf_counter() - w, cpu_with_children() - c
        if prof is not None:
            import pstats

            prof.disable()
            if args.profile_out:
                prof.dump_stats(args.profile_out)
            pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(args.profile)
    recs = {}
    for cell in summary.cells:  # the typed summary (metaeval.study.records.Summary)
        sel = getattr(cell.calibration, "selection", None)  # a CellCalibration (None: not calibrated / failed)
        recs[cell.cell] = sel.method if sel is not None else None
    out = {"topics": args.topics, "runs": args.runs, "nuggets": args.nuggets, "labels": len(human.labels),
           "labelled": args.labelled, "cells": args.cells, "bootstrap": args.bootstrap, "workers": args.workers,
           "study_workers": args.study_workers, "ray": args.ray,
           "build_s": round(build_s, 2), "study_s": round(study_s, 2), "study_cpu_s": round(study_cpu, 2),
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
           # the largest finished child's peak (a forked worker; 0 without): not added to this process's
           "peak_rss_child_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
           "steps": [{k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()} for r in steps],
           "recommendations": dict(list(recs.items())[:3]),
           "load_before": load_before, "load_after": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
