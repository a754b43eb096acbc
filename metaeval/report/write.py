"""Write ``report.html``, ``report.md`` (+ ``report_files/*.png``) and ``report.json`` into a results folder."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from metaeval.io.jsonl import to_jsonable
from metaeval.report.build import build_report
from metaeval.report.model import Report
from metaeval.report.render_html import render_html
from metaeval.report.render_md import render_md

log = logging.getLogger(__name__)


def write_outputs(rep: Report, out_dir: str | Path) -> dict[str, Path]:
    out = Path(out_dir)
    files = out / "report_files"
    files.mkdir(parents=True, exist_ok=True)
    names = {f"{f.name}.png" for f in rep.figures}
    for old in files.glob("*.png"):  # figures of an earlier report that this one does not have
        if old.name not in names:
            old.unlink()
    for f in rep.figures:
        (files / f"{f.name}.png").write_bytes(f.png)
    paths = {"html": out / "report.html", "md": out / "report.md", "json": out / "report.json", "files": files}
    _atomic(paths["html"], render_html(rep))
    _atomic(paths["md"], render_md(rep, "report_files"))
    _atomic(paths["json"], json.dumps(to_jsonable(rep.data), indent=1, allow_nan=False) + "\n")
    return paths


def write_report(results_dir: str | Path, thresholds: Any = None, metric: str | None = None, n_boot: int = 1000,
                 seed: int = 0) -> tuple[Report, dict[str, Path]]:
    """Build the report of ``results_dir`` and write its three files there; returns (report, paths)."""
    rep = build_report(results_dir, thresholds=thresholds, metric=metric, n_boot=n_boot, seed=seed)
    paths = write_outputs(rep, results_dir)
    log.info("wrote %s", ", ".join(str(p) for p in paths.values()))
    return rep, paths


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
