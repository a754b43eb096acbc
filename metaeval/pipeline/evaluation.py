"""Evaluation of a sweep's label sets: files per cell, analysis against the reference, held-out calibration,
``summary.json`` / ``summary.md`` and the report.  Reused as it is when nothing it reads has changed.

``EvaluationMixin`` is part of ``metaeval.pipeline.sweep.Sweep`` (it uses the sweep's config, dataset, cells,
store and per-cell statistics); it lives here so each module keeps one job.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from metaeval.pipeline.specs import content_hash

log = logging.getLogger("metaeval.pipeline.sweep")


class EvaluationMixin:
    def evaluation_key(self, label_sets: dict[str, Any]) -> str:
        """Hash of everything the evaluation reads: every cell's labels, the reference, the analysis, calibration
        and report settings.  Unchanged -> the previous analysis, calibration and report are reused."""
        from metaeval import __version__

        parts = {cid: _labels_digest(ls) for cid, ls in sorted(label_sets.items())}
        parts["_reference"] = _labels_digest(self.dataset.labels) if self.dataset.labels is not None else None
        parts["_config"] = {k: self.config.get(k) for k in ("analysis", "calibration", "report")}
        parts["_version"] = __version__
        return content_hash(parts, 32)

    def _previous(self, key: str) -> dict[str, Any] | None:
        path = self.out / "summary.json"
        if not path.exists():
            return None
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        return old if old.get("evaluation_key") == key else None

    def evaluate(self, label_sets: dict[str, Any], t0: float) -> dict[str, Any]:
        from metaeval.io.assignments import write_assignments
        from metaeval.io.scores import write_table
        from metaeval.scoring import run_scores, score_answers

        key = self.evaluation_key(label_sets)
        previous = self._previous(key)
        if previous is not None:  # same labels, same settings: reuse the evaluation (and the report) as it is
            old_cells = {c["cell"]: c for c in previous.get("cells", [])}
            analysis = {cid: old_cells[cid]["analysis"] for cid in label_sets if "analysis" in old_cells.get(cid, {})}
            calibration = {cid: old_cells[cid]["calibration"] for cid in label_sets if "calibration" in old_cells.get(cid, {})}
        else:
            for cid, ls in label_sets.items():
                d = self.out / "cells" / cid
                d.mkdir(parents=True, exist_ok=True)
                write_assignments(ls, d / "labels.jsonl")
                per = score_answers(ls)
                write_table(per, d / "scores.csv")
                write_table(run_scores(per), d / "runs.csv")
            analysis = self.analyse(label_sets)
            calibration = self.calibrate(label_sets)
        summary = {
            "evaluation_key": key,
            "evaluation_reused": previous is not None,
            "experiment": self.config.get("name"),
            "dataset": {"name": self.dataset.name, "topics": len(self.dataset.qids), "runs": len(self.dataset.run_ids),
                        "answers": len(self.dataset.answers), "provenance": self.dataset.provenance},
            "config": _public_config(self.config),
            "judging_s": self.judging_s,
            "stopped": self.stopped,
            "cells": self.cell_summaries(label_sets, analysis, calibration),
        }
        summary["elapsed_s"] = time.perf_counter() - t0
        _write_json(self.out / "summary.json", summary)
        from metaeval.pipeline.summary import summary_markdown

        (self.out / "summary.md").write_text(summary_markdown(summary), encoding="utf-8")
        report_current = previous is not None and (self.out / "report.html").exists()
        if (self.config.get("report") or {}).get("enabled", True) and not report_current:
            # report.html/.md/.json; a failure is logged, not fatal
            try:
                from metaeval.report import write_report

                write_report(self.out, seed=int(self.config.get("analysis", {}).get("seed", 0)))
            except Exception as exc:
                log.warning("report for %s failed (run `metaeval report %s` to retry): %s: %s", self.out, self.out,
                            type(exc).__name__, exc)
        return summary

    def analyse(self, label_sets: dict[str, Any]) -> dict[str, Any]:
        from metaeval.analysis import analyze

        if self.dataset.labels is None or not label_sets:
            return {}
        acfg = self.config.get("analysis", {})
        names = list(label_sets)
        res = analyze(self.dataset.labels, [label_sets[n] for n in names], names=names, metrics=acfg.get("metrics"),
                      variant=str(acfg.get("tau", "b")), n_boot=int(acfg.get("bootstrap", 1000)), seed=int(acfg.get("seed", 0)))
        res.write(self.out / "analysis")
        blocks = res.json.get("candidates", res.json)
        if isinstance(blocks, list):
            return {b.get("name"): b for b in blocks}
        return blocks if isinstance(blocks, dict) else {}

    def calibrate(self, label_sets: dict[str, Any]) -> dict[str, Any]:
        """Held-out calibration of each cell that labels the reference's own nuggets (human_* strategies)."""
        ccfg = self.config.get("calibration", {})
        if not ccfg.get("enabled", True) or self.dataset.labels is None:
            return {}
        from metaeval.pipeline.calibrate_cells import calibrate_cell

        out = {}
        for c in self.active:
            if c.strategy.nuggets != "human" or c.strategy.assignment != "judge":
                continue
            try:
                out[c.id] = calibrate_cell(self.dataset.labels, label_sets[c.id], ccfg, self.out / "cells" / c.id)
            except Exception as exc:  # report, never hide: the cell's summary says why calibration is missing
                log.warning("calibration of %s failed: %s", c.id, exc)
                out[c.id] = {"error": f"{type(exc).__name__}: {exc}"}
        return out

    def cell_summaries(self, label_sets, analysis, calibration) -> list[dict[str, Any]]:
        rows = []
        for c in self.cells:
            row: dict[str, Any] = {"cell": c.id, **c.describe()}
            if c.skipped:
                row["skipped"] = c.skipped
                rows.append(row)
                continue
            st = self.stats[c.id]
            this_run = st.as_dict()
            row["stats"] = {**st.totals(self.store), "jobs": st.jobs, "reused": st.reused, "executed": st.executed,
                            **{k: v for k, v in this_run.items() if k.startswith("est_")}}
            row["this_run"] = {k: this_run[k] for k in ("executed", "reused", "failed_jobs", "judge_calls", "calls",
                                                        "cache_hits", "retries", "reasks", "cost_usd")}
            ls = label_sets.get(c.id)
            if ls is not None:
                fc = ls.failure_counts()
                row["labels"] = fc["labels"]
                row["failed_labels"] = fc["support_failed"]
                row["failure_rate"] = fc["support_failed"] / fc["labels"] if fc["labels"] else 0.0
            if c.id in self.relevance_counts:
                row["relevance"] = self.relevance_counts[c.id]
            if c.id in analysis:
                row["analysis"] = analysis[c.id]
            if c.id in calibration:
                row["calibration"] = calibration[c.id]
            rows.append(row)
        return rows


def _public_config(config: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(config, default=lambda o: f"<{type(o).__name__}>"))


def _write_json(path: Path, obj: Any) -> None:
    from metaeval.io.jsonl import to_jsonable

    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(to_jsonable(obj), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def _labels_digest(ls: Any) -> str:
    """Content hash of a label set's labels (row order included)."""
    import hashlib

    import pandas as pd

    cols = ["qid", "run_id", "nugget_id", "nugget", "importance", "support", "support_raw"]
    h = pd.util.hash_pandas_object(ls.labels[cols].astype(str), index=False).to_numpy()
    return hashlib.sha256(h.tobytes()).hexdigest()[:24]
