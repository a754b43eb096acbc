"""Read a sweep's results folder: ``summary.json``, per-cell files and the dataset's reference labels.

Everything is read lazily and cached; a missing optional piece (the dataset moved, a cell without labels) is
recorded in ``Results.problems`` and the sections that need it say so instead of failing the whole report.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metaeval.errors import ConfigError, FormatError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.data.dataset import Dataset
    from metaeval.types import LabelSet

log = logging.getLogger(__name__)


@dataclass
class Results:
    path: Path
    summary: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ summary views
    @property
    def cells(self) -> list[dict[str, Any]]:
        return list(self.summary.get("cells", []))

    @property
    def active(self) -> list[dict[str, Any]]:
        """Cells that ran (not skipped)."""
        return [c for c in self.cells if not c.get("skipped")]

    @property
    def config(self) -> dict[str, Any]:
        return dict(self.summary.get("config", {}))

    def cell_dir(self, cid: str) -> Path:
        return self.path / "cells" / cid

    # ------------------------------------------------------------------ dataset and reference
    @cached_property
    def dataset(self) -> "Dataset | None":
        from metaeval.data.dataset import load_dataset

        ds = self.summary.get("dataset", {})
        src = (self.config.get("dataset") or {}).get("source") or ds.get("name")
        if not src:
            self.problems.append("summary.json names no dataset; sections that need the reference labels are empty")
            return None
        try:
            return load_dataset(src)
        except Exception as exc:  # the report still shows what summary.json holds
            self.problems.append(f"dataset {src!r} could not be loaded ({type(exc).__name__}: {exc}); "
                                 "per-topic tau, scatter plots, leaderboards and disagreements need it")
            return None

    @cached_property
    def reference(self) -> "LabelSet | None":
        ds = self.dataset
        if ds is None:
            return None
        if ds.labels is None:
            self.problems.append(f"dataset {ds.name!r} has no human labels (no reference)")
        return ds.labels

    @cached_property
    def reference_scores(self) -> "pd.DataFrame | None":
        """Per-answer reference scores (``metaeval.scoring.score_answers`` on the human labels)."""
        from metaeval.scoring import score_answers

        ref = self.reference
        return None if ref is None else score_answers(ref)

    @cached_property
    def reference_runs(self) -> "pd.DataFrame | None":
        from metaeval.scoring import run_scores

        s = self.reference_scores
        return None if s is None else run_scores(s)

    # ------------------------------------------------------------------ per-cell files
    def scores(self, cid: str) -> "pd.DataFrame | None":
        return self._table(cid, "scores.csv")

    def runs(self, cid: str) -> "pd.DataFrame | None":
        return self._table(cid, "runs.csv")

    def labels(self, cid: str) -> "LabelSet | None":
        key = f"labels:{cid}"
        if key not in self._cache:
            from metaeval.io.assignments import read_assignments

            p = self.cell_dir(cid) / "labels.jsonl"
            try:
                self._cache[key] = read_assignments(p, name=cid) if p.exists() else None
            except FormatError as exc:
                self.problems.append(str(exc))
                self._cache[key] = None
            if self._cache[key] is None and not p.exists():
                self.problems.append(f"{p}: missing")
        return self._cache[key]

    def _table(self, cid: str, name: str) -> "pd.DataFrame | None":
        key = f"{name}:{cid}"
        if key not in self._cache:
            from metaeval.io.scores import read_table

            p = self.cell_dir(cid) / name
            if p.exists():
                self._cache[key] = read_table(p)
            else:
                self.problems.append(f"{p}: missing")
                self._cache[key] = None
        return self._cache[key]

    def analysis_table(self, name: str) -> "pd.DataFrame | None":
        """A CSV from ``analysis/`` (e.g. ``descriptive.csv``), or None."""
        key = f"analysis:{name}"
        if key not in self._cache:
            import pandas as pd

            p = self.path / "analysis" / name
            self._cache[key] = pd.read_csv(p) if p.exists() else None
        return self._cache[key]


def load_results(path: str | Path) -> Results:
    """Open a results folder (``<results_dir>/<name>/`` of a sweep, the one holding ``summary.json``)."""
    p = Path(path)
    f = p / "summary.json"
    if not p.is_dir():
        raise ConfigError(f"{p}: not a folder (expected a sweep's results folder holding summary.json)")
    if not f.exists():
        subs = sorted(q.parent.name for q in p.glob("*/summary.json"))
        hint = f"; did you mean {', '.join(str(p / s) for s in subs)}?" if subs else "; run `metaeval sweep` first"
        raise ConfigError(f"{p}: no summary.json{hint}")
    try:
        summary = json.loads(f.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FormatError(str(f), exc.lineno, "", f"not valid JSON: {exc.msg}") from exc
    if not isinstance(summary, dict) or not isinstance(summary.get("cells"), list):
        raise FormatError(str(f), 1, "cells", "expected an object with a list of cells (a metaeval sweep summary)")
    if summary.get("dry_run"):
        raise ConfigError(f"{f}: a dry run; there is nothing to report")
    return Results(path=p, summary=summary)
