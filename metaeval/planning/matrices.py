"""Dense (topic x run) matrices of per-answer scores, the unit every planning statistic works on.

Scores come from :func:`metaeval.scoring.score_answers` (default ``ScoringPolicy``), so a cell is exactly the
per-answer score the leaderboard averages; a (topic, run) without an answer is NaN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from metaeval.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet


def score_frame_matrix(scores: "pd.DataFrame", metric: str, qids: Sequence[str], runs: Sequence[str]) -> np.ndarray:
    """Pivot a per-answer score frame (``run_id, qid, <metric>``) to a (len(qids), len(runs)) float matrix."""
    if metric not in scores.columns:
        raise ConfigError(f"metric {metric!r} is not a score column (have {', '.join(map(str, scores.columns))})")
    wide = scores.pivot_table(index="qid", columns="run_id", values=metric, aggfunc="mean")
    return np.array(wide.reindex(index=list(qids), columns=list(runs)).to_numpy(dtype=float))  # writable copy


def score_matrix(labels: "LabelSet", metric: str, qids: Sequence[str] | None = None,
                 runs: Sequence[str] | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """(qids, runs, M) with ``M[t, r]`` = per-answer ``metric`` of run ``r`` on topic ``t`` (NaN: no answer)."""
    from metaeval.scoring import score_answers

    qids = list(qids) if qids is not None else labels.qids
    runs = list(runs) if runs is not None else labels.run_ids
    return qids, runs, score_frame_matrix(score_answers(labels), metric, qids, runs)


def common_runs(*label_sets: "LabelSet") -> list[str]:
    """Runs present in every label set (sorted); ConfigError when there are fewer than two."""
    runs = set(label_sets[0].run_ids)
    for ls in label_sets[1:]:
        runs &= set(ls.run_ids)
    if len(runs) < 2:
        raise ConfigError(f"planning needs at least two runs shared by {', '.join(ls.name for ls in label_sets)}; found {len(runs)}")
    return sorted(runs)
