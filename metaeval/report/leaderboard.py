"""Leaderboards per cell: the judge's raw run scores and the calibrated ones, each with a 95% CI, beside the
reference (human) run score.

* raw: ``metaeval.calibration.apply.raw_leaderboard`` - run means of the judge's per-answer scores with a
  topic-bootstrap percentile CI (topics resampled with replacement);
* calibrated: the cell's best-validated method (lowest held-out MAE, :func:`metaeval.report.tables.best_method`)
  fitted on every human-labelled topic with ``fit_models`` and applied with ``apply_models``; the CI is that
  method's own interval.  Because the method is fitted on the same topics it is applied to, the held-out
  figures of the calibration section (not this table) are the honest estimate of its error;
* ranks are 1 = best; ``rank_shift`` = raw rank - reference rank.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from metaeval.report.tables import best_method

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.report.load import Results

log = logging.getLogger(__name__)


def _ranks(values: dict[str, float]) -> dict[str, int]:
    """Competition ranks, 1 = highest; equal scores share the best rank of their group; NaN last."""
    key = {r: (-v if v == v else float("inf")) for r, v in values.items()}
    return {r: 1 + sum(key[o] < key[r] for o in values) for r in values}


def cell_leaderboard(res: "Results", cell: dict[str, Any], metric: str, n_boot: int = 1000, seed: int = 0,
                     level: float = 0.95) -> dict[str, Any]:
    from metaeval.calibration.apply import apply_models, fit_models, raw_leaderboard

    cid = cell["cell"]
    out: dict[str, Any] = {"cell": cid, "metric": metric, "method": None, "rows": [], "notes": []}
    judge = res.labels(cid)
    if judge is None:
        out["notes"].append("no labels.jsonl for this cell")
        return out
    raw = raw_leaderboard(judge, [metric], level, n_boot=n_boot, seed=seed)
    raw = raw.set_index("run_id")
    ref = res.reference_runs
    ref_scores = {} if ref is None else dict(zip(ref["run_id"], ref[metric]))
    cal = None
    method = best_method(cell.get("calibration"), metric)
    if method and res.reference is not None:
        try:
            bundle = fit_models(res.reference, judge, [method], [metric])
            pred = apply_models(bundle, judge, [metric], level, seed)[method]
            cal = pred.runs[pred.runs["metric"] == metric].set_index("run_id")
            out["method"] = method
            fig = ((cell.get("calibration") or {}).get("methods") or {}).get(method, {}).get(metric) or {}
            if fig.get("mae_before") is not None and fig["mae_after"] >= fig["mae_before"]:
                out["notes"].append(f"{method} has the lowest held-out MAE of the methods ({fig['mae_after']:.3f}), but not "
                                    f"below the raw judge's ({fig['mae_before']:.3f}): calibration does not help this cell; "
                                    "prefer the raw scores")
        except Exception as exc:  # shown in the report, never hidden
            log.warning("calibrated leaderboard of %s failed: %s", cid, exc)
            out["notes"].append(f"calibrated leaderboard failed: {type(exc).__name__}: {exc}")
    elif not method:
        out["notes"].append("no calibration for this cell (the judge made its own nuggets, or calibration was off)")
    raw_rank = _ranks({r: float(v) for r, v in raw["estimate"].items()})
    ref_rank = _ranks({r: float(v) for r, v in ref_scores.items()}) if ref_scores else {}
    cal_rank = _ranks({r: float(v) for r, v in cal["estimate"].items()}) if cal is not None else {}
    for run_id in sorted(raw.index, key=lambda r: (raw_rank[r], r)):
        row = {"run_id": run_id, "reference": ref_scores.get(run_id), "reference_rank": ref_rank.get(run_id),
               "raw": float(raw.at[run_id, "estimate"]), "raw_ci": [float(raw.at[run_id, "ci_low"]), float(raw.at[run_id, "ci_high"])],
               "raw_rank": raw_rank[run_id]}
        if cal is not None and run_id in cal.index:
            row.update({"calibrated": float(cal.at[run_id, "estimate"]),
                        "calibrated_ci": [_f(cal.at[run_id, "ci_low"]), _f(cal.at[run_id, "ci_high"])],
                        "calibrated_rank": cal_rank[run_id]})
        if row["reference_rank"] is not None:
            row["rank_shift"] = row["raw_rank"] - row["reference_rank"]
        out["rows"].append(row)
    return out


def _f(x: Any) -> float | None:
    x = float(x)
    return x if x == x else None


def leaderboards(res: "Results", metric: str, n_boot: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    return [cell_leaderboard(res, c, metric, n_boot, seed) for c in res.active]
