"""Benchmark: where one ``metaeval`` command's process time goes, phase by phase.

    python -m benchmarks.phase_times [--json FILE] -- sweep grid=single judge=vllm ...

Runs ``metaeval ARGS`` in a child process whose named steps are timed (wall seconds from the child's start, duration,
and the child's own CPU seconds in each; work in forked workers is not in that CPU), then prints one row per step and
three rows the steps do not show: the interpreter's start before the timer, what ``main()`` did outside the steps
(imports, argument parsing, the printed summary), and the time from ``main()``'s return to the process's end.  Steps: configuration
(``commands.sweep._composed``: ``compose_sweep`` in a forked child, beside the imports that follow it; its CPU column
is this process's part only), the sweep (``run_sweep``: dataset, jobs, judging, store), the study's parts
(``metaeval.study.run``: cell files, analysis, calibration, ``study.json``) and the report.  The child exits the way
the ``metaeval`` command does (:func:`metaeval.quick_exit.exit_quickly`) and runs as its process does
(``metaeval.cli.entry``: :mod:`metaeval.process_policy`, the drawing server).  Figures are
from one run: repeat it for a spread.  The source of the whole-process breakdown in ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

#: (module, function, shown as): the steps timed, in the order they run
STEPS = (
    # the sweep command composes in a forked child while it imports numpy, pandas and the pipeline: timed here
    ("metaeval.commands.sweep", "_composed", "configuration (Hydra compose, typed settings)"),
    ("metaeval.pipeline.sweep", "run_sweep", "sweep: dataset, jobs, judging, store"),
    ("metaeval.study.run", "write_cell_files", "study: cell label and score files"),
    ("metaeval.study.run", "study_cells", "study: the cells' tasks (analysis, calibration, study.json figures)"),
    ("metaeval.study.run", "analyse", "study: analysis files and the cells' pairs"),
    ("metaeval.study.run", "calibrate", "study: calibration files"),
    ("metaeval.study.run", "write_study_json", "study: study.json (replies, transcript viewer, file)"),
    ("metaeval.study.run", "run_study", "study, all of it"),
    ("metaeval.workflow.report", "report_after_study", "report (HTML, Markdown, JSON, figures)"),
)


def time_steps(steps, records: list[dict], t0: float, cpu=time.process_time) -> None:
    """Wrap each ``(module, function, label)`` of ``steps`` so that every call appends ``{step, start_s, wall_s,
    cpu_s}`` to ``records`` (``start_s`` from ``t0``; ``cpu``: the CPU clock, default this process's)."""
    import functools
    import importlib

    def timed(fn, label):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            start, c = time.perf_counter(), cpu()
            try:
                return fn(*a, **k)
            finally:
                records.append({"step": label, "start_s": start - t0, "wall_s": time.perf_counter() - start,
                                "cpu_s": cpu() - c})
        return wrapper

    for mod, name, label in steps:
        m = importlib.import_module(mod)
        setattr(m, name, timed(getattr(m, name), label))


def _child(out_path: str, args: list[str]) -> None:
    """Time the steps of ``metaeval ARGS`` in this process; write them to ``out_path`` as JSON lines."""
    from metaeval.process_policy import for_command

    for_command()  # as the `metaeval` command's own process (metaeval.cli.entry), before the steps' imports
    t0 = time.perf_counter()
    records: list[dict] = []
    time_steps(STEPS, records, t0)
    from metaeval.cli import main
    from metaeval.quick_exit import exit_quickly

    rc = main(args, command_process=True)  # what only the command's process starts (the drawing server)
    with open(out_path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
        fh.write(json.dumps({"main_returned_at": time.time(), "main_s": time.perf_counter() - t0}) + "\n")
    exit_quickly(rc)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[3:] if argv[2:3] == ["--"] else argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="-- then the metaeval command's arguments")
    ns = ap.parse_args(argv)
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    if not args:
        ap.error("give the metaeval command's arguments after --")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "steps.jsonl")
        start = time.time()
        res = subprocess.run([sys.executable, "-m", "benchmarks.phase_times", "--child", out, "--", *args],
                             stdout=subprocess.DEVNULL)
        end = time.time()
        lines = [json.loads(x) for x in open(out, encoding="utf-8")] if os.path.exists(out) else []
    if not lines:
        print(f"phase_times: the command ended with status {res.returncode} before main() returned", file=sys.stderr)
        return 1
    steps, tail = lines[:-1], lines[-1]
    total = end - start
    exit_s = end - tail["main_returned_at"]
    before_main = total - exit_s - tail["main_s"]
    outer = [r for r in steps if r["step"] != "study, all of it"]
    outer = [r for r in outer if not r["step"].startswith("study: ")] + [r for r in steps if r["step"] == "study, all of it"]
    rows = [{"step": "interpreter start (before the timer)", "start_s": None, "wall_s": before_main, "cpu_s": None}]
    rows += steps
    rows.append({"step": "main() outside the steps (imports, parsing, summary)", "start_s": None,
                 "wall_s": tail["main_s"] - sum(r["wall_s"] for r in outer), "cpu_s": None})
    rows.append({"step": "exit (main() returned -> process ended)", "start_s": None, "wall_s": exit_s, "cpu_s": None})
    print(f"metaeval {' '.join(args)}\nexit status {res.returncode}; process {total:.2f} s (one run; wall seconds; "
          "CPU is this process's, not its forked workers')\n")
    print(f"| {'step':58s} | start s | wall s | CPU s |\n|{'-' * 60}|--------:|-------:|------:|")
    for r in rows:
        st = "" if r["start_s"] is None else f"{r['start_s']:.2f}"
        cpu = "" if r["cpu_s"] is None else f"{r['cpu_s']:.2f}"
        print(f"| {r['step']:58s} | {st:>7s} | {r['wall_s']:6.2f} | {cpu:>5s} |")
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as fh:
            json.dump({"args": args, "status": res.returncode, "process_s": total, "rows": rows}, fh, indent=2)
    return 0 if res.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
