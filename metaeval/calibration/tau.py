"""Kendall's tau-b at the paper's three levels for calibration read-outs (before vs after correction).

``tau_before_after`` uses the analysis package's ``tau_levels`` (``metaeval.analysis.levels``) on per-answer
tables; ``tau3_matrix`` is the same computation on dense (topic x run) matrices, vectorised for the
simulation harness, where it runs thousands of times.  Levels (Pradeep et al. 2025, section 5):

* run: tau-b between run scores (for the matrix correction, its run-level inversion, not the per-answer mean);
* topic_avg: tau-b over runs within each topic, averaged over topics where it is defined;
* pooled: tau-b over all (topic, run) cells.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

log = logging.getLogger(__name__)


def _tau_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """tau-b per row of (T, R) matrices, over the cells present (not NaN) on both sides; NaN where undefined."""
    ok = np.isfinite(x) & np.isfinite(y)
    valid = ok[:, :, None] & ok[:, None, :] & ~np.eye(x.shape[1], dtype=bool)[None]
    with np.errstate(invalid="ignore"):
        sx = np.where(valid, np.sign(x[:, :, None] - x[:, None, :]), 0.0)
        sy = np.where(valid, np.sign(y[:, :, None] - y[:, None, :]), 0.0)
    s = (sx * sy).sum(axis=(1, 2)) / 2.0
    n0 = valid.sum(axis=(1, 2)) / 2.0
    n1 = ((sx == 0) & valid).sum(axis=(1, 2)) / 2.0
    n2 = ((sy == 0) & valid).sum(axis=(1, 2)) / 2.0
    den = np.sqrt((n0 - n1) * (n0 - n2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, s / np.where(den > 0, den, 1.0), np.nan)


def tau3_matrix(ref: np.ndarray, cand: np.ndarray, ref_run: np.ndarray | None = None, cand_run: np.ndarray | None = None) -> dict[str, float]:
    """Three tau-b levels from (T, R) per-answer score matrices without missing cells."""
    from scipy.stats import kendalltau

    ref_run = ref.mean(axis=0) if ref_run is None else ref_run
    cand_run = cand.mean(axis=0) if cand_run is None else cand_run
    per_topic = _tau_b_rows(ref, cand)
    okr = np.isfinite(ref_run) & np.isfinite(cand_run)
    okc = np.isfinite(ref) & np.isfinite(cand)
    return {
        "run": float(kendalltau(ref_run[okr], cand_run[okr]).statistic),
        "topic_avg": float(np.nanmean(per_topic)) if np.isfinite(per_topic).any() else float("nan"),
        "pooled": float(kendalltau(ref[okc], cand[okc]).statistic),
    }


def tau_levels_fn():
    """The analysis package's ``tau_levels`` or ``None`` when it is not available."""
    try:
        from metaeval.analysis.levels import tau_levels
    except ImportError:
        return None
    return tau_levels


def tau_before_after(ref: "pd.DataFrame", cand: "pd.DataFrame", metric: str, ref_run: "pd.Series | None" = None,
                     cand_run: "pd.Series | None" = None) -> dict[str, float]:
    """Tau-b at three levels between per-answer tables (run_id, qid, metric columns).

    ``ref_run`` / ``cand_run`` (indexed by run_id) override the run-level scores when a method estimates run
    scores directly.
    """
    from scipy.stats import kendalltau

    fn = tau_levels_fn()
    if fn is not None:
        lv = fn(ref, cand, metric=metric, variant="b")
        out = {"run": float(lv.run), "topic_avg": float(lv.topic_avg), "pooled": float(lv.pooled), "source": "metaeval.analysis.levels"}
    else:
        r = ref.pivot(index="qid", columns="run_id", values=metric)
        c = cand.pivot(index="qid", columns="run_id", values=metric).reindex(index=r.index, columns=r.columns)
        out = {**tau3_matrix(r.to_numpy(float), c.to_numpy(float)), "source": "metaeval.calibration.tau"}
    if ref_run is not None or cand_run is not None:
        rr = ref_run if ref_run is not None else ref.groupby("run_id")[metric].mean()
        cr = cand_run if cand_run is not None else cand.groupby("run_id")[metric].mean()
        common = rr.index.intersection(cr.index)
        out["run"] = float(kendalltau(rr[common].to_numpy(float), cr[common].to_numpy(float)).statistic)
    return out
