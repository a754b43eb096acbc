"""The raw judge leaderboard: run means of the judge's per-answer scores (:mod:`metaeval.scoring`) with a
topic-bootstrap percentile interval (topics resampled with replacement through
:func:`metaeval.analysis.resample.topic_weights`, the one topic bootstrap); percentile intervals of means of
scores in [0, 1] stay inside [0, 1]."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet


def raw_leaderboard(judge: "LabelSet", metrics: Sequence[str], level: float = 0.95, n_boot: int = 1000,
                    seed: int | np.random.Generator | None = 0) -> "pd.DataFrame":
    """Long table ``run_id, metric, estimate, se, ci_low, ci_high`` (se = bootstrap SD)."""
    import pandas as pd

    from metaeval.analysis.resample import topic_weights
    from metaeval.scoring import score_answers

    sc = score_answers(judge)
    qids = sorted(sc["qid"].astype(str).unique())
    runs = sorted(sc["run_id"].astype(str).unique())
    ti = sc["qid"].astype(str).map({q: i for i, q in enumerate(qids)}).to_numpy(int)
    ri = sc["run_id"].astype(str).map({r: i for i, r in enumerate(runs)}).to_numpy(int)
    w = topic_weights(len(qids), n_boot, seed)  # (B, T)
    a = (1 - level) / 2
    rows = []
    for m in metrics:
        X = np.full((len(qids), len(runs)), np.nan)
        X[ti, ri] = sc[m].to_numpy(float)
        ok = np.isfinite(X)
        est = np.where(ok, X, 0.0).sum(0) / np.maximum(ok.sum(0), 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = (w @ np.where(ok, X, 0.0)) / (w @ ok)
        lo, hi = np.nanquantile(reps, a, axis=0), np.nanquantile(reps, 1 - a, axis=0)
        sd = np.nanstd(reps, axis=0, ddof=1)
        rows += [(r, m, float(est[k]), float(sd[k]), float(lo[k]), float(hi[k])) for k, r in enumerate(runs)]
    return pd.DataFrame(rows, columns=["run_id", "metric", "estimate", "se", "ci_low", "ci_high"])
