"""The study's typed settings: ``analysis``, ``calibration`` and ``study`` sections (``StudySettings``), checked
when the configuration is composed, before any judge is called (``metaeval.workflow.settings`` builds them once and
the sweep driver passes them to ``metaeval.study.run``).

Bounds on the sizes (``analysis.bootstrap``, ``calibration.folds``) are what the machine can hold: the topic
bootstrap keeps ``bootstrap`` replicates of every run's mean per metric (about 240 bytes per replicate on the NIST
file: 10^8 replicates used 24 GB), so ``MAX_BOOTSTRAP`` = 100,000 keeps that under ~25 MB; more replicates only
shrink the Monte Carlo error of a 95% percentile bound below the third decimal.  Measured (docs/benchmarks.md,
2026-12-01): a whole NIST study (21 x 45, six metrics, calibration on) at the cap peaks at 423 MB RSS
(264 MB at the default 1,000), well under the 2 GiB it must fit in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from metaeval.errors import ConfigError
from metaeval.schema import build_section, setting
from metaeval.measures import METRICS
from metaeval.study.calibration_workflow.defaults import DEFAULTS as _CAL, SEED_DEFAULT as _CAL_SEED  # the one place

#: the most topic-bootstrap replicates one setting may ask for (see the module docstring)
MAX_BOOTSTRAP = 100_000
#: the most cross-fitting folds (each fold holds out at least one topic; more folds than topics is an error later)
MAX_FOLDS = 100


@dataclass(frozen=True)
class AnalysisSettings:
    """``analysis.*``: the metrics compared, Kendall's tau variant, topic-bootstrap replicates and their seed (every
    interval of the study).

    The primary metric is the first of ``analysis.metrics`` (:attr:`primary_metric`; default V_strict): the one
    setting every part of a sweep reads it from - the summary table, the disagreements, self-consistency, the
    calibration's selection and the report's verdict (recorded as ``primary_metric`` in ``summary.json`` and
    ``study.json``).  Names are any alias of :func:`metaeval.measures.measure` (``A_strict``, ``strict_all_score``)."""

    metrics: list = setting(list(METRICS), "list", choices=METRICS, unique=True)
    tau: str = setting("b", "choice", choices=("b", "a", "ap"))
    bootstrap: int = setting(1000, "int", ge=0, le=MAX_BOOTSTRAP)
    seed: int = setting(0, "int", ge=0)

    @property
    def primary_metric(self) -> str:
        """The study's primary metric: the first of ``metrics`` (canonical name)."""
        return self.metrics[0]


@dataclass(frozen=True)
class CalibrationSettings:
    """``calibration.*``: out-of-fold calibration of every cell (``metaeval.study.calibration_workflow``)."""

    enabled: bool = setting(True, "bool")
    methods: list | None = setting(_CAL["methods"], "list", null=True, unique=True)
    folds: int = setting(_CAL["folds"], "int", ge=2, le=MAX_FOLDS)
    seed: int = setting(_CAL_SEED, "int", ge=0)
    #: processes for the repeats of the cross-fitting (auto: the available CPUs); no number depends on it
    workers: int | str = setting(_CAL["workers"], "auto_int", ge=1)


@dataclass(frozen=True)
class FanoutSettings:
    """``study.*``: where the cells' studies run (``metaeval.study.fanout``); no number depends on it.

    ``workers``: at most this many cells' studies at once - as Ray tasks when the sweep's Ray runtime is up
    (``runtime=ray_local`` / ``ray_cluster``; ``auto``: up to twice the cluster's CPUs in flight, Ray placing one per
    CPU), else in forked worker processes (``auto``: the available CPUs); never more than the cells.  ``1``, or a
    single cell: in this process, one cell after the other, each cell's calibration repeats forked over
    ``calibration.workers`` (in a fanned-out cell they run one after the other: the CPUs are busy with cells)."""

    workers: int | str = setting("auto", "auto_int", ge=1)


@dataclass(frozen=True)
class StudySettings:
    """Everything the study reads from the configuration.  ``report`` is the composed ``report`` section as given
    (None when absent): part of the study's reuse key only.  ``fanout``: the ``study`` section (where the cells'
    studies run; not in the reuse key, it moves no number)."""

    analysis: AnalysisSettings = field(default_factory=AnalysisSettings)
    calibration: CalibrationSettings = field(default_factory=CalibrationSettings)
    report: Mapping[str, Any] | None = None
    fanout: FanoutSettings = field(default_factory=FanoutSettings)

    def key_parts(self) -> dict[str, Any]:
        """The settings part of the study's reuse key (``metaeval.study.reuse.study_key``)."""
        from metaeval.schema import as_plain

        calibration = {k: v for k, v in as_plain(self.calibration).items() if k != "workers"}  # moves no number
        return {"analysis": as_plain(self.analysis), "calibration": calibration, "report": self.report}


def build_study_settings(analysis: Mapping[str, Any] | None = None, calibration: Mapping[str, Any] | None = None,
                         report: Mapping[str, Any] | None = None,
                         study: Mapping[str, Any] | None = None) -> StudySettings:
    """The typed study settings from plain sections (``study``: the ``study`` section, :class:`FanoutSettings`);
    every bad value is one ``ConfigError`` line naming the key."""
    from metaeval.measures import measure

    analysis = dict(analysis or {})
    if isinstance(analysis.get("metrics"), (list, tuple)):  # V_strict, strict_vital_score ... name the same metric
        analysis["metrics"] = [measure(m, "analysis.metrics").name if isinstance(m, str) else m
                               for m in analysis["metrics"]]
    a = build_section("analysis", analysis, AnalysisSettings)
    if not a.metrics:
        raise ConfigError(f"analysis.metrics must name at least one of {', '.join(METRICS)}")
    c = build_section("calibration", calibration, CalibrationSettings)
    if c.methods is not None:
        from metaeval.study.calibration_workflow import ALL_METHODS
        from metaeval.study.calibration_workflow.defaults import ALIASES

        bad = [m for m in c.methods if m not in ALL_METHODS and m not in ALIASES]
        if bad:
            raise ConfigError(f"calibration.methods: unknown {', '.join(map(str, bad))}; expected {', '.join(ALL_METHODS)}")
    f = build_section("study", study, FanoutSettings)
    return StudySettings(analysis=a, calibration=c, report=None if report is None else dict(report), fanout=f)
