"""The analysis blocks of a cell whose keys depend on what could be computed, as *open* records
(:func:`metaeval.study.records.codec.open_record`): the fields the report, the LaTeX export and the API read are
declared and checked; every other key is kept as written (``extra``), in the order written.

* :class:`LabelAgreement` - support-label agreement of judge and reference
  (``metaeval.analysis.agreement.label_agreement``; ``summary.json`` -> ``cells[i].analysis.labels``): Cohen's and
  weighted kappa, Krippendorff's alpha, the net strictness index ``P(judge lower) - P(judge higher)`` with its
  asymptotic interval and the topic-bootstrap one (``clustered``), Stuart-Maxwell marginal homogeneity, the label
  mixes and shifts, FAILED counts;
* :class:`CellConsistency` - the judge's self-consistency over its k draws (``metaeval.study.consistency``;
  ``cells[i].consistency``), with its score-level calibration on hard / majority / soft judge scores
  (:class:`ConsistencyCalibration`), or :class:`ConsistencyFailure` when it raised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from metaeval.study.records.codec import encode, open_record

#: an interval ``[low, high]`` (a bound is None when undefined)
Interval = tuple[float | None, float | None]


@open_record
@dataclass(frozen=True)
class ClusteredAgreement:
    """Topic-bootstrap intervals of the agreement statistics (``metaeval.analysis.clustered``); ``strictness_ci_topic``
    is the net strictness index's."""

    strictness_ci_topic: Interval | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    key_order: tuple[str, ...] = ()


@open_record
@dataclass(frozen=True)
class LabelAgreement:
    """Support-label agreement of a cell with the reference (see the module docstring); a statistic the label
    coverage is too low for is None."""

    n: int | None = None
    exact_agreement: float | None = None
    cohen_kappa: float | None = None
    weighted_kappa: float | None = None
    krippendorff_alpha: float | None = None
    strictness_index: float | None = None
    strictness_ci: Interval | None = None
    p_lower: float | None = None
    p_higher: float | None = None
    stuart_maxwell_stat: float | None = None
    stuart_maxwell_df: float | None = None
    stuart_maxwell_p: float | None = None
    order: tuple[str, ...] | None = None
    confusion: Any = None
    reference_mix: Any = None
    candidate_mix: Any = None
    shifts: tuple[Mapping[str, Any], ...] = ()
    failed: Mapping[str, int] | None = None
    clustered: ClusteredAgreement | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    key_order: tuple[str, ...] = ()

    @property
    def strictness_interval(self) -> Interval | None:
        """The strictness index's topic-clustered interval where the analysis has one (pairs of one topic are not
        independent), else the asymptotic one."""
        topic = self.clustered.strictness_ci_topic if self.clustered is not None else None
        return topic or self.strictness_ci

    def clustered_stuart_maxwell(self) -> dict[str, Any]:
        """The topic-clustered Stuart-Maxwell figures (``stuart_maxwell_clustered*``), as written."""
        return {k: v for k, v in self.extra.items() if k.startswith("stuart_maxwell_clustered")}

    def failed_count(self, side: str) -> int:
        """FAILED labels on ``side`` (``reference`` / ``candidate``)."""
        return int(self.failed.get(side, 0)) if self.failed else 0


@open_record
@dataclass(frozen=True)
class ConsistencyCalibration:
    """Score-level calibration of the hard (draw 0), majority and soft (vote share) judge scores, out of fold by
    topic (``metaeval.planning.consistency.crossfit_calibration``): per variant and method the MAE of run means with
    its SE (``variants[name][method] = {mae, se, ...}``, ``s_delta`` the sd of human minus judge), over ``folds`` x
    ``repeats``."""

    folds: int | None = None
    repeats: int | None = None
    variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    line: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    key_order: tuple[str, ...] = ()


@open_record
@dataclass(frozen=True)
class CellConsistency:
    """A sampled cell's self-consistency (see the module docstring): ``k`` draws, the metric, the one-line summary
    and, with enough shared topics, the calibration of its variants."""

    line: str
    k: int | None = None
    metric: str | None = None
    metric_name: str | None = None
    calibration: ConsistencyCalibration | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    key_order: tuple[str, ...] = ()

    def __json__(self) -> Any:
        return encode(self)


@dataclass(frozen=True)
class ConsistencyFailure:
    """A sampled cell whose self-consistency raised: ``Type: message`` and the number of draws."""

    error: str
    k: int | None = None

    def __json__(self) -> Any:
        return encode(self)


#: what a cell's ``consistency`` holds
Consistency = CellConsistency | ConsistencyFailure

__all__ = ["CellConsistency", "ClusteredAgreement", "Consistency", "ConsistencyCalibration", "ConsistencyFailure",
           "LabelAgreement"]
