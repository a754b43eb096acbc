"""``summary.json``: the study's summary of a sweep, as records (:class:`Summary`, one :class:`CellSummary` per grid
cell).

A cell carries what the sweep measured (``stats``: stored totals; ``this_run``; label counts) and what the study
computed for it: ``analysis`` (:class:`CellAnalysis`: Kendall's tau of the judge's ranking against the reference's
per metric and level, :class:`TauEstimate` ``{tau, ci, boot_mean}``), ``calibration`` (the cell's
``calibration.json``, ``metaeval.study.calibration_workflow``: :class:`~metaeval.study.records.calibration.CellCalibration`)
and ``consistency`` (``metaeval.study.consistency``: :class:`~metaeval.study.records.blocks.CellConsistency`); the
support-label agreement is :class:`~metaeval.study.records.blocks.LabelAgreement`.  Every part the report, the LaTeX
export, the API and the summary table read by name is a field.  Still declared as open ``Mapping``: the echoed
configuration (``Summary.config``: the user's composed config, recorded, never read for a setting), the analysis'
per-metric detail (``MetricAnalysis.cells`` / ``flips`` / ``top_heavy``: written for the ``analysis/`` files, read by
no report section) and ``CellAnalysis.cells`` / ``descriptive``; the per-metric diagnostics are
:class:`Diagnostics`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

from metaeval.study.records.blocks import Consistency, LabelAgreement
from metaeval.study.records.calibration import Calibration
from metaeval.study.records.codec import absent_when_default as absent
from metaeval.study.records.codec import decode
from metaeval.study.records.document import Document
from metaeval.study.records.provenance import Provenance

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.study.records.calibration import CellCalibration

#: the tau levels of an analysis: the judge's ranking of runs, the mean per-topic tau, and tau over pooled cells
LEVELS = ("run", "topic_avg", "pooled")


@dataclass(frozen=True)
class TauEstimate:
    """Kendall's tau at one level with its 95% topic-bootstrap interval ``ci`` (``[None, None]`` when undefined) and
    the bootstrap replicates' mean; ``n_topics`` / ``n_topics_skipped`` (topic-average level): topics where tau is
    defined / undefined."""

    tau: float | None
    ci: tuple[float | None, float | None]
    boot_mean: float | None = None
    n_topics: int | None = absent()
    n_topics_skipped: int | None = absent()

    @property
    def low(self) -> float | None:
        return self.ci[0]

    @property
    def high(self) -> float | None:
        return self.ci[1]


#: an estimate for a missing level or metric (every part undefined)
NO_ESTIMATE = TauEstimate(tau=None, ci=(None, None))


@dataclass(frozen=True)
class Diagnostics:
    """Flags of one comparison (``metaeval.analysis.diagnostics.comparison_diagnostics``): the common topics, runs
    and (topic, run) cells; too few topics (< ``min_topics``); every run mean tied on one side (run-level tau
    undefined); topics whose per-topic tau is undefined; defaulted cells per side (an empty denominator, e.g. no
    vital nugget; None: not known); and the warnings they raise, in words."""

    metric: str
    n_topics: int
    n_runs: int
    n_cells: int
    min_topics: int
    too_few_topics: bool
    all_tied_reference: bool
    all_tied_candidate: bool
    undefined_topic_taus: int
    defaulted_reference: int | None
    defaulted_candidate: int | None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class MetricAnalysis:
    """One metric of a cell's analysis: the three tau levels, the comparison's :class:`Diagnostics`, and the
    analysis' open detail (``cells``: the aligned grid; ``flips``: discordant run pairs; ``top_heavy``: top-weighted
    rank correlations), written for the ``analysis/`` tables and read by no report section."""

    run: TauEstimate
    topic_avg: TauEstimate
    pooled: TauEstimate
    cells: Mapping[str, Any] = field(default_factory=dict)
    flips: Mapping[str, Any] = field(default_factory=dict)
    top_heavy: Mapping[str, Any] = field(default_factory=dict)
    diagnostics: Diagnostics | None = absent()

    def level(self, level: str) -> TauEstimate:
        return getattr(self, level)


@dataclass(frozen=True)
class CellAnalysis:
    """A cell against the reference (``metaeval.analysis.analyze``'s candidate block): ``metrics`` (metric ->
    :class:`MetricAnalysis`), the aligned grid's counts (``cells``), ``warnings``, ``suggested_run_map``, support-label
    agreement (``labels``, None when the judge made its own nuggets, then ``labels_note`` says why) and
    descriptive statistics on the shared topics and runs."""

    name: str
    metrics: Mapping[str, MetricAnalysis]
    cells: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    suggested_run_map: Mapping[str, str] = field(default_factory=dict)
    labels: LabelAgreement | None = None
    labels_note: str | None = absent()
    descriptive: Mapping[str, Any] | None = None

    def tau(self, metric: str, level: str) -> TauEstimate:
        """The estimate at ``level`` on ``metric`` (:data:`NO_ESTIMATE` when the analysis has no such metric)."""
        m = self.metrics.get(metric)
        return NO_ESTIMATE if m is None else m.level(level)


@dataclass(frozen=True)
class CellStats:
    """What a cell's results cost, summed over the stored jobs (``metaeval.pipeline.cellstats``): judge calls, model
    requests (``calls``), cache hits, retries, re-asks, tokens, FAILED jobs, USD; the prompt templates used
    (``id@version:sha``); jobs stored / reused / executed; the dry-run estimates (``est_*``); and how many earlier runs
    of the folder were interrupted (the totals are then lower bounds)."""

    judge_calls: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    reasks: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failed_jobs: int = 0
    cost_usd: float = 0.0
    prompts: tuple[str, ...] = ()
    jobs: int = 0
    reused: int = 0
    executed: int = 0
    est_calls: int = 0
    est_input_tokens: int = 0
    est_output_tokens: int = 0
    est_cost_usd: float = 0.0
    est_bound: bool = False
    est_stage_calls: Mapping[str, int] = field(default_factory=dict)
    interrupted_runs: int = 0


@dataclass(frozen=True)
class ThisRun:
    """What this run of the sweep did for a cell (not the stored totals)."""

    executed: int = 0
    reused: int = 0
    failed_jobs: int = 0
    judge_calls: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    reasks: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class CellSummary:
    """One grid cell: what it is (judge, prompt, strategy and their ids), why it has no figures (``skipped``: it
    could not run; ``withheld``: too many FAILED labels), its usage and label counts, and the study's figures."""

    cell: str
    judge: str | None = absent()
    prompt: str | None = absent()
    strategy: str | None = absent()
    judge_config: Mapping[str, Any] | None = absent()
    judge_id: str | None = absent()
    prompt_id: str | None = absent()
    skipped: str | None = absent()
    stats: CellStats | None = absent()
    this_run: ThisRun | None = absent()
    samples: int | None = absent()
    labels: int | None = absent()
    failed_labels: int | None = absent()
    failed_importance: int | None = absent()
    failure_rate: float | None = absent()
    relevance: Mapping[str, int] | None = absent()
    withheld: str | None = absent()
    analysis: CellAnalysis | None = absent()
    calibration: Calibration | None = absent()
    consistency: Consistency | None = absent()

    def __post_init__(self) -> None:
        # the study hands the blocks over as the JSON it computed: typed here, checked like a file's
        hints = {"calibration": Calibration | None, "consistency": Consistency | None}
        for name, tp in hints.items():
            v = getattr(self, name)
            if isinstance(v, Mapping):
                object.__setattr__(self, name, decode(tp, dict(v), "summary.json", f"cells[{self.cell}].{name}"))

    @property
    def active(self) -> bool:
        """Ran and has figures (not skipped, not withheld)."""
        return not self.skipped and not self.withheld

    def tau(self, metric: str, level: str) -> TauEstimate:
        """The cell's estimate at ``level`` on ``metric`` (:data:`NO_ESTIMATE` without an analysis)."""
        return NO_ESTIMATE if self.analysis is None else self.analysis.tau(metric, level)

    @property
    def usage(self) -> CellStats:
        """``stats``, or zeros for a cell that did not run."""
        return self.stats if self.stats is not None else CellStats()

    @property
    def calibrated(self) -> "CellCalibration | None":
        """The calibration when it ran (None: not run, or it failed: ``calibration.error`` says why)."""
        from metaeval.study.records.calibration import CellCalibration

        return self.calibration if isinstance(self.calibration, CellCalibration) else None

    @property
    def label_agreement(self) -> LabelAgreement | None:
        """The analysis' support-label agreement (None without one)."""
        return None if self.analysis is None else self.analysis.labels


@dataclass(frozen=True)
class DataFile:
    """A dataset file as loaded: name, path, digests, size; ``verified``: matched the registry's checksum (None:
    no registry entry to check against, or bundled); ``origin``: where ``metaeval data fetch`` got it."""

    filename: str
    path: str | None = None
    md5: str | None = None
    sha256: str | None = None
    size: int | None = None
    verified: bool | None = None
    origin: str | None = absent()


@dataclass(frozen=True)
class DatasetProvenance:
    """Where the dataset came from (``metaeval.data``): registry name (None: loaded by path), source, license, files;
    ``synthetic`` and ``description`` for made-up data (the demo)."""

    source: str | None = None
    dataset: str | None = None
    license: str | None = absent()
    files: tuple[DataFile, ...] = ()
    synthetic: bool = absent(False)
    description: str | None = absent()


@dataclass(frozen=True)
class DatasetInfo:
    """The dataset the sweep judged: name, counts and provenance."""

    name: str | None = absent()
    topics: int | None = absent()
    runs: int | None = absent()
    answers: int | None = absent()
    provenance: DatasetProvenance | None = absent()

    @property
    def synthetic(self) -> bool:
        return bool(self.provenance and self.provenance.synthetic)


@dataclass(frozen=True)
class Summary(Document):
    """``summary.json``: the sweep's cells with the study's figures, the dataset, the composed configuration as
    recorded (``config``: echoed, never read for a setting), timings, ``primary_metric`` (what the summary table and
    the verdict report on: ``analysis.primary_metric``) and the provenance of the study run."""

    FORMAT: ClassVar[str] = "metaeval-summary"

    evaluation_key: str
    evaluation_reused: bool
    experiment: str
    primary_metric: str
    cells: tuple[CellSummary, ...]
    provenance: Provenance
    dataset: DatasetInfo = field(default_factory=DatasetInfo)
    config: Mapping[str, Any] = field(default_factory=dict)
    judging_s: float = 0.0
    runtime_start_s: float = 0.0
    runtime_start: str = ""
    #: the part of ``runtime_start_s`` that was the Ray actors' start (left out while 0: in-process)
    actors_start_s: float = absent(0.0)
    stopped: str | None = None
    elapsed_s: float = 0.0
    grid_notes: tuple[str, ...] = absent(())

    @property
    def active(self) -> list[CellSummary]:
        """Cells that ran and have figures (not skipped, not withheld)."""
        return [c for c in self.cells if c.active]

    def cell(self, cid: str) -> CellSummary | None:
        return next((c for c in self.cells if c.cell == cid), None)

    def config_group(self, group: str) -> Mapping[str, Any]:
        """A group of the echoed configuration (``analysis``, ``sweep``...), ``{}`` when absent."""
        g = self.config.get(group)
        return g if isinstance(g, Mapping) else {}
