"""Scoring speed: read + score the NIST 927-line file, and a 2,500-line file built by resampling it.

Run: ``.venv/bin/python -m benchmarks.bench_scoring`` (prints medians of 5 runs, after imports).
Target (issue 2): scoring the 927-line file takes under 1 s after imports.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from metaeval.io.assignments import read_assignments
from metaeval.paths import shared_data_dir
from metaeval.scoring import run_scores, score_answers


def _time(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def make_big_file(src: Path, dst: Path, n_lines: int = 2500, seed: int = 0) -> None:
    """Resample lines of ``src`` under new run ids until ``n_lines`` lines (unique (qid, run_id))."""
    rng = random.Random(seed)
    lines = src.read_text(encoding="utf-8").splitlines()
    with open(dst, "w", encoding="utf-8") as fh:
        for i in range(n_lines):
            rec = json.loads(rng.choice(lines))
            rec["run_id"] = f"{rec['run_id']}__copy{i}"
            fh.write(json.dumps(rec) + "\n")


def main() -> int:
    nist = shared_data_dir() / "trec-rag-2024" / "nugget_assignment.20241108.jl"
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.jsonl"
        make_big_file(nist, big)
        for name, path in (("927 lines", nist), ("2,500 lines", big)):
            labels = read_assignments(path)
            read_s = _time(lambda: read_assignments(path))
            score_s = _time(lambda: run_scores(score_answers(labels)))
            total_s = _time(lambda: run_scores(score_answers(read_assignments(path))))
            results[name] = {"read_s": read_s, "score_s": score_s, "read_and_score_s": total_s}
    print(f"{'input':<12} {'read (s)':>9} {'score (s)':>10} {'read+score (s)':>15}")
    for name, r in results.items():
        print(f"{name:<12} {r['read_s']:9.3f} {r['score_s']:10.4f} {r['read_and_score_s']:15.3f}")
    ok = results["927 lines"]["read_and_score_s"] < 1.0
    print(f"target: 927-line read+score < 1 s after imports: {'PASS' if ok else 'FAIL'}")
    if "--json" in sys.argv:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
