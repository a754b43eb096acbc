"""The cells' studies as independent tasks on the sweep's executor (issue 34: the study fans out like the judging).

One task (:func:`cell_study`) is one cell's work that needs no other cell (on forked workers with several cells,
each of its parts below is a task of its own, :func:`cell_part`: :func:`run_cells`):

* its analysis part against the reference (:func:`metaeval.analysis.meta_evaluation.analyze_candidate`: tau at
  three levels with topic-bootstrap intervals, top-heavy taus, run-pair flips, label agreement, and the tau
  replicates and support-label counts its paired comparisons reuse);
* its calibration (:func:`metaeval.study.calibration_workflow.calibrate_study`; a failure is the cell's result);
* its ``study.json`` figures: raw leaderboards, per-run bias, strictness by importance, per-topic tau and the
  disagreements on the primary metric;
* its self-consistency when it was sampled k > 1 times (:func:`metaeval.study.consistency.cell_consistency`).

A task reads only its inputs and writes nothing, so it can run in a forked worker or in a Ray task on another node
(``metaeval.pipeline.task_map``: in this process, forked workers, or Ray tasks when the sweep's Ray runtime is up;
``study.workers``).  The driver (:mod:`metaeval.study.run`) writes every file from the returned
:class:`CellWork` and then does what needs several cells: the paired neighbour comparisons from the replicate
vectors the tasks returned (:func:`metaeval.analysis.meta_evaluation.combine`) and ``compare.json``; and what
reads the results folder (the judge's replies next to the disagreements, the transcript viewer).

Numbers do not depend on where or in which order the tasks run: every draw of a cell's work comes from the seeded
streams its settings name (``metaeval.random_streams``: ``analysis.seed`` for every bootstrap, ``calibration.seed``
for the splits), opened inside the task and keyed by purpose only - the same for every cell, so cells on the same
topics share their bootstrap resamples and a pair's difference is paired - never from a generator an earlier task
consumed.  ``calibration.workers`` moves no number either (each repeat reads its own fold stream): a fanned-out
cell runs its repeats in its own process.  Tested: the study's files from one process and from forked workers are
equal field by field (``tests/unit/test_study_fanout.py``), and on a two-node Ray cluster
(``tests/cluster/test_study_fanout_cluster.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.analysis.meta_evaluation import CandidatePart
    from metaeval.pipeline.task_map import TaskRun
    from metaeval.study.settings import StudySettings
    from metaeval.types import LabelSet


@dataclass(frozen=True)
class StudyContext:
    """What every cell's task reads (put in Ray's object store once): the reference (label set, its analysis side
    and per-answer scores), the settings, the topics' queries, and the ``calibration.workers`` a task uses."""

    reference: "LabelSet | None"
    settings: "StudySettings"
    ref_side: Any = None
    ref_scores: "pd.DataFrame | None" = None
    topics: Mapping[str, str] = field(default_factory=dict)
    calibration_workers: int | str = 1


@dataclass(frozen=True)
class CellTask:
    """One cell's inputs: its label set and per-answer scores, whether its judge labels the reference's own
    nuggets by construction (``calibratable``), whether it takes part in a paired comparison (``paired``: keep
    its support-label counts), and its k > 1 draws (``draws``, draw 0 first) when it was sampled."""

    cell: str
    labels: "LabelSet"
    scores: "pd.DataFrame"
    calibratable: bool = False
    paired: bool = False
    draws: tuple = ()


@dataclass
class CellWork:
    """One cell's results (see the module docstring); None where that part does not apply.  ``calibration`` is
    the calibration document (``{"error": ...}`` when it failed) and ``model`` the fitted model, ``figures`` the
    cell's ``study.json`` block without what the driver adds from the results folder, ``warnings`` what the
    driver logs, ``seconds`` the wall time of its task (of its part tasks, summed: :func:`run_cells`)."""

    cell: str
    analysis: "CandidatePart | None" = None
    calibration: dict[str, Any] | None = None
    model: Any = None
    figures: dict[str, Any] = field(default_factory=dict)
    consistency: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: the parts that failed (``"calibration"``, ``"consistency"``): their documents hold the error, no file is written
    failed: tuple[str, ...] = ()


def make_context(reference: "LabelSet | None", settings: "StudySettings", ref_scores: "pd.DataFrame | None",
                 topics: Mapping[str, str], fanned_out: bool) -> StudyContext:
    """The tasks' shared context; ``fanned_out``: the cells run in parallel, so each runs its calibration repeats
    in its own process (``calibration.workers`` 1), else as ``calibration.workers`` says."""
    ref_side = None
    if reference is not None:
        from metaeval.analysis.meta_evaluation import reference_side

        ref_side = reference_side(reference, scores=ref_scores)
    return StudyContext(reference, settings, ref_side, ref_scores, dict(topics),
                        1 if fanned_out else settings.calibration.workers)


def cell_study(ctx: StudyContext, task: CellTask) -> CellWork:
    """One cell's work (see the module docstring): pure, every figure from ``ctx`` and ``task``.  With one
    BLAS thread, wherever it runs (:func:`metaeval.forked.one_blas_thread`, as the study's driver).

    The analysis, the ``study.json`` figures and the self-consistency run in the same map of forked processes as
    the calibration's splits (:func:`~metaeval.study.calibration_workflow.workflow.calibrate_alongside`): a cell
    studied on its own (one cell, or cells one after the other) keeps every core busy until its last split, where
    the analysis used to wait for the calibration.  Where the calibration fails, or does not run, they run here."""
    from metaeval.forked import one_blas_thread

    t0 = time.perf_counter()
    work = CellWork(task.cell)
    parts = ([("analysis", lambda: _analysis(ctx, task))] if ctx.ref_side is not None else []) + [
        ("figures", lambda: _figures(ctx, task)), ("consistency", lambda: _consistency(ctx, task))]
    with one_blas_thread():
        if ctx.settings.calibration.enabled and ctx.reference is not None:
            from metaeval.forked import preload

            preload(PART_MODULES)  # the parts may go out to forked workers: each inherits these
        done = _calibration(ctx, task, work, [lambda f=f: _captured(f) for _, f in parts])
        if done is None:
            done = [_captured(f) for _, f in parts]
        for (name, _), (value, exc) in zip(parts, done):
            if exc is not None:
                raise exc
            _store_part(work, name, value)
    work.seconds = time.perf_counter() - t0
    return work


#: what a cell's analysis, figures and self-consistency import lazily (a cold sweep's workers imported these on their
#: first task, measured: ``tests/unit/test_calibration_one_map.py``)
PART_MODULES = ("scipy.special", "metaeval.analysis.agreement", "metaeval.analysis.clustered",
                "metaeval.analysis.confusion", "metaeval.analysis.descriptive", "metaeval.calibration.raw",
                "metaeval.calibration.strictness", "metaeval.io.runmap", "metaeval.study.bias",
                "metaeval.study.consistency", "metaeval.planning.consistency", "metaeval.planning.matrices",
                "metaeval.planning.precision", "metaeval.study.topics")


def _captured(fn) -> tuple[Any, BaseException | None]:
    """``(fn(), None)``, or ``(None, the exception)`` so that it travels back from a forked worker as a value."""
    try:
        return fn(), None
    except Exception as exc:
        return None, exc


def run_cells(ctx: StudyContext, tasks: Sequence[CellTask], workers: int | str | None) -> "tuple[TaskRun, list[CellWork]]":
    """Every cell's work on the runner ``metaeval.pipeline.task_map`` picks for ``workers`` (``study.workers``):
    ``(what ran, the cells' CellWork in the order of tasks)``.

    One :func:`cell_study` per cell, except on forked workers with several cells: there each part of each cell is
    a task of its own (:func:`cell_part`; the calibrations first, then the analyses, the figures, the
    self-consistency: longest first), so that the workers stay busy to the end (five demo cells of 0.4-0.7 s on
    two workers: one worker took three whole cells, 1.5 s; their parts balance).  A forked worker inherits the
    cells, so nothing more is copied; Ray tasks, which would each be sent the cell's labels, stay one per cell.
    Same numbers either way: each part reads only its cell and the shared context (``tests/unit/test_study_fanout.py``)."""
    from metaeval.pipeline.task_map import choose_runner, map_tasks

    if len(tasks) < 2 or choose_runner(workers, len(tasks))[0] != "pool":
        ran = map_tasks(cell_study, ctx, tasks, workers)
        return ran, list(ran.results)
    from metaeval.forked import preload

    if ctx.settings.calibration.enabled and ctx.reference is not None:
        from metaeval.study.calibration_workflow.procedure import TASK_MODULES

        preload(TASK_MODULES)
    preload(PART_MODULES)  # imported once here, before the fork, not by each worker on its first part
    items = [CellPart(t, p) for p in PARTS for t in tasks if _has_part(ctx, t, p)]
    ran = map_tasks(cell_part, ctx, items, workers)
    works = {t.cell: CellWork(t.cell) for t in tasks}
    for item, (value, exc, seconds) in zip(items, ran.results):
        work = works[item.task.cell]
        work.seconds += seconds
        if exc is not None:
            raise exc
        _store_part(work, item.part, value)
    return ran, [works[t.cell] for t in tasks]


def _store_part(work: CellWork, part: str, value: Any) -> None:
    """Put one part's value (as :func:`cell_part` returns it) into the cell's ``work``: the calibration's
    document, model, warnings and failure; the self-consistency's document and its warning (a failure); else the
    value itself."""
    if part == "calibration":
        work.calibration, work.model = value.calibration, value.model
        work.warnings += value.warnings
        work.failed += value.failed
    elif part == "consistency":
        work.consistency, warning = value
        if warning:
            work.warnings.append(warning)
            work.failed += ("consistency",)
    else:
        setattr(work, part, value)


#: a cell's parts as tasks of their own (:func:`run_cells`), in the order they go out: longest first
PARTS = ("calibration", "analysis", "figures", "consistency")


@dataclass(frozen=True)
class CellPart:
    """One part (one of :data:`PARTS`) of one cell's work, a task of its own (:func:`run_cells`)."""

    task: CellTask
    part: str


def _has_part(ctx: StudyContext, task: CellTask, part: str) -> bool:
    """Whether the cell has that part to compute (what :func:`cell_study` runs for it)."""
    if part == "calibration":
        return ctx.settings.calibration.enabled and ctx.reference is not None
    if part == "analysis":
        return ctx.ref_side is not None
    return part == "figures" or len(task.draws) >= 2


def cell_part(ctx: StudyContext, item: CellPart) -> tuple[Any, BaseException | None, float]:
    """``(value, exception or None, wall seconds)`` of one part of a cell, as :func:`cell_study` computes it: the
    calibration's value is a :class:`CellWork` holding its document, model, warnings and failure."""
    from metaeval.forked import one_blas_thread

    t0 = time.perf_counter()
    with one_blas_thread():
        if item.part == "calibration":
            work = CellWork(item.task.cell)
            _calibration(ctx, item.task, work)
            value, exc = work, None
        else:
            part = {"analysis": _analysis, "figures": _figures, "consistency": _consistency}[item.part]
            value, exc = _captured(lambda: part(ctx, item.task))
    return value, exc, time.perf_counter() - t0


def fans_out(workers: int | str | None, n_cells: int) -> bool:
    """Whether ``n_cells`` cells' studies would run in parallel (so :func:`make_context` knows)."""
    from metaeval.pipeline.task_map import choose_runner

    return choose_runner(workers, n_cells)[0] != "serial"


# ------------------------------------------------------------------ the parts
def _analysis(ctx: StudyContext, task: CellTask) -> "CandidatePart":
    from metaeval.analysis.meta_evaluation import analyze_candidate

    a = ctx.settings.analysis
    return analyze_candidate(ctx.ref_side, task.labels, task.cell, metrics=a.metrics, variant=a.tau,
                             n_boot=a.bootstrap, seed=a.seed, with_counts=task.paired, scores=task.scores)


def calibration_settings(settings: "StudySettings", workers: int | str) -> dict[str, Any]:
    """What ``calibrate_study`` is given: the study's metrics (selecting on its primary one), its bootstrap,
    ``calibration.methods`` and ``folds``, and ``workers`` processes for the repeats."""
    c, a = settings.calibration, settings.analysis
    return {"methods": c.methods, "folds": c.folds, "n_boot": a.bootstrap, "workers": workers,
            "metrics": list(a.metrics), "metric": a.primary_metric}


def _calibration(ctx: StudyContext, task: CellTask, work: CellWork, alongside=()) -> list | None:
    """``calibrate_study`` for the cell (every cell: score-level methods need no shared nuggets, label-level ones
    say so), with ``alongside`` run in the same map; returns their results, or None when they did not run (no
    calibration, or it failed: a failure is recorded, never hidden)."""
    if not ctx.settings.calibration.enabled or ctx.reference is None:
        return None
    from metaeval.study.calibration_workflow.workflow import calibrate_alongside

    try:
        settings = calibration_settings(ctx.settings, ctx.calibration_workers)
        result, done = calibrate_alongside(ctx.reference, task.labels, settings, seed=ctx.settings.calibration.seed,
                                           analysis_seed=ctx.settings.analysis.seed, alongside=alongside)
    except Exception as exc:  # report, never hide: the cell's summary says why calibration is missing
        work.warnings.append(f"calibration of {task.cell} failed: {exc}")
        work.calibration = {"error": f"{type(exc).__name__}: {exc}"}
        work.failed += ("calibration",)
        return None
    work.model = result.pop("model", None) if isinstance(result, dict) else None
    work.calibration = result
    return done


def shares_nuggets(ref: "LabelSet | None", ls: "LabelSet") -> bool:
    """True when the judge labelled the reference's own nuggets (same (qid, nugget_id) -> same text)."""
    if ref is None:
        return False
    r = ref.labels.drop_duplicates(["qid", "nugget_id"]).set_index(["qid", "nugget_id"])["nugget"]
    j = ls.labels.drop_duplicates(["qid", "nugget_id"]).set_index(["qid", "nugget_id"])["nugget"]
    common = r.index.intersection(j.index)
    return bool(len(common)) and bool((r.loc[common] == j.loc[common]).mean() > 0.9)


def _figures(ctx: StudyContext, task: CellTask) -> dict[str, Any]:
    """The cell's ``study.json`` block (:class:`metaeval.study.records.StudyCell`) without the judge's replies and
    the transcript viewer (read from the results folder by the driver): per metric the raw leaderboard, per-run
    bias and per-topic tau; strictness by importance where the judge labels the reference's nuggets; the
    disagreements on the primary metric (``analysis.primary_metric``)."""
    from metaeval.study import leaderboard, topics

    a = ctx.settings.analysis
    metrics = list(a.metrics)
    ls, per, ref_scores = task.labels, task.scores, ctx.ref_scores
    shared = task.calibratable or shares_nuggets(ctx.reference, ls)
    ref_runs = None
    if ref_scores is not None:
        from metaeval.scoring import run_scores

        ref_runs = run_scores(ref_scores)
    cell: dict[str, Any] = {"shares_reference_nuggets": shared, "per_topic_tau": {}, "disagreements": {}}
    cell["leaderboard"] = leaderboard.raw_leaderboards(ls, ref_runs, metrics, n_boot=a.bootstrap, seed=a.seed)
    if ref_scores is not None:
        from metaeval.study import bias  # per-run judge-minus-reference bias; strictness by importance (H9)

        cell["bias"] = bias.run_bias(ref_scores, per, metrics, n_boot=a.bootstrap, seed=a.seed)
        if shared:
            cell["strictness_by_importance"] = bias.strictness_by_importance(ctx.reference, ls, n_boot=a.bootstrap,
                                                                             seed=a.seed)
        taus = topics.per_topic_taus(ref_scores, per, metrics, a.tau)
        for m in metrics:
            tt = taus[m]
            cell["per_topic_tau"][m] = topics.tau_records(tt)
            if m == a.primary_metric:  # label-level detail costs time: the primary metric only
                cell["disagreements"][m] = topics.disagreements(tt, ref_scores, per, ctx.reference, ls, m,
                                                                shared=shared, queries=ctx.topics)
    return cell


def _consistency(ctx: StudyContext, task: CellTask) -> tuple[dict[str, Any] | None, str | None]:
    """``(document, warning)``: the cell's self-consistency over its k draws, on the primary metric with
    ``analysis.bootstrap`` (at most 1000) topic replicates and ``calibration.folds`` (None without k > 1 draws);
    a failure is the document (``error``) and the warning, never hidden."""
    if len(task.draws) < 2:
        return None, None
    from metaeval.study.consistency import cell_consistency

    a = ctx.settings.analysis
    try:
        return cell_consistency(list(task.draws), ctx.reference, a.primary_metric, bootstrap=min(a.bootstrap, 1000),
                                folds=ctx.settings.calibration.folds, seed=a.seed), None
    except Exception as exc:  # report, never hide
        return ({"error": f"{type(exc).__name__}: {exc}", "k": len(task.draws)},
                f"self-consistency of {task.cell} failed: {exc}")
