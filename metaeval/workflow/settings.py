"""The settings tree of a sweep, built ONCE at the edge from the composed configuration and passed down as objects.

``build_settings(config)`` checks every section of the plain composed config (``metaeval.workflow.hydra_config``) and
returns a frozen :class:`RunSettings`:

* ``pipeline`` (``metaeval.pipeline.settings.PipelineSettings``: results folder, sweep, runtime, cache, dataset)
  for the sweep driver;
* ``study`` (``metaeval.study.settings.StudySettings``: analysis, calibration) for the study;
* ``report_enabled`` for the report step;
* ``document``: the composed configuration as written to ``config.yaml`` and echoed in ``summary.json``: a record
  of what was asked for.  Settings come from the typed sections above; what is still read from the document (or
  from ``config.yaml``) is: ``report.enabled`` by ``workflow.report.report_after_study`` (the same value as
  ``report_enabled``, which the driver checks first), ``name`` and the composition's ``_grid_notes`` by
  ``study.run`` (recorded in ``summary.json``; the notes are also logged by ``workflow.compose.log_grid_notes`` and
  ``commands.sweep``), and ``analysis.tau`` by ``report.context`` (the tau variant the study used, from
  ``config.yaml``).

Every bad value is one ``ConfigError`` line naming the key; an unknown key names the nearest valid one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from metaeval.errors import ConfigError
from metaeval.pipeline.settings import (CacheSettings, DatasetSettings, GridSettings, PipelineSettings,
                                        RuntimeSettings, SweepSettings)
from metaeval.schema import build_section, nearest, unknown_key_error
from metaeval.study.settings import StudySettings, build_study_settings

#: top-level keys of a composed configuration (Hydra groups and plain keys); ``judges`` is filled in by compose
TOP_LEVEL: tuple[str, ...] = ("dataset", "judge", "prompt", "strategy", "runtime", "cache", "analysis",
                              "calibration", "grid", "report", "name", "results_dir", "sweep", "study", "judges")
#: the ``report`` section (``report.enabled: false``: no report at the end of a sweep)
REPORT_KEYS: tuple[str, ...] = ("enabled",)


@dataclass(frozen=True)
class RunSettings:
    """The typed settings of one sweep (see the module docstring)."""

    pipeline: PipelineSettings
    study: StudySettings
    grid: GridSettings
    report_enabled: bool = True
    document: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.pipeline.name

    @property
    def sweep(self) -> SweepSettings:
        return self.pipeline.sweep


def check_top_level(config: Mapping[str, Any]) -> None:
    """Unknown top-level keys (``+foo=1``) are an error naming the nearest known key; ``name`` and
    ``results_dir`` must be strings."""
    for key in config:
        if not str(key).startswith("_") and key not in TOP_LEVEL:
            raise ConfigError(f"{key} is not a setting{nearest(str(key), TOP_LEVEL)} (known: {', '.join(TOP_LEVEL)})")
    name = config.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise ConfigError(f"name must be a non-empty string or null, got {name!r}")
    if not isinstance(config.get("results_dir", "results"), str):
        raise ConfigError(f"results_dir must be a string, got {config.get('results_dir')!r}")


def check_report(report: Any) -> bool:
    """``report.enabled`` (default true); any other key of ``report`` is an error."""
    if report is None:
        return True
    if not isinstance(report, Mapping):
        raise ConfigError(f"report must be a mapping, got {report!r}")
    for key in report:
        if key not in REPORT_KEYS:
            raise unknown_key_error("report", key, REPORT_KEYS)
    enabled = report.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"report.enabled must be true or false, got {enabled!r}")
    return enabled


def check_sections(config: Mapping[str, Any]) -> dict[str, Any]:
    """Every section checked (before the grid is expanded): section -> typed settings."""
    check_top_level(config)
    out = {"sweep": build_section("sweep", config.get("sweep"), SweepSettings),
           "runtime": build_section("runtime", config.get("runtime"), RuntimeSettings),
           "cache": build_section("cache", config.get("cache"), CacheSettings),
           "dataset": build_section("dataset", config.get("dataset"), DatasetSettings),
           "grid": build_section("grid", config.get("grid"), GridSettings),
           "study": build_study_settings(config.get("analysis"), config.get("calibration"), config.get("report"),
                                         config.get("study")),
           "report_enabled": check_report(config.get("report"))}
    return out


def build_settings(config: Mapping[str, Any], sections: Mapping[str, Any] | None = None, *,
                   single: bool = False) -> RunSettings:
    """The settings tree of a composed configuration whose ``name`` is filled in (``compose_sweep``);
    ``sections``: what ``check_sections`` returned for it (checked once; computed here when not given)."""
    s = sections if sections is not None else check_sections(config)
    pipeline = PipelineSettings(name=str(config["name"]), results_dir=str(config.get("results_dir", "results")),
                                sweep=s["sweep"], runtime=s["runtime"], cache=s["cache"], dataset=s["dataset"],
                                single=single)
    return RunSettings(pipeline=pipeline, study=s["study"], grid=s["grid"], report_enabled=s["report_enabled"],
                       document=dict(config))
