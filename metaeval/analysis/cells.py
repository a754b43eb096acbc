"""Score inputs for meta-evaluation and their alignment into topic x run matrices.

Every side of a comparison becomes the long table ``run_id, qid, metric, value``:

* a :class:`~metaeval.types.LabelSet` is scored with :func:`metaeval.scoring.score_answers` (policy given or
  default);
* a per-answer wide table (``run_id, qid`` + one column per metric, as ``score_answers`` returns) is melted;
* a long table is used as it is (e.g. from :func:`metaeval.io.scores.read_score_table` or
  :func:`metaeval.io.trec_eval.read_trec_eval_dir`).

Metric names that :func:`metaeval.measures.normalize_metric` maps onto a nugget metric (``V_strict`` ->
``v_strict``) are canonicalised; other names (``ndcg_cut_10``) are kept.  A cell is a (qid, run_id) with a
non-missing value; the cells of a comparison are the **intersection** of both sides, and cells present on only
one side are counted as dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from metaeval.errors import ConfigError
from metaeval.measures import METRICS, normalize_metric

LONG = ["run_id", "qid", "metric", "value"]
_COUNT_COLUMNS = ("n_nuggets", "n_vital", "n_failed")


def canonical_metric(name: str) -> str:
    key = normalize_metric(str(name))
    return key if key in METRICS else str(name)


def to_long(obj: Any, policy: Any = None) -> pd.DataFrame:
    """Any accepted score input -> long table ``run_id, qid, metric, value`` (strings for ids, float values)."""
    from metaeval.types import LabelSet

    if isinstance(obj, LabelSet):
        from metaeval.scoring import score_answers

        obj = score_answers(obj, policy)
    if not isinstance(obj, pd.DataFrame):
        raise ConfigError(f"cannot analyse a {type(obj).__name__}; give a LabelSet or a score DataFrame")
    missing = [c for c in ("run_id", "qid") if c not in obj.columns]
    if missing:
        raise ConfigError(f"score table lacks column(s) {', '.join(missing)} (columns: {', '.join(map(str, obj.columns))})")
    if "metric" in obj.columns and "value" in obj.columns:
        long = obj[LONG].copy()
    else:
        cols = [c for c in obj.columns if c not in ("run_id", "qid") and c not in _COUNT_COLUMNS
                and pd.api.types.is_numeric_dtype(obj[c])]
        if not cols:
            raise ConfigError("score table has no numeric metric column and no metric/value columns")
        long = obj.melt(id_vars=["run_id", "qid"], value_vars=cols, var_name="metric", value_name="value")
    long["run_id"] = long["run_id"].astype(str)
    long["qid"] = long["qid"].astype(str)
    names = {m: canonical_metric(m) for m in pd.unique(long["metric"])}
    long["metric"] = long["metric"].map(names)
    long["value"] = pd.to_numeric(long["value"], errors="coerce").astype(float)
    dup = long.duplicated(["run_id", "qid", "metric"])
    if dup.any():
        r = long[dup].iloc[0]
        raise ConfigError(f"duplicate score for run {r.run_id!r}, topic {r.qid!r}, metric {r.metric!r}")
    return long.reset_index(drop=True)


def metrics_of(long: pd.DataFrame) -> list[str]:
    """Metrics in a long table, nugget metrics first in ``METRICS`` order."""
    have = list(pd.unique(long["metric"]))
    return [m for m in METRICS if m in have] + sorted(m for m in have if m not in METRICS)


@dataclass(frozen=True)
class Aligned:
    """Reference ``x`` and candidate(s) ``ys`` as ``(T, R)`` matrices over common cells (NaN elsewhere)."""

    metric: str
    topics: list[str]
    runs: list[str]
    x: np.ndarray
    ys: tuple[np.ndarray, ...]
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def y(self) -> np.ndarray:
        return self.ys[0]

    @property
    def mask(self) -> np.ndarray:
        return ~np.isnan(self.x)

    @property
    def n_cells(self) -> int:
        return int(self.mask.sum())


def _resolve(long: pd.DataFrame, metric: str) -> str:
    """``metric`` as spelled in ``long`` (names match case-insensitively: ``NDCG_cut_10`` = ``ndcg_cut_10``)."""
    have = pd.unique(long["metric"])
    if metric in have:
        return metric
    same = [m for m in have if str(m).lower() == metric.lower()]
    return same[0] if same else metric


def _cells(long: pd.DataFrame, metric: str) -> pd.Series:
    sel = long[(long["metric"] == metric) & long["value"].notna()]
    return sel.set_index(["qid", "run_id"])["value"]


def _ids(index: pd.MultiIndex, k: int = 3) -> str:
    """A few topic and run ids of one side, for error messages."""
    topics = sorted(set(index.get_level_values(0)))
    runs = sorted(set(index.get_level_values(1)))
    show = lambda v: ", ".join(map(repr, v[:k])) + (f", ... ({len(v)} in all)" if len(v) > k else "")  # noqa: E731
    return f"topics {show(topics)} and runs {show(runs)}"


def align(reference: pd.DataFrame, candidates: list[pd.DataFrame] | pd.DataFrame, metric: str) -> Aligned:
    """Matrices of ``metric`` on the cells every side has (long tables in; see :func:`to_long`).

    ``dropped`` counts, per side (``reference``, ``candidate`` or ``candidate_<k>``), the cells that side has
    but the intersection lacks.  Topics and runs without any common cell are not in the matrices.
    """
    cands = [candidates] if isinstance(candidates, pd.DataFrame) else list(candidates)
    metric = canonical_metric(metric)
    sides = [_cells(t, _resolve(t, metric)) for t in [reference, *cands]]
    names = ["reference"] + (["candidate"] if len(cands) == 1 else [f"candidate_{k + 1}" for k in range(len(cands))])
    for name, s in zip(names, sides):
        if s.empty:
            raise ConfigError(f"metric {metric!r} has no values on the {name} side")
    common = sides[0].index
    for s in sides[1:]:
        common = common.intersection(s.index)
    if len(common) == 0:
        raise ConfigError(f"metric {metric!r}: the sides share no (topic, run) cell; "
                          + "; ".join(f"{name} has {_ids(s.index)}" for name, s in zip(names, sides)))
    dropped = {name: int(len(s) - len(common)) for name, s in zip(names, sides)}
    topics = sorted(common.get_level_values(0).unique())
    runs = sorted(common.get_level_values(1).unique())
    ti = pd.Index(topics).get_indexer(common.get_level_values(0))
    ri = pd.Index(runs).get_indexer(common.get_level_values(1))
    mats = []
    for s in sides:
        m = np.full((len(topics), len(runs)), np.nan)
        m[ti, ri] = s.reindex(common).to_numpy(dtype=float)
        mats.append(m)
    return Aligned(metric, topics, runs, mats[0], tuple(mats[1:]), dropped)
