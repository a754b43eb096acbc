"""A cell's calibration block (``summary.json`` -> ``cells[i].calibration``, the cell's ``calibration.json`` without
its fitted model), as records.

:func:`metaeval.study.calibration_workflow.calibrate_study` writes it: the settings it ran with, how the labels
paired, the human-labelled and judge-only topics, every candidate's held-out figures (:class:`Candidate`,
:class:`HeldOut`), the one decision (:class:`Selection`), the estimated human leaderboard
(:class:`CalibratedLeaderboard`) and the recommendation line on the primary ``metric`` - the same four blocks per
metric in ``by_metric`` (:class:`MetricCalibration`) - and the rank-sets of the calibrated leaderboard
(:class:`RankSets`, or :class:`RankSetsUnavailable` with the reason).  A cell whose calibration failed has
:class:`CalibrationFailure` (``{"error": ...}``) instead.

Field order is the order the workflow writes, so that a block reads back and writes out byte-identical; the
figures' definitions are in ``metaeval.study.calibration_workflow.selection`` (held-out errors: mean over splits
+- the corrected resampled SE of Nadeau & Bengio 2003), ``.leaderboard`` and ``metaeval.study.ranksets``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from metaeval.study.records.codec import NOT_WRITTEN, encode, json_key, only_when_written
from metaeval.study.records.codec import absent_when_default as absent

#: an interval ``[low, high]`` (a bound is None when undefined)
Interval = tuple[float | None, float | None]


@dataclass(frozen=True)
class MeanSE:
    """A mean over the splits with its corrected resampled standard error (None: no finite split / undefined)."""

    mean: float | None
    se: float | None


@dataclass(frozen=True)
class CalibrationSettings:
    """The settings the calibration ran with (``calibration.*`` resolved) and the split sizes it used: ``splits``
    random splits of the human-labelled topics into ``fit_topics`` / ``held_out_topics`` (None: nothing evaluated)."""

    folds: int
    repeats: int
    nested_splits: int
    min_topics: int
    methods: tuple[str, ...]
    metrics: tuple[str, ...]
    level: float
    min_coverage: float
    n_boot: int
    n_boot_t: int
    folds_used: int | None
    splits: int
    fit_topics: int | None
    held_out_topics: int | None


@dataclass(frozen=True)
class Pairing:
    """How judge and reference labels paired (``metaeval.calibration.pairing``): by ``key``, ``matched`` of the
    judge's / reference's pairs, ``coverage`` = matched / max(pairs); label-level methods run only when it is at
    least ``min_coverage`` (``label_level`` ok), else ``refusal`` says why."""

    key: str
    matched: int
    judge_pairs: int
    reference_pairs: int
    duplicate_texts: int
    coverage: float
    min_coverage: float
    label_level: str
    refusal: str | None


@dataclass(frozen=True)
class CalibrationTopics:
    """The topics with human labels (fit and evaluation) and those the judge alone labelled (estimated)."""

    human_labelled: tuple[str, ...]
    judge_only: tuple[str, ...]


@dataclass(frozen=True)
class HeldOutTau:
    """Mean held-out Kendall tau with the human leaderboard: run level over the splits; per-topic mean and pooled on
    the first splits' held-out topics."""

    run: float | None
    topic_avg: float | None
    pooled: float | None


@dataclass(frozen=True)
class HeldOut:
    """One candidate's held-out figures over the splits (whole-track run score vs the human one): ``mae`` and
    ``diff_vs_raw`` (paired, negative = better) +- corrected SE; bias and RMSE of the estimates; ``tau``; ``wins``
    (splits with the lowest error); coverage, worst-run coverage and mean width of the interval shown with its point
    (``qualifies``: coverage >= ``coverage_needed`` = level - 2 Monte-Carlo SEs)."""

    mae: MeanSE
    bias: float | None
    rmse: float | None
    diff_vs_raw: MeanSE
    tau: HeldOutTau
    tau_diff_vs_raw: MeanSE
    wins: int
    splits: int
    fit_topics: int | None
    held_out_topics: int | None
    n_estimates: int
    point: str
    intervals: str
    coverage: float | None
    coverage_worst_run: float | None
    mean_ci_width: float | None
    zero_width: int | None
    qualifies: bool
    coverage_needed: float | None = only_when_written()


@dataclass(frozen=True)
class Candidate:
    """A calibration candidate (raw, composite, a correction): its ``level`` (``score`` / ``label``), ``status``
    (ok, not evaluated, failed, refused) with the ``reason``, and its held-out figures when evaluated."""

    level: str
    status: str
    reason: str | None
    held_out: HeldOut | None = absent()

    @property
    def evaluated(self) -> bool:
        return self.status == "ok" and self.held_out is not None


@dataclass(frozen=True)
class Selection:
    """The one decision (``calibration_workflow.selection.selection_record``): the point ``method`` shown, its
    ``verdict`` and ``why``, the interval method, the rule, the topic counts and split sizes, ``beats_raw``, the
    split ``wins`` per candidate, the nested evaluation of the same procedure (``nested_*``: MAE, paired differences
    to raw, choices over ``nested_splits`` splits) and the held-out MAE of raw and of the method shown."""

    method: str
    verdict: str | None
    why: str
    intervals_by: str
    intervals: str
    intervals_why: str
    rule: str
    n_topics: int
    n_applied: int
    splits: int
    fit_topics: int | None
    held_out_topics: int | None
    beats_raw: bool
    wins: Mapping[str, int]
    nested_mae: MeanSE
    nested_diff_vs_raw: MeanSE
    nested_tau_diff_vs_raw: MeanSE
    nested_choices: Mapping[str, int]
    nested_splits: int
    raw_mae: MeanSE
    held_out_mae: MeanSE
    note: str


@dataclass(frozen=True)
class LeaderboardRow:
    """One run of the calibrated leaderboard: the estimated human score over the whole track with its interval
    (None when every topic is human-labelled: the estimate is observed) and rank, the human score on the labelled
    topics, the judge's own score with its topic-bootstrap interval, the topic counts and, when some topics are
    judge-only, the correction's estimate there."""

    run_id: str
    human_estimate: float | None
    human_estimate_ci: Interval | None
    human_estimate_rank: int | None
    human_labelled: float | None
    human_labelled_rank: int | None
    judge_score: float | None
    judge_score_ci: Interval | None
    judge_score_rank: int | None
    n_human_labelled: int
    n_judge_only: int
    corrected_judge_only: float | None = only_when_written()
    corrected_judge_only_ci: Interval | None = only_when_written()


@dataclass(frozen=True)
class CalibratedLeaderboard:
    """The estimate of the human leaderboard over every topic (``calibration_workflow.leaderboard``): points by
    ``estimated_by``, intervals by ``intervals_by``, over ``human_labelled_topics`` + ``judge_only_topics``; the
    columns described in ``columns``."""

    metric: str
    estimand: str
    estimated_by: str
    intervals_by: str
    chosen: str
    intervals_why: str
    human_labelled_topics: int
    judge_only_topics: int
    columns: Mapping[str, str]
    rows: tuple[LeaderboardRow, ...]


@dataclass(frozen=True)
class MetricCalibration:
    """The four blocks of one metric: every candidate, the decision, the leaderboard and the recommendation line."""

    candidates: Mapping[str, Candidate]
    selection: Selection
    leaderboard: CalibratedLeaderboard
    recommendation: str


@dataclass(frozen=True)
class TrackTau:
    """Kendall tau-b of a leaderboard with the human one on all topics (``metaeval.calibration.ranksets.track_tau``):
    the bias-corrected ``estimate`` with its basic topic-bootstrap interval at ``level`` and the plug-in value;
    ``bounds``: the bounds holding at ``level`` for any ranking at once (fixed, fitted or data-dependent; how:
    ``bounds_method``; absent in files written before them); ``by`` / ``treated_as`` for the leaderboard shown."""

    estimate: float | None
    ci: Interval
    level: float
    plug_in: float | None
    bounds: Interval | None = absent()
    bounds_method: str | None = absent()
    by: str | None = absent()
    treated_as: str | None = absent()


@dataclass(frozen=True)
class RankSetsTau:
    """Track tau of the PPI++ estimate, of the raw judge and (when its points are known) of the leaderboard shown."""

    ppi_pp: TrackTau
    raw_judge: TrackTau
    shown: TrackTau | None = absent()


@dataclass(frozen=True)
class RankSetsSummary:
    """Pairs decided of all run pairs, mean rank-set and naive-interval sizes, the number of letter groups."""

    pairs: int
    decided_pairs: int
    mean_rank_set_size: float
    mean_naive_interval_size: float
    groups: int


@dataclass(frozen=True)
class RankSetRow:
    """One run: PPI++ estimate, point rank, simultaneous rank-set ``[lo, hi]``, naive per-run rank interval, group
    letters, runs it is above / below."""

    run_id: str
    estimate: float
    rank: int
    rank_set: tuple[int, int]
    naive_rank_interval: tuple[int, int]
    group: str
    beats: int
    beaten_by: int


@dataclass(frozen=True)
class RankPair:
    """One run pair: the difference ``a - b`` with its simultaneous interval and the decision ``>``, ``<`` or ``~``."""

    a: str
    b: str
    diff: float
    ci: tuple[float, float]
    decision: str


@dataclass(frozen=True)
class RankSets:
    """Which runs can be told apart (``metaeval.study.ranksets.rank_sets_block``, status ok): PPI++ run scores over
    all topics, ``level`` simultaneous over every pair (max-t bootstrap of the human-labelled topics, ``n_boot``
    resamples, ``seed``), rows by rank, every pair, the track taus."""

    status: str
    metric: str
    method: str
    lambda_: float = json_key("lambda")  # PPI++'s power-tuning lambda (``lambda`` is a Python keyword)
    level: float
    n_boot: int
    seed: int
    critical_value: float
    human_labelled_topics: int
    topics: int
    runs: int
    runs_left_out: tuple[str, ...]
    summary: RankSetsSummary
    note: str
    columns: Mapping[str, str]
    rows: tuple[RankSetRow, ...]
    pairs: tuple[RankPair, ...]
    tau: RankSetsTau

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class RankSetsUnavailable:
    """Rank-sets that could not be computed (fewer than two labelled topics or runs): ``status`` n/a and why."""

    status: str
    reason: str
    metric: str

    @property
    def ok(self) -> bool:
        return False


@dataclass(frozen=True)
class CellCalibration:
    """A cell's calibration (see the module docstring): what was calibrated against what (``schema``: the
    ``calibration.json`` format, ``metaeval.calibration/<n>``), with which seeds and settings; the pairing and
    topics; the display names of the methods; the primary metric's candidates, selection, leaderboard and
    recommendation; the same per metric; the rank-sets."""

    schema: str
    metric: str
    reference: str
    judge: str
    seed: int
    analysis_seed: int
    settings: CalibrationSettings
    pairing: Pairing
    topics: CalibrationTopics
    method_names: Mapping[str, str]
    candidates: Mapping[str, Candidate]
    selection: Selection
    leaderboard: CalibratedLeaderboard
    recommendation: str
    by_metric: Mapping[str, MetricCalibration] = field(default_factory=dict)
    rank_sets: RankSets | RankSetsUnavailable | None = absent()
    #: ``metaeval calibrate --strictness`` only: the judge's strictness models (``metaeval.calibration.strictness``)
    strictness: Mapping[str, Any] | None = absent()

    def method_name(self, method: str) -> str:
        """A method as tables print it (``PPI++``): its recorded display name, else the key itself."""
        return str(self.method_names.get(method, method))

    def for_metric(self, metric: str) -> MetricCalibration | None:
        """The blocks of ``metric`` (None when it was not calibrated)."""
        return self.by_metric.get(metric)

    def __json__(self) -> Any:  # metaeval.io.jsonl.to_jsonable writes a record as its JSON
        return encode(self)


@dataclass(frozen=True)
class CalibrationFailure:
    """A cell whose calibration raised: the exception as ``Type: message`` (the report shows it)."""

    error: str

    def __json__(self) -> Any:
        return encode(self)


#: what a cell's ``calibration`` holds
Calibration = CellCalibration | CalibrationFailure

__all__ = ["Calibration", "CalibratedLeaderboard", "CalibrationFailure", "CalibrationSettings", "CalibrationTopics",
           "Candidate", "CellCalibration", "HeldOut", "HeldOutTau", "Interval", "LeaderboardRow", "MeanSE",
           "MetricCalibration", "NOT_WRITTEN", "Pairing", "RankPair", "RankSetRow", "RankSets", "RankSetsSummary",
           "RankSetsTau", "RankSetsUnavailable", "Selection", "TrackTau"]
