"""Write ``report.html``, ``report.md`` (+ ``report_files/*.svg``) and ``report.json`` into a results folder
(paths and atomic writes from ``metaeval.layout``); with ``latex=True`` also the main tables as LaTeX
(``report_latex/*.tex``, :mod:`metaeval.report.latex`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from metaeval.io.jsonl import to_jsonable
from metaeval.layout import ResultsLayout
from metaeval.report.build import build_report
from metaeval.report.model import Report
from metaeval.report.render_html import render_html
from metaeval.report.render_md import render_md

log = logging.getLogger(__name__)


def write_outputs(rep: Report, out_dir: str | Path) -> dict[str, Path]:
    lay = ResultsLayout.open(out_dir)
    files = lay.report_files
    files.mkdir(parents=True, exist_ok=True)
    names = {f.file_name for f in rep.figures}
    for pattern in ("*.png", "*.svg"):
        for old in files.glob(pattern):  # figures of an earlier report that this one does not have
            if old.name not in names:
                old.unlink()
    for f in rep.figures:
        lay.write_bytes(files / f.file_name, f.content)
    for rel, page in rep.pages.items():  # the transcript viewers, one per cell (paths the builder took from layout)
        lay.write_text(lay.root / rel, page)
    paths = {"html": lay.report_html, "md": lay.report_md, "json": lay.report_json, "files": files}
    lay.write_text(paths["html"], render_html(rep))
    lay.write_text(paths["md"], render_md(rep, "report_files"))
    lay.write_text(paths["json"], json.dumps(to_jsonable(rep.data), allow_nan=False) + "\n")  # C encoder: no indent
    return paths


def write_report(results_dir: str | Path, thresholds: Any = None, metric: str | None = None,
                 latex: bool = False, workers: int | str | None = "auto",
                 drawing_server: bool = False, summary: Any = None) -> tuple[Report, dict[str, Path]]:
    """Build the report of ``results_dir`` and write its three files there (and ``report_latex/`` when ``latex``);
    ``workers``: processes that draw the figures, ``drawing_server``: forked from the drawing server the caller
    started, ``summary``: the folder's summary as the study that just wrote it holds it
    (:func:`metaeval.report.build.build_report`).  Returns (report, paths)."""
    rep = build_report(results_dir, thresholds=thresholds, metric=metric, workers=workers,
                       drawing_server=drawing_server, summary=summary)
    paths = write_outputs(rep, results_dir)
    if latex:
        from metaeval.report.latex import write_latex

        paths["latex"] = write_latex(rep, ResultsLayout.open(results_dir))
    log.info("wrote %s", ", ".join(str(p) for p in paths.values()))
    return rep, paths
