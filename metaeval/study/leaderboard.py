"""Raw leaderboards per cell: the judge's run means with topic-bootstrap percentile CIs, beside the reference (human)
run score and both rankings.

* ``raw``: ``metaeval.calibration.raw.raw_leaderboard`` - run means of the judge's per-answer scores; CI: topics
  resampled with replacement, ``analysis.bootstrap`` replicates seeded with ``analysis.seed`` (the same setting as
  the analysis' tau CIs);
* ranks are competition ranks, 1 = best (:func:`metaeval.analysis.ranks.ranks`: equal scores share the best rank
  of their group; undefined last);
  ``rank_shift`` = raw rank - reference rank.

This is **the one raw leaderboard**: the study's ``study.json`` and the calibration's leaderboard
(``metaeval.study.calibration_workflow``) both call :func:`raw_leaderboards` with the analysis seed, so a run has one raw
interval, on the stream ``stream(analysis.seed, "analysis.topic_bootstrap")``, and ``analysis.seed`` moves it.
The calibrated (cross-fitted, out-of-fold) leaderboard is part of the cell's ``calibration.json``; nothing here
is fitted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from metaeval.analysis.ranks import ranks  # the one ranking rule (importable from here as before)
from metaeval.io.jsonl import finite_or_none

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet


def raw_leaderboards(judge: "LabelSet", ref_runs: "pd.DataFrame | None", metrics: Sequence[str], *, n_boot: int,
                     seed: int, level: float = 0.95) -> dict[str, Any]:
    """``{"level", "n_boot", "seed", "metrics": {metric: [row, ...]}}``, rows sorted by raw rank."""
    from metaeval.calibration.raw import raw_leaderboard

    out: dict[str, Any] = {"level": level, "n_boot": n_boot, "seed": seed, "metrics": {}}
    if n_boot > 0:
        raw = raw_leaderboard(judge, list(metrics), level, n_boot=n_boot, seed=seed)
    else:  # no bootstrap: the run means without intervals
        from metaeval.scoring import run_scores, score_answers

        rs = run_scores(score_answers(judge))
        import pandas as pd

        raw = pd.DataFrame([(r, m, float(v), None, None, None) for m in metrics for r, v in zip(rs["run_id"], rs[m])],
                           columns=["run_id", "metric", "estimate", "se", "ci_low", "ci_high"])
    for m in metrics:
        sub = raw[raw["metric"] == m]
        est = {str(r): float(v) for r, v in zip(sub["run_id"], sub["estimate"])}
        ci = {str(r): [finite_or_none(lo), finite_or_none(hi)] for r, lo, hi in zip(sub["run_id"], sub["ci_low"], sub["ci_high"])}
        ref = {} if ref_runs is None or m not in ref_runs else {str(r): float(v) for r, v in zip(ref_runs["run_id"], ref_runs[m])}
        raw_rank, ref_rank = ranks(est), ranks(ref) if ref else {}
        rows = []
        for run_id in sorted(est, key=lambda r: (raw_rank[r], r)):
            row = {"run_id": run_id, "reference": ref.get(run_id), "reference_rank": ref_rank.get(run_id),
                   "raw": finite_or_none(est[run_id]), "raw_ci": ci[run_id], "raw_rank": raw_rank[run_id]}
            if row["reference_rank"] is not None:
                row["rank_shift"] = row["raw_rank"] - row["reference_rank"]
            rows.append(row)
        out["metrics"][m] = rows
    return out
