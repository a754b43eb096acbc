"""The report step of a workflow: ``metaeval report DIR`` and the report at the end of ``metaeval sweep`` /
``metaeval.sweep()``.  The report layer (``metaeval.report``) renders what the study wrote; this module decides
when to write it, what a failure means for the run, and the closing lines the terminal shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.study.records import Summary


def check_workers(workers: Any) -> None:
    """A bad ``--workers`` (figure-drawing processes): one line now, before anything is read."""
    from metaeval.errors import ConfigError
    from metaeval.forked import resolve_workers

    try:
        resolve_workers(workers, 1)
    except ConfigError:
        raise ConfigError(f"--workers {workers}: expected auto or a whole number >= 1") from None


def report_metric(metric: str | None) -> str | None:
    """``--metric`` in any spelling as the measure's name (unknown: one line naming the nearest measure)."""
    if not metric:
        return None
    from metaeval.measures import measure

    return measure(metric, "--metric").name


def folder_report(results_dir: Any, *, thresholds: Any = None, metric: str | None = None, latex: bool = False,
                  workers: Any = "auto"):
    """The report of a sweep's results folder, written into it: ``(report, paths)`` (``metaeval.report.write``).
    Checked first, each a one-line error: the metric, ``workers``, the folder (read-only, a file, a name too
    long: ``OutputError``; :func:`built_report` then still gives the report, for printing)."""
    from metaeval.io.outputs import check_output
    from metaeval.report.write import write_report

    metric = report_metric(metric)
    check_workers(workers)
    check_output(results_dir, kind="dir", option="RESULTS_DIR")
    return write_report(results_dir, thresholds=thresholds, metric=metric, latex=latex, workers=workers)


def built_report(results_dir: Any, *, thresholds: Any = None, metric: str | None = None, workers: Any = "auto"):
    """The report of a results folder built in memory only (nothing written)."""
    from metaeval.report.build import build_report

    return build_report(results_dir, thresholds=thresholds, metric=report_metric(metric), workers=workers)


def closing_lines(report_data: dict, html_path) -> list[str]:
    """The last lines of ``metaeval report`` and ``metaeval sweep``: a warning when the data are synthetic (the demo),
    the verdict with its reasons, and where ``report.html`` is (``report_data``: what ``report.json`` holds)."""
    lines = []
    if report_data.get("synthetic"):
        lines.append("note: synthetic data (not real assessments): these figures show the workflow only")
    verdict = (report_data.get("summary") or {}).get("verdict")
    if verdict:
        lines.append(verdict)
    lines.append(f"report: {html_path}")
    return lines


def report_after_study(layout, config: dict, summary: "Summary", workers: int | str = "auto",
                       problems: list[str] | None = None, drawing_server: bool = False) -> list[str]:
    """The report at the end of ``metaeval sweep`` (unless ``report.enabled`` is false); skipped when the study was
    reused and a report exists.  ``workers``: processes that draw the figures (the sweep passes
    ``calibration.workers``, so ``calibration.workers=1`` forks nothing); ``drawing_server``: they are forked from
    the drawing server the command started (``metaeval.report.plots.start_drawing_server``).  A failure is logged, not fatal: ``metaeval report DIR`` retries it.  Returns the
    sweep's closing lines (:func:`closing_lines`; from ``report.json`` when the report was reused), or [] without
    a report.  A failed report also adds one line to ``problems`` (the sweep then does not exit 0)."""
    import json
    import logging

    if not (config.get("report") or {}).get("enabled", True):
        return []
    if summary.evaluation_reused and layout.report_html.exists() and layout.report_json.exists():
        try:
            return closing_lines(json.loads(layout.report_json.read_text(encoding="utf-8")), layout.report_html)
        except (OSError, ValueError):
            pass  # unreadable: rebuild it below
    from metaeval.report.write import write_report

    try:
        # the study's own Summary of the folder: what it just encoded into summary.json, not decoded again (0.1 s)
        rep, paths = write_report(layout.root, workers=workers, drawing_server=drawing_server, summary=summary)
    except Exception as exc:  # noqa: BLE001 - the sweep's results stand without the report
        logging.getLogger("metaeval.report").warning("report for %s failed (run `metaeval report %s` to retry): %s: %s",
                                                      layout.root, layout.root, type(exc).__name__, exc)
        if problems is not None:
            problems.append(f"the report of {layout.root} failed ({type(exc).__name__}: {exc}); the results are "
                            f"stored: `metaeval report {layout.root}` retries it")
        return []
    return closing_lines(rep.data, paths["html"])
