"""Assemble a report from a results folder: every section's tables and figures from what the study wrote
(``summary.json``, ``study/study.json``, ``analysis/``, per-cell ``runs.csv``).  Nothing is loaded from the dataset,
scored, fitted or resampled here.

Each section is a function of the shared :class:`~metaeval.report.context.Context`, in its own module by family
(``verdict_section``, ``ranking_section``, ``compare_section``, ``agreement_section``, ``calibration_section``,
``disagreement_section``, ``consistency_section``, ``plan_section``, ``injection_section``,
``provenance_section``); :data:`SECTIONS` gives the page order (and so the key order of ``report.json``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from metaeval.errors import ConfigError
from metaeval.measures import display_name, measure
from metaeval.report import (agreement_section, calibration_section, compare_section, consistency_section,
                             disagreement_section,
                             injection_section, plan_section, plots, provenance_section, ranking_section,
                             rankset_section, verdict_section)
from metaeval.report import verdict as verdict_mod
from metaeval.report.context import FORMAT, Context
from metaeval.report.load import load_results
from metaeval.report.model import Report, Section, Text

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.study.records import Summary

log = logging.getLogger(__name__)

__all__ = ["FORMAT", "SECTIONS", "build_report"]

#: the report's sections in page order; one that returns None is left out (no empty sections)
SECTIONS: tuple[Callable[[Context], Section | None], ...] = (
    verdict_section.summary, verdict_section.verdict, ranking_section.tau, compare_section.section,
    consistency_section.section,
    ranking_section.bias, ranking_section.scatter, agreement_section.agreement, agreement_section.descriptive,
    ranking_section.leaderboards, calibration_section.section, rankset_section.section,
    disagreement_section.disagreements,
    verdict_section.usage, injection_section.injection, plan_section.section, provenance_section.provenance,
)


def build_report(results_dir: str | Path, thresholds: dict[str, Any] | str | Path | None = None,
                 metric: str | None = None, worst_topics: int = 3, workers: int | str | None = "auto",
                 drawing_server: bool = False, summary: "Summary | None" = None) -> Report:
    """Build the report of a sweep's results folder.

    ``thresholds``: a mapping (over the defaults) or a thresholds file path; the verdict's tau checks use the
    thresholds' ``metric``, by default the study's primary metric (``primary_metric`` in ``summary.json``: the first
    of ``analysis.metrics``); ``metric`` (tables and plots; any alias, ``V_strict``) defaults to the verdict's
    metric; both must be ones the study computed; ``worst_topics``: how many of the
    study's worst topics per cell to show; ``workers``: processes that draw the figures
    (:func:`metaeval.report.plots.draw_all`; default the available CPUs, 1 draws them in this process);
    ``drawing_server``: they are forked from the drawing server the caller started
    (:func:`metaeval.report.plots.start_drawing_server`), which has imported matplotlib already; ``summary``: the
    folder's ``summary.json`` as the study that just wrote it holds it (:func:`metaeval.report.load.load_results`;
    None reads the file).
    """
    th = dict(verdict_mod.DEFAULTS)
    if isinstance(thresholds, dict):
        th.update(thresholds)
    elif thresholds is not None:
        th = verdict_mod.load_thresholds(thresholds)
    # the workers import matplotlib while the report is built, and draw each figure as its section makes it
    with plots.drawing_workers(workers, server=drawing_server) as pool, plots.drawing_ahead(pool):
        return _build(results_dir, th, metric, worst_topics, pool, summary)


def _build(results_dir, th: dict[str, Any], metric: str | None, worst_topics: int, pool,
           summary: "Summary | None" = None) -> Report:
    res = load_results(results_dir, summary)
    known = list(res.study.metrics) if res.study is not None else []
    th["metric"] = measure(th.get("metric") or res.summary.primary_metric, "thresholds metric").name
    metric = measure(metric or th["metric"], "--metric").name
    for name, what in ((th["metric"], "the thresholds' metric"), (metric, "metric")):
        if known and name not in known:
            raise ConfigError(f"{what} {display_name(name)}: the study of {res.path} computed "
                              f"{', '.join(map(display_name, known))} only (analysis.metrics)")
    ctx = Context(res, th, metric, worst_topics)
    ctx.verdict = verdict_mod.evaluate(res.cells, th)
    ctx.data["verdict"] = ctx.verdict
    sections = [s for s in (build(ctx) for build in SECTIONS) if s is not None]
    ctx.data["problems"] = list(dict.fromkeys(res.problems))
    if ctx.data["problems"]:
        sections.append(Section("problems", "Problems while building the report",
                                [Text(p, "note") for p in ctx.data["problems"]]))
    title = f"Calibration report: {res.summary.experiment or res.path.name}" \
        + (" (synthetic data)" if ctx.synthetic() else "")
    rep = Report(title, sections, ctx.data, ctx.verdict, pages=ctx.pages)
    pending = [f for f in rep.figures if isinstance(f.svg, plots.Drawing)]
    for fig, text in zip(pending, plots.draw_all([f.svg for f in pending], pool=pool)):
        fig.svg = text
    ctx.data["figures"] = [f.name for f in rep.figures]
    return rep
