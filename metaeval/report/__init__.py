"""Calibration reports: one self-contained HTML page, a Markdown file and a JSON file per results folder.

``metaeval report RESULTS_DIR`` (and the end of every ``metaeval sweep``) reads what a sweep wrote under
``<results_dir>/<name>/`` and writes ``report.html`` (inline CSS, PNG plots as ``data:`` URIs, no external URL),
``report.md`` (plots as PNG files in ``report_files/``) and ``report.json`` (every number shown, plus the verdict).

Modules, one job each:

* ``load``: the results folder (``summary.json``, per-cell scores/labels, the dataset's reference labels);
* ``provenance``: config, prompts, dataset checksums, package versions, seeds, git commit;
* ``tables``: usage, tau, descriptive statistics, strictness and calibration tables;
* ``leaderboard``: raw (topic-bootstrap CIs) and calibrated (best-validated method's CIs) leaderboards;
* ``topics``: per-topic tau and the nuggets/answers behind the worst topics;
* ``verdict``: configurable pass/fail thresholds per cell;
* ``plots``: matplotlib figures (Agg) as PNG bytes;
* ``build``: assembles the sections; ``render_html`` / ``render_md`` / ``render_text``: the three outputs;
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
