"""Calibration reports: one self-contained HTML page, a Markdown file and a JSON file per results folder.

``metaeval report RESULTS_DIR`` (and the end of every ``metaeval sweep``) renders what the study wrote under
``<results_dir>/<name>/`` (``summary.json``, ``study/``, ``analysis/``, ``cells/``; paths from ``metaeval.layout``)
and writes ``report.html`` (inline CSS and SVG plots, no external URL), ``report.md`` (plots as SVG files in
``report_files/``) and ``report.json`` (every number shown, plus the verdict); ``--latex`` adds ``report_latex/``.  The report never loads the
dataset, scores, fits or resamples: those figures are the study's (``metaeval.study``).

Modules, one job each:

* ``load``: the results folder as the study left it (summary, study.json, reference and cell run scores);
* ``provenance``: config, prompts, dataset checksums, package versions, seeds, git commit;
* ``tables``: usage, tau, descriptive statistics, strictness and calibration tables;
* ``verdict``: configurable pass/fail thresholds per cell, their reasons and the plain-language summary;
* ``plots``: matplotlib figures as SVG text (legends outside the axes);
* ``latex``: the main tables as booktabs ``.tex`` files;
* ``context``: what the sections share while one report is built (results, thresholds, metric, ``report.json``);
* ``verdict_section``, ``ranking_section``, ``agreement_section``, ``calibration_section``,
  ``disagreement_section``, ``consistency_section``, ``plan_section``, ``injection_section``,
  ``provenance_section``: the sections, one family each;
* ``build``: the sections in page order; ``render_html`` / ``render_md`` / ``render_text``: the three outputs;
* ``write``: ``write_report(results_dir, ...)`` - what the command and the sweep call.
"""

from __future__ import annotations

from typing import Any


def write_report(*args: Any, **kwargs: Any):
    """See :func:`metaeval.report.write.write_report` (imported lazily: matplotlib is heavy)."""
    from metaeval.report.write import write_report as _write

    return _write(*args, **kwargs)


def build_report(*args: Any, **kwargs: Any):
    """See :func:`metaeval.report.build.build_report`."""
    from metaeval.report.build import build_report as _build

    return _build(*args, **kwargs)


__all__ = ["build_report", "write_report"]
