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

FORMAT = "metaeval-report"


class Context:
    """The state shared by the sections of one report."""

    def __init__(self, res: Results, th: dict[str, Any], metric: str, worst: int):
        self.res, self.th, self.metric, self.worst = res, th, metric, worst
        self.n_boot, self.seed = res.study.get("bootstrap"), res.study.get("seed")
        self.data: dict[str, Any] = {"format": FORMAT, "version": 1, "results_dir": str(res.path), "metric": metric}
        self.active = res.active
        self.ids = [c["cell"] for c in self.active]
        self.variant = str((res.config.get("analysis") or {}).get("tau", "b"))  # the analysis' tau variant
        self.pages: dict[str, str] = {}  # the transcript viewers, by path relative to the results folder
        self.verdict: dict[str, Any] = {}

    @property
    def metric_name(self) -> str:
        """The metric as tables print it (``V_strict``; :func:`metaeval.measures.display_name`)."""
        return display_name(self.metric)

    def synthetic(self) -> str:
        """The warning for a synthetic dataset (the demo: its registry description, as the study stored it), or ''."""
        prov = (self.res.summary.get("dataset") or {}).get("provenance") or {}
        if not prov.get("synthetic"):
            return ""
        self.data["synthetic"] = True
        return "Synthetic data: " + (prov.get("description") or "not real assessments.")

    def study_cells(self, key: str) -> dict[str, Any]:
        """cell id -> the study's ``study.json`` entry ``key`` of every cell that ran (``{}`` where missing)."""
        return {c["cell"]: self.res.study_cell(c["cell"]).get(key) or {} for c in self.active}

    def unreadable(self, path: Any, exc: Exception, what: str = "unreadable") -> None:
        """Record a file the report could not use (shown in the report's problems section, never hidden)."""
        self.res.problems.append(f"{path}: {what} ({type(exc).__name__}: {exc})")
