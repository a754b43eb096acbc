"""A small multi-cell study for the fan-out tests (``metaeval.study.fanout``): the demo dataset's human labels as the
reference and four judge-like cells that exercise every per-cell part and both kinds of pair:

* ``ja__v1__human_auto`` and ``ja__v2__human_auto``: the reference's nuggets relabelled (a prompt pair: tau and
  label-agreement differences);
* ``ja__v1__auto_auto``: its own nuggets (other texts: no label agreement) on all but two topics (its replicates
  are re-drawn on the shared topic universe), paired with ``ja__v1__human_auto`` (a strategy pair);
* ``jb__v1__human_auto``: sampled twice (self-consistency).

``python -m tests.helpers.study_fanout OUT [--address HOST:PORT]`` writes the study to ``OUT`` (joining the Ray
cluster at ``--address`` first, with the package shipped as a sweep does) and prints one JSON line: how the cells
ran (``runner``: the study's own log line).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("compare_summaries", ROOT / "scripts" / "compare_summaries.py")
compare_summaries = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare_summaries)

CELLS = ("ja__v1__human_auto", "ja__v2__human_auto", "ja__v1__auto_auto", "jb__v1__human_auto")
NAME = "fan"


def _own_nuggets(ls: Any, name: str) -> Any:
    """``ls`` with nugget texts of its own (as a judge that created its nuggets)."""
    from metaeval.types import LabelSet

    lab = ls.labels.copy()
    lab["nugget"] = "own: " + lab["nugget"].astype(str)
    return LabelSet(name, lab, ls.answers, topics=ls.topics)


def study_input(root: Path, workers: Any, bootstrap: int = 60, calibration_workers: Any = 1) -> Any:
    """The study described in the module docstring, into ``root/fan``, with ``study.workers=workers`` (and
    ``calibration.workers``: the processes of a cell studied on its own)."""
    from metaeval.data.dataset import load_dataset
    from metaeval.layout import ResultsLayout
    from metaeval.study.run import StudyInput
    from metaeval.study.settings import build_study_settings
    from metaeval.testing.relabel import judge_like

    ref = load_dataset("demo").labels
    qids = list(ref.qids)
    cells = {
        CELLS[0]: judge_like(ref, name="ja", shift=0),
        CELLS[1]: judge_like(ref, name="ja", shift=1),
        CELLS[2]: _own_nuggets(judge_like(ref, name="ja", shift=2).subset(qids=qids[2:]), "ja"),
        CELLS[3]: judge_like(ref, name="jb", shift=3),
    }
    samples = {CELLS[3]: [cells[CELLS[3]], judge_like(ref, name="jb", shift=4)]}
    settings = build_study_settings({"metrics": ["v_strict", "a_strict"], "bootstrap": bootstrap, "seed": 0},
                                    {"folds": 4, "seed": 0, "workers": calibration_workers},
                                    study={"workers": workers})
    rows = [dict(zip(("judge", "prompt", "strategy"), c.split("__")), cell=c, stats={"judge_calls": 0, "calls": 0})
            for c in CELLS]
    return StudyInput(layout=ResultsLayout(root, NAME), label_sets=cells, reference=ref, settings=settings,
                      config={"name": NAME}, cells=rows, calibratable=[CELLS[0], CELLS[1], CELLS[3]],
                      dataset={"name": "demo"}, topics={q: "" for q in qids}, samples=samples)


def result_files(folder: Path) -> list[str]:
    """Every JSON and CSV file the study wrote under ``folder`` (relative paths)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.suffix in (".json", ".csv", ".jsonl"))


def differences(a: Path, b: Path) -> list[str]:
    """Every differing figure between two results folders of this study: the same files, JSON compared field by
    field by ``scripts/compare_summaries.py`` (exactly; the clock time and package of the provenance left out),
    CSV and JSONL byte for byte."""
    out = []
    fa, fb = result_files(a), result_files(b)
    if fa != fb:
        out.append(f"files: {sorted(set(fa) ^ set(fb))}")
    for rel in sorted(set(fa) & set(fb)):
        pa, pb = a / rel, b / rel
        if rel.endswith(".json"):
            old, new = (json.loads(p.read_text(encoding="utf-8")) for p in (pa, pb))
            for d in (old, new):
                if isinstance(d, dict):
                    d.pop("provenance", None)
            out += [f"{rel}: {line}" for line in compare_summaries.differences(old, new,
                                                                              extra_ignored=frozenset({"workers"}))]
        elif pa.read_bytes() != pb.read_bytes():
            out.append(f"{rel}: differs")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--address", default=None)
    ap.add_argument("--workers", default="auto")
    args = ap.parse_args(argv)
    if args.address:
        from metaeval.pipeline.ray_setup import cluster_runtime_env, init_ray

        init_ray(args.address, runtime_env=cluster_runtime_env())
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger("metaeval.study.run")
    logger.setLevel(logging.INFO)
    logger.addHandler(Keep())
    from metaeval.study.run import run_study

    run_study(study_input(Path(args.out), args.workers if args.workers == "auto" else int(args.workers)))
    print(json.dumps({"runner": [m for m in lines if m.startswith("the cells' studies")]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
