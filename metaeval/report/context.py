"""What every report section reads and writes while the report is built: the results folder, the verdict's
thresholds, the metric, and ``data`` (the figures of ``report.json``, filled section by section, in page order).

A section is a function ``section(ctx) -> Section | None`` (``metaeval.report.build.SECTIONS`` lists them in page
order); it only formats what the study stored (``summary.json``, ``study/study.json``, ``analysis/``, per-cell
``runs.csv``) and records the same figures in ``ctx.data``.
"""

from __future__ import annotations

from typing import Any

# the sections' short names for metaeval.formatting.text (``-`` for None) and .percent (``n/a`` for None)
from metaeval.formatting import percent as pct, text as dash  # noqa: F401
from metaeval.measures import display_name
from metaeval.report.load import Results
from metaeval.study.records import StudyCell

FORMAT = "metaeval-report"


class Context:
    """The state shared by the sections of one report."""

    def __init__(self, res: Results, th: dict[str, Any], metric: str, worst: int):
        self.res, self.th, self.metric, self.worst = res, th, metric, worst
        study = res.study
        self.n_boot, self.seed = (None, None) if study is None else (study.bootstrap, study.seed)
        self.data: dict[str, Any] = {"format": FORMAT, "version": 1, "results_dir": str(res.path), "metric": metric}
        self.active = res.active
        self.ids = [c.cell for c in self.active]
        # the analysis' tau variant, as the study recorded it
        self.variant = study.variant if study is not None else str(res.summary.config_group("analysis").get("tau", "b"))
        self.pages: dict[str, str] = {}  # the transcript viewers, by path relative to the results folder
        self.verdict: dict[str, Any] = {}

    @property
    def metric_name(self) -> str:
        """The metric as tables print it (``V_strict``; :func:`metaeval.measures.display_name`)."""
        return display_name(self.metric)

    def synthetic(self) -> str:
        """The warning for a synthetic dataset (the demo: its registry description, as the study stored it), or ''."""
        ds = self.res.summary.dataset
        if not ds.synthetic:
            return ""
        self.data["synthetic"] = True
        return "Synthetic data: " + (ds.provenance.description or "not real assessments.")

    def study_cells(self) -> dict[str, StudyCell | None]:
        """cell id -> the study's ``study.json`` figures of every cell that ran (None where it has none)."""
        return {c.cell: self.res.study_cell(c.cell) for c in self.active}

    def unreadable(self, path: Any, exc: Exception, what: str = "unreadable") -> None:
        """Record a file the report could not use (shown in the report's problems section, never hidden)."""
        self.res.problems.append(f"{path}: {what} ({type(exc).__name__}: {exc})")
