"""The one sweep workflow, used by ``metaeval sweep`` and ``metaeval.sweep()``: checks, then the pipeline (label
sets), the study (every figure, ``summary.json``, the cells' natural neighbours compared) and the report, with the
results folder locked throughout.

``drive_sweep(settings, cells, overrides)`` takes the typed settings tree (``metaeval.workflow.settings``) built
once by ``metaeval.workflow.compose.compose_sweep``; nothing below it sees the composed dict except as a record
(``config.yaml``, ``summary.json``).  It returns a :class:`SweepRun`; the command prints it, the API wraps it.
"""

from __future__ import annotations

import logging

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from metaeval.workflow.settings import RunSettings

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.study.records import Summary


@dataclass
class SweepRun:
    """What a driven sweep produced: the summary (None for a dry run) or, for a dry run, the per-cell estimates."""

    summary: "Summary | None"
    dry_run_cells: list[dict[str, Any]] | None = None
    #: the report's closing lines (synthetic-data note, verdict, where report.html is); [] without a report
    closing: list[str] = field(default_factory=list)
    #: figures the sweep was asked for and did not produce (a judged cell without the primary metric's taus, a
    #: failed report), one line each; the sweep exits non-zero when there is any
    missing: list[str] = field(default_factory=list)
    #: cells whose FAILED labels exceed ``sweep.max_failed_rate``, one line each (``metaeval.pipeline.health``:
    #: everything is stored, yet the run must not look like a success: the command exits ``EXIT_FAILED_RATE``)
    failed: list[str] = field(default_factory=list)
    #: the study's comparison of the grid's natural neighbour cells (``analysis/compare.json``: ``lines``, one
    #: plain-language line per pair, and how they were compared); None without a pair
    comparison: dict[str, Any] | None = None


def public_config(config: dict, with_judges: bool = False) -> dict:
    """The composed config as saved and printed: no private keys, no in-memory objects."""
    return {k: v for k, v in config.items() if not k.startswith("_") and (with_judges or k != "judges")}


def prepare_run(settings: RunSettings, cells: list, overrides: Sequence[str]) -> None:
    """The driver's checks, in order, before any job runs: results folder name and cell ids (slugs inside
    results_dir), every judge (unknown stage, missing extra, API-key variable unless a dry run or a replay), the
    folder's dataset/grid fingerprint.  Only then (not for a dry run) are the overrides and the composed config
    saved."""
    import yaml

    from metaeval.hashing import content_hash
    from metaeval.io.outputs import check_output
    from metaeval.layout import ResultsLayout
    from metaeval.pipeline.grid import check_cells
    from metaeval.pipeline.lock import RunLock

    p, sw = settings.pipeline, settings.sweep
    layout = ResultsLayout(p.results_dir, p.name)
    for c in cells:
        layout.cell_dir(c.id)
    check_output(layout.root, kind="dir", option="results_dir/name")  # a file, /proc, read-only, too long: one line
    if p.cache.active_path:
        check_output(p.cache.active_path, kind="file", option="cache.path")
        from metaeval.judges.cache import check_cache_path

        check_cache_path(str(p.cache.active_path))  # over SQLite's path limit, or a link: one line, dry run too
    check_cells(cells, sw.relevance, need_keys=not (sw.dry_run or sw.offline), single=p.single)
    if sw.dry_run:
        return

    def where(path):  # the same file named relatively or absolutely is the same dataset
        return str(Path(path).resolve()) if path and Path(path).exists() else path

    ds = p.dataset
    dataset_fp = content_hash([ds.name, where(ds.source), where(ds.nuggets)])
    grid_fp = content_hash(sorted(c.id for c in cells))
    layout.check_fingerprint(dataset_fp, grid_fp, write=False)
    with RunLock(layout.lock):  # a sweep already running on this name stops here, before anything is overwritten
        from metaeval.layout import endpoint_changes

        urls = {c.judge.deployment.name: c.judge.deployment.base_url for c in cells if c.judge.deployment}
        for line in endpoint_changes(layout, urls):  # once per deployment
            logging.getLogger("metaeval.sweep").warning(line)
        layout.check_fingerprint(dataset_fp, grid_fp, write=True)
        layout.write_text(layout.overrides_yaml, yaml.safe_dump(list(overrides), sort_keys=False))
        layout.write_text(layout.config_yaml, yaml.safe_dump(public_config(settings.document, with_judges=True),
                                                             sort_keys=False))


def drive_sweep(settings: RunSettings, cells: list, overrides: Sequence[str],
                progress: Callable[[str, int], Any] | None = None, drawing_server: bool = False) -> SweepRun:
    """Check, judge, study and report one sweep (see the module docstring); ``drawing_server``: the report's
    drawing workers are forked from the drawing server the command started
    (``metaeval.report.plots.start_drawing_server``)."""
    from metaeval.pipeline.sweep import run_sweep

    if settings.sweep.offline:  # read by every ChatClient (local Ray actors inherit it); not a job identity
        os.environ["METAEVAL_OFFLINE"] = "1"
    prepare_run(settings, cells, overrides)  # every check before anything is written
    from metaeval.workflow.compose import log_grid_notes

    log_grid_notes(settings.document)  # judges left out of the grid, once (after the checks: an error stays one line)
    t0 = time.perf_counter()
    outcome = run_sweep(settings.pipeline, cells, progress, hold_lock=True,  # label sets (folder lock held)
                        when_idle=import_study_and_report)  # while the last replies are awaited
    if outcome.dry_run:
        return SweepRun(summary=None, dry_run_cells=outcome.cells)
    from metaeval.pipeline.health import failed_rate_problems
    from metaeval.study import study_sweep
    from metaeval.study.summary import missing_figures
    from metaeval.workflow.report import report_after_study

    closing: list[str] = []
    try:
        summary = study_sweep(outcome, settings.study, settings.document, t0)  # every figure, summary.json / .md
        missing = missing_figures(summary)
        comparison = neighbour_comparison(outcome.layout)  # read while the folder is still locked
        if settings.report_enabled:
            closing = report_after_study(outcome.layout, settings.document, summary,  # renders what the study wrote
                                         workers=settings.study.calibration.workers, problems=missing,
                                         drawing_server=drawing_server)
    finally:
        outcome.release()  # the folder lock: held until the study and the report are written
    from metaeval.study.records import encode

    # the pipeline's rule over its cell rows (the summary's cells as written)
    failed = [] if summary.stopped else failed_rate_problems([encode(c) for c in summary.cells],
                                                             settings.sweep.max_failed_rate)
    return SweepRun(summary=summary, closing=closing, missing=missing, comparison=comparison, failed=failed)


#: the packages the study and the report are made of, and the libraries they import that the judging does not
AFTER_JUDGING_PACKAGES = ("metaeval.study", "metaeval.calibration", "metaeval.analysis", "metaeval.planning",
                          "metaeval.report")
AFTER_JUDGING_MODULES = ("scipy.special", "threadpoolctl", "multiprocessing.pool", "metaeval.scoring",
                         "metaeval.io.scores", "metaeval.io.transcripts", "metaeval.pipeline.health",
                         "metaeval.pipeline.task_map", "metaeval.workflow.report", "rich.console", "rich.table")


def import_study_and_report() -> None:
    """Import every module of :data:`AFTER_JUDGING_PACKAGES` and :data:`AFTER_JUDGING_MODULES` (about 0.25 s):
    what the study and the report would otherwise import after the judging, on its critical path.  The sweep
    runs it while the assignment stage's last jobs are in flight (``Sweep.when_idle``: a thread, while the event
    loop mostly waits on the judge's replies).  A module that does not import (an optional extra missing) is
    skipped: the code that needs it says so when it runs."""
    import importlib
    import pkgutil

    from metaeval.forked import preload

    names: list[str] = []
    for package in AFTER_JUDGING_PACKAGES:
        try:
            pkg = importlib.import_module(package)
        except Exception:  # noqa: BLE001 - see the docstring
            continue
        names += [package] + [m.name for m in pkgutil.walk_packages(pkg.__path__, package + ".", onerror=lambda _: None)]
    preload([*names, *AFTER_JUDGING_MODULES], skip_failures=True)


def neighbour_comparison(layout: Any) -> dict[str, Any] | None:
    """The comparison the study wrote for this sweep (``analysis/compare.json``, ``metaeval.study.compare``), or
    None when it compared no pair (a single cell, or no bootstrap)."""
    import json

    from metaeval.study.compare import COMPARE_FILE

    path = layout.analysis_dir / COMPARE_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("lines") else None
