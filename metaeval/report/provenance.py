"""Provenance: what produced a results folder, so a reader can reproduce it - as the study recorded it.

Config (as composed), prompt template ids/versions/hashes the judges used (``stats.prompts`` per cell, e.g.
``assign@v1:3f2a...``), dataset name and per-file checksums (from the dataset's provenance), seeds, and what the
study recorded when it ran (``Summary.provenance``, :mod:`metaeval.study.records.provenance`): package versions,
the git commit of the metaeval checkout, the platform and the time.  Nothing is read from this machine at report
time.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from metaeval.study.records import CellSummary, Summary, encode


def prompts_used(cells: Sequence[CellSummary]) -> list[dict[str, str]]:
    """One row per (cell, template) from ``stats.prompts`` (``id@version:sha``)."""
    rows = []
    for c in cells:
        for p in c.usage.prompts:
            ident, _, sha = str(p).partition(":")
            tid, _, ver = ident.partition("@")
            rows.append({"cell": c.cell, "template": tid, "version": ver, "sha": sha})
    return rows


def seeds(summary: Summary, cells: Sequence[CellSummary]) -> dict[str, Any]:
    """Every ``seed`` in the echoed config groups and in the cells' judge configs."""
    out: dict[str, Any] = {}
    for group in ("sweep", "analysis", "calibration"):
        g = summary.config_group(group)
        if "seed" in g:
            out[f"{group}.seed"] = g["seed"]
    for c in cells:
        jc: Mapping[str, Any] = c.judge_config or {}
        if "seed" in jc:
            out[f"judge {c.judge}.seed"] = jc["seed"]
    return out


def collect(summary: Summary) -> dict[str, Any]:
    """The provenance section's figures (also ``report.json``'s ``provenance``)."""
    cells = [c for c in summary.cells if not c.skipped]
    ds = summary.dataset
    prov = ds.provenance
    rec = summary.provenance
    return {
        "experiment": summary.experiment,
        "dataset": {"name": ds.name, "topics": ds.topics, "runs": ds.runs, "answers": ds.answers,
                    "source": prov.source if prov else None, "license": prov.license if prov else None,
                    "files": [{"filename": f.filename, "md5": f.md5, "sha256": f.sha256, "size": f.size,
                               "verified": f.verified} for f in (prov.files if prov else ())]},
        "prompts": prompts_used(cells),
        "packages": {"python": rec.python, **rec.packages},
        "recorded_at": rec.recorded_at,
        "platform": rec.platform,
        "metaeval": rec.metaeval,
        "seeds": seeds(summary, cells),
        "git": encode(rec.git),
        "config": dict(summary.config),
        "elapsed_s": summary.elapsed_s,
        "judging_s": summary.judging_s,
        "runtime_start_s": summary.runtime_start_s,
        "runtime_start": summary.runtime_start,
        "actors_start_s": summary.actors_start_s,
        "stopped": summary.stopped,
    }
