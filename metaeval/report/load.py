"""Read what the study wrote into a results folder (through ``metaeval.layout``): ``summary.json``,
``study/study.json``, ``study/reference_runs.csv``, per-cell ``runs.csv`` and ``analysis/*.csv``.

Both JSON files are read as records of the results schema (``metaeval.study.records``): a file of another schema
version is refused with one line naming it.  The report never loads the dataset, scores, fits or resamples: every
figure comes from these files.  A missing optional piece is recorded in ``Results.problems`` and the sections that need it say so instead of failing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from metaeval.errors import MetaevalError
from metaeval.layout import ResultsLayout
from metaeval.study.records import (CellSummary, ResultsSchemaError, StudyCell, StudyDoc, Summary, read_study,
                                    read_summary)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

log = logging.getLogger(__name__)


@dataclass
class Results:
    """A results folder as the study wrote it: the typed ``summary`` (:class:`~metaeval.study.records.Summary`) and,
    read on first use, the typed ``study`` (:class:`~metaeval.study.records.StudyDoc`) and the CSV tables."""

    layout: ResultsLayout
    summary: Summary
    problems: list[str] = field(default_factory=list)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def path(self) -> Path:
        return self.layout.root

    # ------------------------------------------------------------------ summary views
    @property
    def cells(self) -> tuple[CellSummary, ...]:
        return self.summary.cells

    @property
    def active(self) -> list[CellSummary]:
        """Cells that ran and have figures (not skipped, not withheld for too many FAILED labels)."""
        return self.summary.active

    @property
    def config(self) -> Mapping[str, Any]:
        """The composed configuration as the study echoed it (recorded, never read for a setting)."""
        return self.summary.config

    # ------------------------------------------------------------------ study outputs
    @property
    def study(self) -> StudyDoc | None:
        """``study/study.json`` (None when missing: sections that need it say so; a file of another results schema
        raises, like ``summary.json``)."""
        if "study" not in self._cache:
            doc, unreadable = None, False
            try:
                doc = read_study(self.layout)
            except ResultsSchemaError:  # another schema version: one error, like summary.json's
                raise
            except MetaevalError as exc:  # unreadable: the sections that need it say so
                self.problems.append(str(exc))
                unreadable = True
            if doc is None and not unreadable:
                self.problems.append(f"{self.layout.study_json}: missing; per-topic tau, leaderboards and "
                                     "disagreements need it (rerun the sweep to write the study)")
            self._cache["study"] = doc
        return self._cache["study"]

    def study_cell(self, cid: str) -> StudyCell | None:
        """The study's figures of cell ``cid`` (None without a study or for a cell it has none of)."""
        return None if self.study is None else self.study.cell(cid)

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


def load_results(path: str | Path, summary: Summary | None = None) -> Results:
    """Open a results folder (``<results_dir>/<name>/`` of a sweep, the one holding ``summary.json``).  ``summary``:
    the :class:`~metaeval.study.records.Summary` the study has just written there (the sweep hands over its own: the
    record it encoded into ``summary.json``, built from JSON-ready values, so decoding the file gives an equal one);
    None reads the file."""
    lay = ResultsLayout.open(path)
    return Results(layout=lay, summary=summary if summary is not None else read_summary(lay))
