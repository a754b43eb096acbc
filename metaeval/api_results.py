"""The typed results of the Python API: :class:`CalibrationResult` (:func:`metaeval.calibrate`) and
:class:`SweepResult` (:func:`metaeval.sweep`) - dataclasses of DataFrames with ``.to_latex()``, the JSON document
each command writes kept as ``.json``.  Built from those documents only (they render, they compute nothing)."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from metaeval.measures import DEFAULT_PRIMARY

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.study.records import CellSummary, Summary

__all__ = ["CalibrationResult", "SweepResult"]


@dataclass
class CalibrationResult:
    """A calibration study (:func:`calibrate`): tables for a notebook or a paper, the JSON for the record.

    * ``recommendation``: one sentence, on the primary metric (``metric``);
    * ``leaderboard``: one row per (metric, run): the judge's score with its topic-bootstrap CI, the calibrated
      estimate of the human score with its interval (``human_estimate``, ``human_estimate_lo/hi``), their ranks,
      and the human score where topics are human-labelled;
    * ``candidates``: one row per (metric, method): status (ok / failed / refused, with the reason) and the
      held-out (outer-fold) MAE against the human run scores;
    * ``selection``: one row per metric: the method chosen out of fold, raw vs held-out MAE, whether it beats raw;
    * ``model``: the fitted model (``calibration-model.json``, for ``metaeval calibrate apply``);
    * ``json``: the whole ``calibration.json`` document (without the model).
    """

    metric: str
    recommendation: str
    leaderboard: "pd.DataFrame"
    candidates: "pd.DataFrame"
    selection: "pd.DataFrame"
    model: dict[str, Any] = field(repr=False)
    json: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "CalibrationResult":
        """From a ``calibrate_study`` document (with or without its ``model``; also a read ``calibration.json``), read
        as the results schema's :class:`~metaeval.study.records.CellCalibration` (a value that does not fit names its
        field)."""
        import pandas as pd

        from metaeval.study.records import CellCalibration, MetricCalibration, decode, encode

        doc = dict(doc)
        model = doc.pop("model", None) or {}
        cal = decode(CellCalibration, doc, "calibration.json")
        by_metric = dict(cal.by_metric) or {cal.metric: MetricCalibration(cal.candidates, cal.selection,
                                                                          cal.leaderboard, cal.recommendation)}
        lb, cands, sel = [], [], []
        for m, block in by_metric.items():
            for row in (encode(r) for r in block.leaderboard.rows):  # the row as written (its keys, in order)
                r = {"metric": m, **{k: v for k, v in row.items() if not k.endswith("_ci")}}
                for k, v in row.items():
                    if k.endswith("_ci"):
                        lo, hi = v if isinstance(v, (list, tuple)) and len(v) == 2 else (None, None)
                        # float NaN for a missing bound: the columns stay float, not object columns of None
                        r[k[:-3] + "_lo"], r[k[:-3] + "_hi"] = (float("nan") if lo is None else float(lo),
                                                                float("nan") if hi is None else float(hi))
                lb.append(r)
            for name, c in block.candidates.items():
                cands.append({"metric": m, "method": name, "level": c.level, "status": c.status,
                              "held_out_mae": None if c.held_out is None else c.held_out.mae.mean,
                              "reason": c.reason})
            s = block.selection
            sel.append({"metric": m, "method": s.method, "verdict": s.verdict, "raw_mae": s.raw_mae.mean,
                        "held_out_mae": s.held_out_mae.mean, "beats_raw": s.beats_raw, "n_topics": s.n_topics})
        return cls(metric=cal.metric, recommendation=cal.recommendation,
                   leaderboard=pd.DataFrame(lb), candidates=pd.DataFrame(cands), selection=pd.DataFrame(sel),
                   model=model, json=doc)

    def to_latex(self, table: str = "leaderboard", metric: str | None = None, **kwargs: Any) -> str:
        """One of the tables (``leaderboard``, ``candidates``, ``selection``) on ``metric`` (default: the primary
        one) as booktabs LaTeX (:func:`to_latex`; ``caption``, ``label``, ``digits``, ``columns``)."""
        df = _table(self, table, ("leaderboard", "candidates", "selection"))
        m = metric or self.metric
        if "metric" in df.columns:
            df = df[df["metric"] == m].drop(columns=["metric"])
        if table == "leaderboard":  # the paper's columns: the judge's score and the calibrated human estimate
            kwargs.setdefault("columns", [c for c in ("run_id", "judge_score", "judge_score_lo", "judge_score_hi",
                                                      "human_estimate", "human_estimate_lo", "human_estimate_hi",
                                                      "human_labelled") if c in df])
        kwargs.setdefault("caption", f"Calibration of {self.json.get('judge', 'the judge')} against "
                                     f"{self.json.get('reference', 'the reference')}: {table} on {m}.")
        from metaeval.io.latex import to_latex

        return to_latex(df.reset_index(drop=True), **kwargs)

    def write(self, out_dir: str | os.PathLike) -> list[Path]:
        """``calibration.json`` and ``calibration-model.json`` into ``out_dir`` (as ``metaeval calibrate``)."""
        import json

        from metaeval.io.atomic import atomic_write_text

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "calibration.json", out / "calibration-model.json"]
        for path, doc in zip(paths, (self.json, self.model)):
            atomic_write_text(path, json.dumps(doc, indent=1, allow_nan=False) + "\n")
        return paths

    def __getitem__(self, key: str) -> Any:
        """The old dict access (``result["recommendation"]``): the JSON document's key, with a DeprecationWarning."""
        warnings.warn("calibrate() returns a CalibrationResult; use its attributes, or .json[key] for the document",
                      DeprecationWarning, stacklevel=2)
        return self.model if key == "model" else self.json[key]


def _table(result: Any, table: str, names: Sequence[str]) -> "pd.DataFrame":
    if table not in names:
        raise TypeError(f"to_latex(table={table!r}): expected one of {', '.join(names)}")
    return getattr(result, table)


@dataclass
class SweepResult:
    """A finished sweep (:func:`sweep`).

    * ``cells``: one row per grid cell: ``cell, judge, prompt, strategy, status`` (``ok``, ``skipped`` or
      ``withheld``: FAILED share over ``sweep.max_failed_rate``, no figures) with ``reason``; ``labels,
      failed_labels, failure_rate``; usage (``judge_calls, calls, cost_usd``); Kendall's tau of the judge's run
      ranking against the reference's on the primary metric at run level, topic-averaged and pooled
      (``tau_run, tau_run_lo, tau_run_hi`` ...: 95% topic-bootstrap intervals); calibration's choice made out of
      fold (``calibration_method``; ``calibration_recommended`` is False when no method beat raw out of sample and
      the method only supplies the leaderboard's intervals) with the raw and held-out run MAE;
    * ``estimates`` (dry run only): calls, tokens and USD per cell;
    * ``notes``: grid lines (judges left out, with the install command) and the report's closing lines (verdict,
      where ``report.html`` is);
    * ``path``: the results folder; ``summary``: the study's typed summary (:class:`metaeval.study.records.Summary`,
      None for a dry run); ``json``: ``summary.json`` as written (its JSON document).
    """

    name: str
    path: Path
    metric: str
    cells: "pd.DataFrame"
    dry_run: bool = False
    estimates: "pd.DataFrame | None" = None
    notes: list[str] = field(default_factory=list)
    summary: "Summary | None" = field(default=None, repr=False)

    @property
    def json(self) -> dict[str, Any] | None:
        """``summary.json`` as written (None for a dry run)."""
        return None if self.summary is None else self.summary.to_json()

    @property
    def report(self) -> Path | None:
        """``report.html`` of the results folder, when the report was written."""
        p = self.path / "report.html"
        return p if p.exists() else None

    @classmethod
    def from_summary(cls, summary: "Summary", path: str | os.PathLike,
                     closing: Sequence[str] = ()) -> "SweepResult":
        """From the study's summary (the one :func:`metaeval.sweep` ran, or one read back from a results folder with
        :meth:`read`)."""
        import pandas as pd

        metric = summary.primary_metric  # what the study recorded (analysis.primary_metric)
        rows = [_cell_row(c, metric) for c in summary.cells]
        return cls(name=summary.experiment, path=Path(path), metric=metric, cells=pd.DataFrame(rows),
                   notes=[*summary.grid_notes, *closing], summary=summary)

    @classmethod
    def read(cls, path: str | os.PathLike) -> "SweepResult":
        """A results folder's ``summary.json`` (``<results_dir>/<name>/``), checked against the results schema."""
        from metaeval.layout import ResultsLayout
        from metaeval.study.records import read_summary

        lay = ResultsLayout.open(path)
        return cls.from_summary(read_summary(lay), lay.root)

    @classmethod
    def from_dry_run(cls, name: str, path: str | os.PathLike, cells: Sequence[Mapping[str, Any]]) -> "SweepResult":
        import pandas as pd

        rows, est = [], []
        for c in cells:
            rows.append({"cell": c.get("cell"), "judge": c.get("judge"), "prompt": c.get("prompt"),
                         "strategy": c.get("strategy"), "status": "skipped" if c.get("skipped") else "planned",
                         "reason": c.get("skipped")})
            st = c.get("stats") or {}
            if not c.get("skipped"):
                est.append({"cell": c.get("cell"), "calls": st.get("est_calls"),
                            "calls_upper_bound": bool(st.get("est_bound")), "input_tokens": st.get("est_input_tokens"),
                            "output_tokens": st.get("est_output_tokens"), "est_usd": st.get("est_cost_usd")})
        return cls(name=name, path=Path(path), metric=DEFAULT_PRIMARY, cells=pd.DataFrame(rows), dry_run=True,
                   estimates=pd.DataFrame(est))

    def to_latex(self, **kwargs: Any) -> str:
        """The cells' tau and calibration columns (the estimates for a dry run) as booktabs LaTeX (:func:`to_latex`)."""
        from metaeval.io.latex import to_latex

        if self.dry_run:
            return to_latex(self.estimates, **kwargs)
        cols = [c for c in ("cell", "status", "failure_rate", "tau_run", "tau_run_lo", "tau_run_hi", "tau_topic_avg",
                            "tau_pooled", "calibration_method", "calibration_recommended", "raw_mae", "calibrated_mae")
                if c in self.cells]
        kwargs.setdefault("columns", cols)
        kwargs.setdefault("caption", f"Sweep {self.name}: Kendall's tau of each cell's run ranking against the "
                                     f"reference on {self.metric} (95% topic-bootstrap interval), and calibration.")
        return to_latex(self.cells, **kwargs)

    def __getitem__(self, key: str) -> Any:
        """The old dict access (``result["cells"]``): the summary's key, with a DeprecationWarning."""
        warnings.warn("sweep() returns a SweepResult; use its attributes, or .json[key] for summary.json",
                      DeprecationWarning, stacklevel=2)
        doc = self.json
        if doc is None:
            return {"dry_run": True, "cells": self.estimates}[key]
        return doc[key]


def _cell_row(c: "CellSummary", metric: str) -> dict[str, Any]:
    """One summary cell as a flat row (see :class:`SweepResult`)."""
    st = c.usage
    status = "skipped" if c.skipped else "withheld" if c.withheld else "ok"
    row: dict[str, Any] = {"cell": c.cell, "judge": c.judge, "prompt": c.prompt, "strategy": c.strategy,
                           "status": status, "reason": c.skipped or c.withheld,
                           "labels": c.labels, "failed_labels": c.failed_labels, "failure_rate": c.failure_rate,
                           "judge_calls": None if c.stats is None else st.judge_calls,
                           "calls": None if c.stats is None else st.calls,
                           "cost_usd": None if c.stats is None else st.cost_usd}
    for level, col in (("run", "tau_run"), ("topic_avg", "tau_topic_avg"), ("pooled", "tau_pooled")):
        est = c.tau(metric, level)
        row[col], row[col + "_lo"], row[col + "_hi"] = est.tau, est.low, est.high
    sel = c.calibrated.selection if c.calibrated is not None else None  # the one decision (results schema record)
    row["calibration_method"] = None if sel is None else sel.method
    # recommended: the method beats raw out of sample (else it only supplies the leaderboard's intervals)
    row["calibration_recommended"] = sel is not None and sel.beats_raw  # the study's own rule (stable winner, not raw)
    row["raw_mae"] = None if sel is None else sel.raw_mae.mean
    row["calibrated_mae"] = None if sel is None else sel.held_out_mae.mean
    return row
