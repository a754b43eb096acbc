"""The raw judge leaderboard: run means of the judge's per-answer scores (:mod:`metaeval.scoring`) with a
topic-bootstrap SE and percentile interval from :func:`metaeval.analysis.resample.bootstrap_run_means` (the one
topic bootstrap; an int ``seed`` draws from ``random_streams.stream(seed, purpose)``, by default the analysis'
``"analysis.topic_bootstrap"``).  Percentile intervals of means of scores in [0, 1] stay inside [0, 1]."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet


def raw_leaderboard(judge: "LabelSet", metrics: Sequence[str], level: float = 0.95, n_boot: int = 1000,
                    seed: int | np.random.Generator = 0, purpose: str | None = None) -> "pd.DataFrame":
    """Long table ``run_id, metric, estimate, se, ci_low, ci_high`` (se = bootstrap SD); the same topic resamples
    for every metric.  ``purpose``: the random stream of an int ``seed`` (default the analysis topic bootstrap)."""
    import pandas as pd

    from metaeval.analysis.resample import TOPIC_BOOTSTRAP, bootstrap_run_means, topic_weights
    from metaeval.scoring import score_answers

    sc = score_answers(judge)
    qids = sorted(sc["qid"].astype(str).unique())
    runs = sorted(sc["run_id"].astype(str).unique())
    ti = sc["qid"].astype(str).map({q: i for i, q in enumerate(qids)}).to_numpy(int)
    ri = sc["run_id"].astype(str).map({r: i for i, r in enumerate(runs)}).to_numpy(int)
    w = topic_weights(len(qids), n_boot, seed, purpose or TOPIC_BOOTSTRAP)  # (B, T)
    rows = []
    for m in metrics:
        X = np.full((len(qids), len(runs)), np.nan)
        X[ti, ri] = sc[m].to_numpy(float)
        b = bootstrap_run_means(X, n_boot, alpha=1 - level, weights=w)
        rows += [(r, m, float(b.estimate[k]), float(b.se[k]), float(b.ci_low[k]), float(b.ci_high[k]))
                 for k, r in enumerate(runs)]
    return pd.DataFrame(rows, columns=["run_id", "metric", "estimate", "se", "ci_low", "ci_high"])
