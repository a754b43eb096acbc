"""Benchmark: a dry run of a grid of many judges (issue 25 item 21: 1,000 judges x 2 strategies in under 30 s).

Workload: a config folder holding ``--judges`` judge files (``judge/jNNNN.yaml``: the lexical judge with its own
``support_threshold``) and a grid ``grid/many.yaml`` listing all of them with the strategies ``auto_auto`` and
``human_auto`` on the demo dataset; then ``metaeval sweep --config-dir DIR grid=many --dry-run`` in a subprocess
(what a user types: composing the config, expanding the grid, checking every judge, the dry-run estimate).

Printed (one JSON line): judges, cell rows of the dry-run table, the command's wall time in seconds and its peak
RSS in MB (``getrusage(RUSAGE_CHILDREN)``).

    .venv/bin/python -m benchmarks.bench_many_judges [--judges 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_grid(root: Path, n_judges: int, strategies: tuple[str, ...] = ("auto_auto", "human_auto")) -> list[str]:
    """Write ``n_judges`` lexical judge files and a ``grid/many.yaml`` listing them under ``root``; return the names."""
    (root / "judge").mkdir(parents=True, exist_ok=True)
    (root / "grid").mkdir(parents=True, exist_ok=True)
    names = [f"j{i:04d}" for i in range(n_judges)]
    for i, name in enumerate(names):
        threshold = 0.3 + 0.6 * i / max(n_judges, 1)
        (root / "judge" / f"{name}.yaml").write_text(
            f"judge: lexical\nname: {name}\nsupport_threshold: {threshold:.4f}\npartial_threshold: 0.2\n"
            "concurrency: 4\n", encoding="utf-8")
    (root / "grid" / "many.yaml").write_text(
        f"judges: [{', '.join(names)}]\noptional_judges: []\nprompts: [v1]\nstrategies: [{', '.join(strategies)}]\n",
        encoding="utf-8")
    return names


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--judges", type=int, default=1000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "conf"
        write_grid(conf, args.judges)
        cmd = [sys.executable, "-m", "metaeval", "sweep", "--config-dir", str(conf), "grid=many", "--dry-run",
               f"results_dir={tmp}/results"]
        env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate()
        wall = time.perf_counter() - t
    if proc.returncode != 0:
        sys.stderr.write(err[-2000:])
        return proc.returncode
    cells = sum(1 for line in out.splitlines() if line.startswith("j") and "__" in line)  # one row per cell
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest child waited for
    print(json.dumps({"judges": args.judges, "strategies": 2, "cell_rows": cells, "dry_run_s": round(wall, 2),
                      "peak_rss_mb": rss}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
