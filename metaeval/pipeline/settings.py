"""The pipeline's typed settings: ``sweep``, ``runtime``, ``cache``, ``dataset`` and ``grid`` sections, and the
``PipelineSettings`` node the sweep driver receives (built once at the edge by ``metaeval.workflow.settings``).

Each field's default here is THE default (the YAML files only repeat them for readers); rules and one-line errors
come from ``metaeval.schema``.  Study settings (``analysis``, ``calibration``) live with the study
(``metaeval.study.settings``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from metaeval.schema import setting

#: the most draws of one assignment call (``sweep.samples``): k label sets per cell are held in memory
MAX_SAMPLES = 50


@dataclass(frozen=True)
class SweepSettings:
    """``sweep.*``: the paper's batching (Pradeep et al. 2025, section 4) and run controls.  Also the settings of
    every stage job (``metaeval.pipeline.stages``: batch sizes, caps)."""

    dry_run: bool = setting(False, "bool")
    budget_usd: float | None = setting(None, "float", ge=0, null=True, doc="USD cap on the estimated spend")
    creation_window: int = setting(10, "int", ge=1, le=10)
    max_nuggets: int = setting(30, "int", ge=1, le=30)
    keep_top: int = setting(20, "int", ge=1)
    importance_batch: int = setting(10, "int", ge=1, le=10)
    assign_batch: int = setting(10, "int", ge=1, le=10)
    min_grade: int = setting(1, "int", ge=0, le=3)
    relevance: str = setting("qrels", "choice", choices=("qrels", "judge"))
    relevance_batch: int = setting(10, "int", ge=1, le=10)
    progress: bool = setting(True, "bool")
    max_failed_rate: float = setting(0.5, "float", ge=0, le=1)
    offline: bool = setting(False, "bool")
    samples: int = setting(1, "int", ge=1, le=MAX_SAMPLES, doc="k draws of every assignment call (self-consistency)")


@dataclass(frozen=True)
class RuntimeSettings:
    """``runtime.*``: where jobs run (``metaeval.pipeline.executors``)."""

    executor: str = setting("serial", "choice", choices=("auto", "serial", "ray"))
    address: str | None = setting(None, "str", null=True)
    num_cpus: int | None = setting(None, "int", ge=1, null=True)
    max_job_retries: int = setting(3, "int", ge=0)
    ship_package: bool = setting(True, "bool")
    runtime_env: dict = setting({}, "dict")
    shared_cache: bool | None = setting(None, "bool", null=True)
    restart_timeout_s: float = setting(60.0, "float", gt=0)


@dataclass(frozen=True)
class CacheSettings:
    """``cache.*``: the response cache shared by all judges."""

    enabled: bool = setting(True, "bool")
    path: str | None = setting(None, "str", null=True)

    @property
    def active_path(self) -> str | None:
        """The cache file judges use (None: no cache)."""
        return self.path if self.enabled else None


@dataclass(frozen=True)
class DatasetSettings:
    """``dataset.*``: a registered name or a path, and an optional nugget set replacing the human nuggets."""

    name: str = setting("demo", "str")
    source: str | None = setting(None, "str", null=True)
    nuggets: str | None = setting(None, "str", null=True)


@dataclass(frozen=True)
class GridSettings:
    """``grid.*``: the axes of the sweep (null: the single top-level choice)."""

    judges: list | None = setting(None, "list", null=True, unique=True)
    optional_judges: list | None = setting(None, "list", null=True, unique=True)
    prompts: list | None = setting(None, "list", null=True, unique=True)
    strategies: list | None = setting(None, "list", null=True, unique=True)


@dataclass(frozen=True)
class PipelineSettings:
    """What the sweep driver reads: the results folder (``results_dir/name``), the sections above and whether the
    grid is one cell chosen at the top level (``single``: a cell that cannot run is an error, not a skip)."""

    name: str
    results_dir: str = "results"
    sweep: SweepSettings = field(default_factory=SweepSettings)
    runtime: RuntimeSettings = field(default_factory=RuntimeSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    dataset: DatasetSettings = field(default_factory=DatasetSettings)
    single: bool = False
