"""Benchmark: the study of one grid cell, then its report - what a sweep does after the judging.

Input: the reference is the NIST assignment file (21 topics x 45 runs, 927 answers); the cell's label set is
``metaeval.testing.relabel.judge_like`` of it (a deterministic, judge-like relabelling of the same nuggets, so the
cell is calibratable).  ``--scale K`` repeats the topics K times under new ids (``<qid>~<k>``; K=16: 14,832
answers over 336 topics) for the scale target.

Timed, after metaeval's imports and input building, twice in one process: a first ("cold") pass that also pays
the one-time lazy imports of matplotlib and scipy submodules, then a second ("warm") pass on a fresh results folder
(the figures the targets refer to; the cold ones are printed beside them): ``metaeval.study.run_study`` (scores, analysis with ``--bootstrap``
topic-bootstrap replicates, cross-validated calibration, per-topic tau, leaderboards, summary) and
``metaeval.report.write_report`` (HTML + Markdown + JSON + plots from what the study wrote); wall and CPU
(``process_time``: this process, all threads, plus its finished children: the calibration's forked workers) seconds,
the latter less sensitive to other load on the machine.  Memory: ``peak_rss_mb`` is this process's peak RSS;
with ``--pss``, ``peak_tree_pss_mb`` is the peak, sampled every 100 ms by a thread (which costs some CPU: time the
study without it), of the proportional set size summed over this process and its forked workers (a page shared by
n processes counts 1/n in each: the memory the whole study holds; Linux only).  Targets (2 cores):
1x study + report <= 3 s; 16x study <= 20 s and <= 1 GiB peak RSS.  Prints one JSON line; asserts nothing.

    .venv/bin/python -m benchmarks.bench_study [--scale 1] [--bootstrap 1000] [--no-report] [--profile N]
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


def repeat_topics(labels, k: int):
    """``labels`` with every topic repeated ``k`` times under new ids ``<qid>~<i>`` (k=1: unchanged)."""
    if k <= 1:
        return labels
    import pandas as pd

    from metaeval.types import LabelSet

    labs = [labels.labels.assign(qid=labels.labels["qid"].astype(str) + f"~{i}") for i in range(k)]
    ans = [labels.answers.assign(qid=labels.answers["qid"].astype(str) + f"~{i}") for i in range(k)]
    lab = pd.concat(labs, ignore_index=True)
    for col in ("importance", "support"):
        lab[col] = pd.Categorical(lab[col], categories=labels.labels[col].cat.categories)
    return LabelSet(f"{labels.name}-x{k}", lab, pd.concat(ans, ignore_index=True))


def build_input(root: Path, scale: int, bootstrap: int, workers="auto"):
    from metaeval.io.assignments import read_assignments
    from metaeval.layout import ResultsLayout
    from metaeval.paths import shared_data_dir
    from metaeval.study.run import StudyInput
    from metaeval.testing.relabel import judge_like

    nist = read_assignments(shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl", name="nist")
    ref = repeat_topics(nist, scale)
    judge = judge_like(ref, name="judge-like")
    cid = "judge-like__v1__human_auto"
    from metaeval.study.settings import build_study_settings

    settings = build_study_settings({"tau": "b", "bootstrap": bootstrap, "seed": 0},
                                    {"enabled": not os.environ.get("BENCH_NO_CAL"), "methods": None, "folds": 5, "seed": 0,
                                     "workers": workers})
    lay = ResultsLayout(root, "bench-study")
    cells = [{"cell": cid, "judge": "judge-like", "prompt": "v1", "strategy": "human_auto",
              "stats": {"judge_calls": 0, "calls": 0}}]
    return StudyInput(layout=lay, label_sets={cid: judge}, reference=ref, settings=settings,
                      config={"name": "bench-study"}, cells=cells,
                      calibratable=[cid], dataset={"name": f"nist-x{scale}", "topics": len(ref.qids),
                                                   "runs": len(ref.run_ids), "answers": len(ref.answers)},
                      topics={q: "" for q in ref.qids})


class TreePss:
    """Samples the summed PSS of this process and its descendants every ``interval`` s in a thread (Linux)."""

    def __init__(self, interval: float = 0.1, enabled: bool = True):
        import threading

        self.peak_mb: float | None = None
        self.enabled = enabled
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, args=(interval,), daemon=True)

    @staticmethod
    def _tree(pid: int) -> list[int]:
        out, todo = [], [pid]
        while todo:
            p = todo.pop()
            out.append(p)
            try:
                for task in os.listdir(f"/proc/{p}/task"):
                    with open(f"/proc/{p}/task/{task}/children") as fh:
                        todo += [int(c) for c in fh.read().split()]
            except OSError:
                continue
        return out

    @staticmethod
    def _pss_kb(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                return next((int(line.split()[1]) for line in fh if line.startswith("Pss:")), 0)
        except OSError:
            return 0

    def _loop(self, interval: float) -> None:
        while not self._stop.is_set():
            mb = sum(self._pss_kb(p) for p in self._tree(os.getpid())) / 1024
            self.peak_mb = mb if self.peak_mb is None else max(self.peak_mb, mb)
            self._stop.wait(interval)

    def __enter__(self):
        if self.enabled and os.path.exists("/proc/self/smaps_rollup"):
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def cpu_with_children() -> float:
    """CPU seconds of this process (all threads) plus its finished children (the calibration's forked workers)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--no-report", action="store_true")
    ap.add_argument("--profile", type=int, default=0, help="print the N top functions by cumulative CPU time")
    ap.add_argument("--profile-out", default=None, help="also write the raw cProfile stats (CPU time) to this file")
    ap.add_argument("--keep", default=None,
                    help="write the results folders here (KEEP/cold, KEEP/warm; must not hold results) and keep them, "
                         "e.g. to compare summary.json / study.json across code versions")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    ap.add_argument("--pss", action="store_true",
                    help="sample the summed PSS of this process and its workers (peak_tree_pss_mb; costs some CPU)")
    ap.add_argument("--workers", default="auto",
                    help="calibration.workers: processes for the cross-fitting's repeats (default auto; 1 = in-process)")
    args = ap.parse_args(argv)

    import metaeval.analysis  # noqa: F401  (imports are not timed)
    import metaeval.report.write  # noqa: F401
    import metaeval.study.run  # noqa: F401
    from metaeval.study.run import run_study

    from benchmarks.phase_times import STEPS, time_steps

    steps: list[dict] = []  # the study's and the report's steps, both passes (``pass`` tells them apart)
    time_steps([st for st in STEPS if st[0] == "metaeval.study.run" and st[1] != "run_study"] + [("metaeval.report.write", "write_report", "report")],
               steps, time.perf_counter(), cpu=cpu_with_children)

    def one_pass(root: Path, profile: int = 0) -> dict:
        first = len(steps)
        t = time.perf_counter()
        inp = build_input(root, args.scale, args.bootstrap, args.workers if args.workers == "auto" else int(args.workers))
        build_s = time.perf_counter() - t
        prof = None
        if profile:
            import cProfile

            # CPU time (this process), not wall: the machine is shared, and other load would inflate wall times
            prof = cProfile.Profile(time.process_time)
            prof.enable()
        t, c = time.perf_counter(), cpu_with_children()
        run_study(inp)
        study_s, study_cpu = time.perf_counter() - t, cpu_with_children() - c
        report_s = report_cpu = None
        if not args.no_report:
            t, c = time.perf_counter(), time.process_time()
            sys.modules["metaeval.report.write"].write_report(inp.layout.root)  # the timed one
            report_s, report_cpu = time.perf_counter() - t, time.process_time() - c
        if prof is not None:
            import pstats

            prof.disable()
            if args.profile_out:
                prof.dump_stats(args.profile_out)
            pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(profile)
        return {"inp": inp, "build_s": build_s, "study_s": study_s, "study_cpu_s": study_cpu, "report_s": report_s,
                "report_cpu_s": report_cpu, "steps": steps[first:]}

    # Pass 1 ("cold") pays the one-time lazy imports of the libraries the study and report use (matplotlib, scipy
    # submodules: a per-process constant); pass 2 ("warm", the figure the targets refer to) is the study's own
    # cost, on a fresh results folder with the same input.  Both are reported.
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.keep) if args.keep else Path(tmp)
        with TreePss(enabled=args.pss) as pss:
            cold = one_pass(base / "cold")
            warm = one_pass(base / "warm", args.profile)
    ref = warm["inp"].reference
    out = {"scale": args.scale, "topics": len(ref.qids), "runs": len(ref.run_ids), "answers": len(ref.answers),
           "bootstrap": args.bootstrap, "build_s": warm["build_s"], "study_s": warm["study_s"],
           "report_s": warm["report_s"], "total_s": warm["study_s"] + (warm["report_s"] or 0.0),
           "study_cpu_s": warm["study_cpu_s"], "report_cpu_s": warm["report_cpu_s"],
           "cold_study_s": cold["study_s"], "cold_report_s": cold["report_s"],
           "cold_total_s": cold["study_s"] + (cold["report_s"] or 0.0),
           "cold_study_cpu_s": cold["study_cpu_s"], "cold_report_cpu_s": cold["report_cpu_s"],
           "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "workers": args.workers, "peak_tree_pss_mb": pss.peak_mb,
           "steps": [{k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()} for r in warm["steps"]],
           "load": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
