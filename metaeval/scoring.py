"""Per-answer nugget scores and run aggregation (Pradeep et al. 2025, section 4.4; castorini/nuggetizer).

The measures themselves (names, aliases, the per-answer formulas ``score = sum_i f_i c_i / sum_i f_i`` of V_strict,
A_strict, V, A, W_strict and W, their families and credits) are defined once in :mod:`metaeval.measures`; this module
computes them for whole label sets under a ``ScoringPolicy``.

A run's score for a metric is the mean of its per-answer scores over the topics it answered.

Policies (``ScoringPolicy``), all documented defaults follow castorini/nuggetizer so scores match it exactly:

* ``no_vital``: an answer whose denominator is zero (no vital nugget for V; no nugget at all for A/W) scores
  ``"zero"`` (default, as nuggetizer) or is ``"exclude"``-d (NaN, skipped by the run mean).
* ``failed_support``: a FAILED assignment label counts as ``"not_support"`` (default, as nuggetizer: in the
  denominator, no credit), is ``"exclude"``-d from numerator and denominator, or counts as ``"support"``
  (an upper bound; use with the default for lower/upper bounds on scores).
* ``failed_importance``: a nugget whose importance is FAILED is, by default (``"nuggetizer"``), counted in A,
  not in V (it is not vital) and given weight 0 in W - exactly nuggetizer's behaviour; or ``"exclude"``-d from
  every metric; or treated ``"as_okay"`` / ``"as_vital"``.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from metaeval.errors import ConfigError
from metaeval.measures import METRICS, OKAY_WEIGHT, PARTIAL_CREDIT, REGISTRY, family_weight, measure, normalize_metric

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet

__all__ = ["METRICS", "SCORE_COLUMNS", "ScoringPolicy", "normalize_metric", "run_scores", "score_answers", "to_long"]

#: the columns of ``score_answers``: the answer, every measure (families together, strict first), the counts
SCORE_COLUMNS: tuple[str, ...] = ("run_id", "qid", "a_strict", "a", "v_strict", "v", "w_strict", "w", "n_nuggets", "n_vital", "n_failed")

_NO_VITAL = ("zero", "exclude")
_FAILED_SUPPORT = ("not_support", "exclude", "support")
_FAILED_IMPORTANCE = ("nuggetizer", "exclude", "as_okay", "as_vital")


@dataclass(frozen=True)
class ScoringPolicy:
    """How empty and FAILED cases are scored; see the module docstring."""

    no_vital: str = "zero"
    failed_support: str = "not_support"
    failed_importance: str = "nuggetizer"
    partial_credit: float = PARTIAL_CREDIT
    okay_weight: float = OKAY_WEIGHT

    def __post_init__(self) -> None:
        for name, allowed in (("no_vital", _NO_VITAL), ("failed_support", _FAILED_SUPPORT), ("failed_importance", _FAILED_IMPORTANCE)):
            if getattr(self, name) not in allowed:
                raise ConfigError(f"scoring policy {name}={getattr(self, name)!r}; expected one of {', '.join(allowed)}")

    def as_dict(self) -> dict:
        return asdict(self)


def score_answers(labels: "LabelSet", policy: ScoringPolicy | None = None) -> "pd.DataFrame":
    """Per-answer scores: one row per (run_id, qid) of ``labels.answers`` with the columns ``SCORE_COLUMNS``.

    Answers with no labelled nugget are included (their scores follow ``policy.no_vital``).
    """
    import numpy as np
    import pandas as pd

    policy = policy or ScoringPolicy()
    lab = labels.labels
    sup = lab["support"].astype(object).to_numpy()
    imp = lab["importance"].astype(object).to_numpy()

    s_failed = sup == "FAILED"
    strict = (sup == "support").astype(float)
    partial = strict + policy.partial_credit * (sup == "partial_support")
    counted = np.ones(len(lab), dtype=bool)
    if policy.failed_support == "support":
        strict = strict + s_failed
        partial = partial + s_failed
    elif policy.failed_support == "exclude":
        counted &= ~s_failed

    i_failed = imp == "FAILED"
    vital = imp == "vital"
    okay = imp == "okay"
    member = np.ones(len(lab), dtype=bool)  # counts in A
    if policy.failed_importance == "exclude":
        member &= ~i_failed
    elif policy.failed_importance == "as_okay":
        okay = okay | i_failed
    elif policy.failed_importance == "as_vital":
        vital = vital | i_failed
    # per family: denominator weights d_i = 1[counted] f_i; per measure: numerator terms d_i c_i
    den = {fam: counted * family_weight(fam, vital, okay, member, policy.okay_weight)
           for fam in dict.fromkeys(m.family for m in REGISTRY)}
    columns = {f"{fam}_d": d for fam, d in den.items()}
    columns.update({f"{m.name}_n": den[m.family] * (strict if m.strict else partial) for m in REGISTRY})
    columns.update({"n_nuggets": np.ones(len(lab)), "n_vital": vital * 1.0, "n_failed": s_failed * 1.0})
    keys = labels.answers[["run_id", "qid"]]
    answer_index = pd.MultiIndex.from_arrays([keys["run_id"].astype(str), keys["qid"].astype(str)])
    unique = answer_index.unique()
    row = unique.get_indexer(pd.MultiIndex.from_arrays([lab["run_id"].astype(str), lab["qid"].astype(str)]))
    keep = row >= 0  # labels of answers the label set does not list are not scored (as before)
    at = unique.get_indexer(answer_index)  # each answer row -> its key's sums
    sums = {k: np.bincount(row[keep], weights=v[keep], minlength=len(unique))[at] for k, v in columns.items()}

    fill = 0.0 if policy.no_vital == "zero" else np.nan
    out = keys.reset_index(drop=True).copy()
    for name in SCORE_COLUMNS[2:8]:  # score = sum_i d_i c_i / sum_i d_i (metaeval.measures), fill when empty
        metric = measure(name)
        d = sums[f"{metric.family}_d"]
        n = sums[f"{metric.name}_n"]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[metric.name] = np.where(d > 0, n / np.where(d > 0, d, 1.0), fill)
    for col in ("n_nuggets", "n_vital", "n_failed"):
        out[col] = np.rint(sums[col]).astype(int)
    return out[list(SCORE_COLUMNS)]


def run_scores(per_answer: "pd.DataFrame", metrics: tuple[str, ...] | list[str] = METRICS, common_topics: bool = False) -> "pd.DataFrame":
    """Run score = mean over topics of per-answer scores, with ``n_topics`` (answers scored per run).

    ``common_topics=True`` first restricts every run to the topics that *all* runs answered, so runs are
    compared on the same topics; dropping topics is logged as a warning with the counts.  NaN scores (excluded
    answers) are skipped by the mean.  Metric names are any alias of :func:`metaeval.measures.measure`
    (``V_strict``).  Sorted by the first metric, best first.
    """
    df = per_answer
    if common_topics and len(df):
        n_runs = df["run_id"].nunique()
        per_topic = df.groupby("qid")["run_id"].nunique()
        keep = per_topic[per_topic == n_runs].index
        if len(keep) < len(per_topic):
            short = per_topic[per_topic < n_runs].sort_values()
            log.warning("common_topics: kept %d of %d topics (answered by all %d runs); dropped %d topics "
                        "answered by fewer runs, e.g. %s", len(keep), len(per_topic), n_runs, len(short),
                        ", ".join(f"{q} ({int(k)} runs)" for q, k in short.head(3).items()))
        df = df[df["qid"].isin(keep)]
    metrics = [normalize_metric(m) for m in metrics]
    unknown = [m for m in metrics if m not in df.columns]
    if unknown and len(unknown) == len(metrics):
        raise ConfigError(f"metric(s) {', '.join(unknown)} not in the score table (columns: {', '.join(map(str, df.columns))})")
    metrics = [m for m in metrics if m in df.columns]
    agg = df.groupby("run_id")[metrics].mean()
    agg.insert(0, "n_topics", df.groupby("run_id")["qid"].nunique())
    first = measure(metrics[0]) if metrics[0] in METRICS else None  # best first: by the measure's direction
    best_high = first is None or first.higher_is_better
    agg = agg.reset_index().sort_values([metrics[0], "run_id"], ascending=[not best_high, True], kind="mergesort")
    return agg.reset_index(drop=True)


def to_long(per_answer: "pd.DataFrame", metrics: tuple[str, ...] | list[str] = METRICS) -> "pd.DataFrame":
    """The long score table ``run_id, qid, metric, value`` used by analysis and score-table files."""
    metrics = [normalize_metric(m) for m in metrics]
    long = per_answer.melt(id_vars=["run_id", "qid"], value_vars=list(metrics), var_name="metric", value_name="value")
    return long[["run_id", "qid", "metric", "value"]]
