"""``study/study.json``: the study's figures per cell that the report shows beyond the summary (:class:`StudyDoc`,
one :class:`StudyCell` per cell that got figures).

Per cell: whether the judge labelled the reference's own nuggets, per-topic tau per metric (:class:`TopicTau`), the
raw leaderboard (:class:`Leaderboard`: the judge's run means with topic-bootstrap CIs beside the reference's, per
metric), per-run bias (:class:`Bias`) and strictness by nugget importance (:class:`StrictnessByImportance`,
``metaeval.study.bias``), the topics where
judge and reference disagree most on the primary metric (:class:`Disagreements`,
``metaeval.study.topics.disagreements``; the nugget-label pairs and nugget lists of a topic stay open mappings: their
keys depend on the judge's replies) and the transcript viewer's path.
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
class RunBias:
    """One run's bias, judge minus reference run score (mean over its ``n_topics`` topics), with its paired
    topic-bootstrap interval, beside the two run scores."""

    run_id: str
    bias: float | None
    ci: tuple[float | None, float | None]
    n_topics: int
    reference: float | None
    judge: float | None


@dataclass(frozen=True)
class BiasMean:
    """The mean bias over runs with its topic-bootstrap interval."""

    bias: float | None
    ci: tuple[float | None, float | None]


@dataclass(frozen=True)
class MetricBias:
    """Per-run bias on one metric (runs in the reference's order, best first) and its mean."""

    mean: BiasMean
    runs: tuple[RunBias, ...]


@dataclass(frozen=True)
class Bias:
    """``metaeval.study.bias.run_bias``: per metric, judge-minus-reference run scores with paired topic-bootstrap
    intervals (``level``, ``n_boot`` replicates, ``seed``) over ``n_topics`` topics."""

    level: float
    n_boot: int
    seed: int
    n_topics: int
    metrics: Mapping[str, MetricBias] = field(default_factory=dict)


@dataclass(frozen=True)
class Stratum:
    """Net strictness on one importance stratum (``metaeval.study.bias.strictness_by_importance``): the index
    ``P(judge lower) - P(judge higher)`` with its topic-clustered interval, the pair and topic counts, and the shares
    of the assessors' supports the judge made partial / not support and of their not-supports it raised."""

    index: float | None
    ci: tuple[float | None, float | None]
    n_pairs: int
    ci_method: str | None = None
    n_topics: int = 0
    p_lower: float | None = None
    p_higher: float | None = None
    n_support: int = 0
    support_to_partial: float | None = None
    support_to_not: float | None = None
    not_raised: float | None = None


@dataclass(frozen=True)
class StrictnessByImportance:
    """Strictness per stratum (``all``, ``vital``, ``okay``; None: no pair in it) at level ``1 - alpha``."""

    alpha: float
    strata: Mapping[str, Stratum | None] = field(default_factory=dict)


@dataclass(frozen=True)
class DisagreementAnswer:
    """An answer of a worst topic whose within-topic rank moves most: both sides' scores and ranks."""

    run_id: str
    reference: float | None
    judge: float | None
    reference_rank: int
    judge_rank: int


@dataclass(frozen=True)
class DisagreementTopic:
    """One of the worst topics (lowest per-topic tau, over ``n_runs`` runs): its query, the answers whose rank moves
    most, and the nugget labels that differ (``pairs``: the judge labelled the reference's nuggets) or the two nugget
    lists (``nugget_lists``: it made its own); neither without a reference."""

    qid: str
    query: str
    tau: float | None
    n_runs: int
    answers: tuple[DisagreementAnswer, ...]
    pairs: tuple[Mapping[str, Any], ...] | None = absent()
    nugget_lists: tuple[Mapping[str, Any], ...] | None = absent()


@dataclass(frozen=True)
class Disagreements:
    """Where judge and reference disagree most on ``metric``: the ``k`` worst topics, the number of topics whose tau
    is undefined (not ranked), and why the judge's replies could not be attached (``replies_note``)."""

    metric: str
    k: int
    topics: tuple[DisagreementTopic, ...]
    n_topics_undefined: int
    replies_note: str | None = absent()


@dataclass(frozen=True)
class StudyCell:
    """One cell's study figures (see the module docstring)."""

    shares_reference_nuggets: bool
    leaderboard: Leaderboard
    per_topic_tau: Mapping[str, tuple[TopicTau, ...]] = field(default_factory=dict)
    disagreements: Mapping[str, Disagreements] = field(default_factory=dict)
    bias: Bias | None = absent()
    strictness_by_importance: StrictnessByImportance | None = absent()
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
