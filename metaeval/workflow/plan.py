"""The assessor-planning workflow of ``metaeval plan``: read the pilot (human labels) and the judge (label files,
a sampled sweep cell's k draws, or a judge simulated from the reference through a confusion), optionally keep a
random pilot of the reference's topics, run the plan study (:func:`metaeval.study.assessor_plan.plan_study`:
precision of the PPI-calibrated leaderboard against labelled topics, the next topics, a replay, hours) and write
``plan.json``, ``plan.md`` and the plot; or, with ``--after``, the calibrated leaderboard after assessors labelled
topics in a plan's order (:func:`metaeval.study.assessor_plan.calibrated_after_plan`).  The command checks its
options and prints (``metaeval.commands.plan``).

Every draw is a planning stream of :mod:`metaeval.random_streams` (``planning.pilot``; the study's own) or the
simulated judge's seed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence


@dataclass(frozen=True)
class PlanInputs:
    """The plan's inputs: the reference (pilot) labels, the judge's label sets (k > 1: samples of one judge) and,
    for a simulated judge on the whole reference, ``sampler(rng)`` that draws it again (the study's replay)."""

    reference: Any
    judges: list
    sampler: Callable[[Any], Any] | None


@dataclass(frozen=True)
class PlanRun:
    """What ``metaeval plan`` did: the plan document and the folders it was written to (``--out`` first)."""

    plan: dict
    folders: list


def plan_inputs(reference: str, *, judges: Sequence[str] | None = None, simulate_judge: str | None = None,
                samples: int = 1, alpha: float = 2.0, pilot: int | None = None, seed: int = 0) -> PlanInputs:
    """Read the plan's inputs (see :class:`PlanInputs`).  Exactly one of ``judges`` (files or a sweep cell folder;
    a sampled cell's folder alone gives its k draws) and ``simulate_judge`` (a confusion: ``samples`` draws with
    Dirichlet concentration ``alpha`` when ``samples > 1``); ``pilot``: keep this many reference topics, drawn from
    the ``planning.pilot`` stream of ``seed``."""
    from metaeval.errors import ConfigError
    from metaeval.io import load_labels

    ref = load_labels(reference)
    if bool(judges) == bool(simulate_judge):
        raise ConfigError("plan needs exactly one of --judge FILE (repeatable) and --simulate-judge CONFUSION")
    sampler = None
    if simulate_judge:
        from metaeval.planning.consistency import simulate_sampling_judge
        from metaeval.simulation import simulate_judge as simulate_one

        name = f"simulated:{simulate_judge}"
        if samples > 1:
            labels = simulate_sampling_judge(ref, samples, simulate_judge, alpha=alpha, seed=seed, name=name)
        else:
            labels = [simulate_one(ref, simulate_judge, seed=seed, name=name)]
        conf, k = simulate_judge, samples
        sampler = ((lambda rng: simulate_sampling_judge(ref, k, conf, alpha=alpha, seed=rng)) if k > 1
                   else (lambda rng: simulate_one(ref, conf, seed=rng)))
    else:
        # a sweep cell folder is named by its cell id (its file is always labels.jsonl); a sampled cell's folder
        # (sweep.samples) gives all k draws: the judge's votes then shape the plan and its consistency section
        labels = []
        for j in judges:
            draws = cell_draws(Path(j)) if Path(j).is_dir() and len(judges) == 1 else []
            labels += draws or [load_labels(j, name=Path(j).name if Path(j).is_dir() else None)]
    if pilot:
        qids = ref.qids
        if not 3 <= pilot <= len(qids):
            raise ConfigError(f"--pilot {pilot}: expected 3..{len(qids)} (reference topics)")
        from metaeval.random_streams import stream

        pick = sorted(stream(seed, "planning.pilot").choice(qids, size=pilot, replace=False).tolist())
        ref = ref.subset(qids=pick, name=f"{ref.name}[pilot {pilot}]")
        sampler = None  # a redrawn judge would need the held-back human labels
    return PlanInputs(ref, labels, sampler)


def cell_draws(cell_dir: Path) -> list:
    """The k draws of a sampled sweep cell folder (``results/<name>/cells/<cell>``), or [] when it has none."""
    from metaeval.layout import ResultsLayout

    if not (cell_dir / "samples").is_dir() or cell_dir.parent.name != "cells":
        return []
    return ResultsLayout.open(cell_dir.parent.parent).read_samples(cell_dir.name)


def plan_folders(out: str | None, results: str | None) -> list[str]:
    """Where the plan is written: ``out`` first, then the study folder of the sweep's results folder ``results``
    (where ``metaeval report`` finds it)."""
    folders = []
    if results:
        from metaeval.layout import ResultsLayout

        folders.append(str(ResultsLayout.open(results).study_dir))
    if out:
        folders.insert(0, out)
    return folders


def write_plan(plan: dict, out: str, plot_format: str = "svg") -> None:
    """``plan.json``, ``plan.md`` (the report's plan section) and ``plan_curves.<plot_format>`` into ``out``."""
    import json

    from metaeval.io.atomic import atomic_write_text
    from metaeval.report.plan_section import render_markdown, write_plot

    os.makedirs(out, exist_ok=True)
    atomic_write_text(os.path.join(out, "plan.json"), json.dumps(plan, indent=2, allow_nan=False) + "\n")
    atomic_write_text(os.path.join(out, "plan.md"),
                      render_markdown(plan, heading=True, plot=f"plan_curves.{plot_format}") + "\n")
    write_plot(plan, os.path.join(out, f"plan_curves.{plot_format}"))


def plan(reference: str, settings: Mapping[str, Any], *, seed: int = 0, out: str | None = None,
         results: str | None = None, plot_format: str = "svg", **inputs: Any) -> PlanRun:
    """``metaeval plan``: the plan study of the inputs read by :func:`plan_inputs` (``reference``; ``inputs``: its
    ``judges``, ``simulate_judge``, ``samples``, ``alpha``, ``pilot``; ``seed`` for both) under ``settings`` (the
    keys of :func:`metaeval.study.assessor_plan.plan_study`), written to every folder of :func:`plan_folders`."""
    from metaeval.study.assessor_plan import plan_study

    read = plan_inputs(reference, seed=seed, **inputs)
    judges = read.judges if len(read.judges) > 1 else read.judges[0]
    doc = plan_study(read.reference, judges, dict(settings), seed=seed, judge_sampler=read.sampler)
    folders = plan_folders(out, results)
    for folder in folders:
        write_plan(doc, folder, plot_format)
    return PlanRun(doc, folders)


def after_plan(plan_path: str, reference: str, judge: str, metric: str | None = None) -> dict:
    """``metaeval plan --after``: the calibrated leaderboard after assessors labelled topics in the order of the plan
    at ``plan_path`` (``reference``: pilot + new human labels, ``judge``: all topics), on ``metric`` (None: the
    plan's).  An unreadable plan, or another schema, is one :class:`~metaeval.errors.ConfigError` line."""
    import json

    from metaeval.errors import ConfigError
    from metaeval.io import load_labels
    from metaeval.study.assessor_plan import calibrated_after_plan

    try:
        with open(plan_path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{plan_path}: cannot read the plan ({exc})") from exc
    if doc.get("schema") != "metaeval.plan/1":
        raise ConfigError(f"{plan_path}: field 'schema' is {doc.get('schema')!r}, expected 'metaeval.plan/1'")
    return calibrated_after_plan(doc, load_labels(reference), load_labels(judge), metric)


def write_after_plan(result: dict, out: str) -> str:
    """:func:`after_plan`'s document as ``calibrated_after_plan.json`` in ``out``; its path."""
    import json

    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "calibrated_after_plan.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    return path
