"""``study/study.json``: the study's figures per cell that the report shows beyond the summary (:class:`StudyDoc`,
one :class:`StudyCell` per cell that got figures).

Per cell: whether the judge labelled the reference's own nuggets, per-topic tau per metric (:class:`TopicTau`), the
raw leaderboard (:class:`Leaderboard`: the judge's run means with topic-bootstrap CIs beside the reference's, per
metric), per-run bias and strictness by nugget importance (``metaeval.study.bias``; open blocks), the topics where
judge and reference disagree most on the primary metric (``metaeval.study.topics.disagreements``; open) and the
transcript viewer's path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from metaeval.study.records.codec import absent_when_default as absent
from metaeval.study.records.document import Document
from metaeval.study.records.provenance import Provenance


@dataclass(frozen=True)
class TopicTau:
    """Kendall's tau of the runs on one topic (None: undefined, a side scores every run the same), over ``n_runs``."""

    qid: str
    tau: float | None
    n_runs: int


@dataclass(frozen=True)
class Leaderboard:
    """The raw leaderboard (``metaeval.study.leaderboard.raw_leaderboards``): per metric, one row per run sorted by
    the judge's raw rank (``run_id, reference, reference_rank, raw, raw_ci, raw_rank, rank_shift``), with the
    interval's level, bootstrap replicates and seed."""

    level: float
    n_boot: int
    seed: int
    metrics: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class StudyCell:
    """One cell's study figures (see the module docstring)."""

    shares_reference_nuggets: bool
    leaderboard: Leaderboard
    per_topic_tau: Mapping[str, tuple[TopicTau, ...]] = field(default_factory=dict)
    disagreements: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    bias: Mapping[str, Any] | None = absent()
    strictness_by_importance: Mapping[str, Any] | None = absent()
    transcript_view: str | None = None


@dataclass(frozen=True)
class StudyDoc(Document):
    """``study/study.json``: the metrics computed (``primary_metric`` first in the report), the tau variant,
    ``bootstrap`` replicates and ``seed`` (``analysis.*``) of every interval here, the cells, and the provenance of
    the study run."""

    FORMAT: ClassVar[str] = "metaeval-study"

    metrics: tuple[str, ...]
    primary_metric: str
    variant: str
    bootstrap: int
    seed: int
    provenance: Provenance
    cells: Mapping[str, StudyCell] = field(default_factory=dict)

    def cell(self, cid: str) -> StudyCell | None:
        return self.cells.get(cid)
