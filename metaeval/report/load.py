"""Read what the study wrote into a results folder (through ``metaeval.layout``): ``summary.json``,
``study/study.json``, ``study/reference_runs.csv``, per-cell ``runs.csv`` and ``analysis/*.csv``.

The report never loads the dataset, scores, fits or resamples: every figure comes from these files.  A missing
optional piece is recorded in ``Results.problems`` and the sections that need it say so instead of failing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metaeval.errors import MetaevalError
from metaeval.layout import ResultsLayout

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

log = logging.getLogger(__name__)


@dataclass
class Results:
    layout: ResultsLayout
    summary: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def path(self) -> Path:
        return self.layout.root

    # ------------------------------------------------------------------ summary views
    @property
    def cells(self) -> list[dict[str, Any]]:
        return list(self.summary.get("cells", []))

    @property
    def active(self) -> list[dict[str, Any]]:
        """Cells that ran and have figures (not skipped, not withheld for too many FAILED labels)."""
        return [c for c in self.cells if not c.get("skipped") and not c.get("withheld")]

    @property
    def config(self) -> dict[str, Any]:
        return dict(self.summary.get("config", {}))

    # ------------------------------------------------------------------ study outputs
    @property
    def study(self) -> dict[str, Any]:
        """``study/study.json`` (``{}`` when missing: sections that need it say so)."""
        if "study" not in self._cache:
            try:
                doc = self.layout.read_json(self.layout.study_json, required=False)
            except MetaevalError as exc:
                self.problems.append(str(exc))
                doc = None
            if doc is None:
                self.problems.append(f"{self.layout.study_json}: missing; per-topic tau, leaderboards and "
                                     "disagreements need it (rerun the sweep to write the study)")
            self._cache["study"] = doc or {}
        return self._cache["study"]

    def study_cell(self, cid: str) -> dict[str, Any]:
        return (self.study.get("cells") or {}).get(cid) or {}

    @property
    def reference_runs(self) -> "pd.DataFrame | None":
        """The reference's run scores (``study/reference_runs.csv``)."""
        return self._table("reference_runs", self.layout.reference_runs)

    def runs(self, cid: str) -> "pd.DataFrame | None":
        return self._table(f"runs:{cid}", self.layout.runs(cid))

    def analysis_table(self, name: str) -> "pd.DataFrame | None":
        """A CSV from ``analysis/`` (e.g. ``descriptive.csv``), or None."""
        key = f"analysis:{name}"
        if key not in self._cache:
            p = self.layout.analysis_dir / name
            self._cache[key] = self._read(p) if p.exists() else None
        return self._cache[key]

    def _table(self, key: str, path: Path) -> "pd.DataFrame | None":
        if key not in self._cache:
            if path.exists():
                self._cache[key] = self._read(path)
            else:
                self.problems.append(f"{path}: missing")
                self._cache[key] = None
        return self._cache[key]

    def _read(self, path: Path) -> "pd.DataFrame | None":
        try:
            return self.layout.read_table(path)
        except MetaevalError as exc:
            self.problems.append(str(exc))
            return None


def load_results(path: str | Path) -> Results:
    """Open a results folder (``<results_dir>/<name>/`` of a sweep, the one holding ``summary.json``)."""
    lay = ResultsLayout.open(path)
    return Results(layout=lay, summary=lay.read_summary())
