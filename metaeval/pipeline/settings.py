"""Typed settings: one frozen dataclass per config section, checked when the sweep config is composed.

The composed Hydra config (a plain dict: ``metaeval.commands.compose``) is validated section by section against
these schemas; a wrong type or a value out of range is ONE ``ConfigError`` line naming the key, e.g.
``sweep.assign_batch must be an integer >= 1 and <= 10, got 0``.  Each field's ``metadata`` holds its rule:
``kind`` (int | float | bool | str | choice | list), bounds (``ge``, ``le``, ``gt``), ``choices`` and whether
``null`` is allowed.  Unknown keys in a section are an error too (a misspelt key is never silently ignored).

This is the schema the issue asks for ("Hydra structured configs or an equivalent schema"): it is kept outside
Hydra's ConfigStore so that the core validates plain dicts (tests and the Python API use it without Hydra) and so
that every message is one line.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Mapping

from metaeval.errors import ConfigError


def _f(default: Any, kind: str, *, ge: float | None = None, le: float | None = None, gt: float | None = None,
       choices: tuple[Any, ...] = (), null: bool = False, doc: str = "") -> Any:
    meta = {"kind": kind, "ge": ge, "le": le, "gt": gt, "choices": choices, "null": null, "doc": doc}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class SweepSettings:
    """``sweep.*``: the paper's batching (Pradeep et al. 2025, section 4) and run controls."""

    dry_run: bool = _f(False, "bool")
    budget_usd: float | None = _f(None, "float", ge=0, null=True, doc="USD cap on the estimated spend")
    creation_window: int = _f(10, "int", ge=1, le=10)
    max_nuggets: int = _f(30, "int", ge=1, le=30)
    keep_top: int = _f(20, "int", ge=1)
    importance_batch: int = _f(10, "int", ge=1, le=10)
    assign_batch: int = _f(10, "int", ge=1, le=10)
    min_grade: int = _f(1, "int", ge=0, le=3)
    relevance: str = _f("qrels", "choice", choices=("qrels", "judge"))
    relevance_batch: int = _f(10, "int", ge=1, le=10)
    progress: bool = _f(True, "bool")
    max_failed_rate: float = _f(0.5, "float", ge=0, le=1)
    offline: bool = _f(False, "bool")
    samples: int = _f(1, "int", ge=1, le=50, doc="k draws of every assignment call (judge self-consistency)")


@dataclass(frozen=True)
class RuntimeSettings:
    name: str = _f("serial", "str")
    executor: str = _f("serial", "choice", choices=("auto", "serial", "ray"))
    address: str | None = _f(None, "str", null=True)
    num_cpus: int | None = _f(None, "int", ge=1, null=True)
    max_job_retries: int = _f(3, "int", ge=0)
    ship_package: bool = _f(True, "bool")
    runtime_env: dict = _f({}, "dict")
    shared_cache: bool | None = _f(None, "bool", null=True)
    restart_timeout_s: float = _f(60.0, "float", gt=0)


@dataclass(frozen=True)
class CacheSettings:
    enabled: bool = _f(True, "bool")
    path: str | None = _f(None, "str", null=True)


@dataclass(frozen=True)
class AnalysisSettings:
    metrics: list = _f(["v_strict", "a_strict", "v", "a", "w_strict", "w"], "list")
    tau: str = _f("b", "choice", choices=("b", "a", "ap"))
    bootstrap: int = _f(1000, "int", ge=0)
    seed: int = _f(0, "int")


@dataclass(frozen=True)
class CalibrationSettings:
    enabled: bool = _f(True, "bool")
    methods: list | None = _f(None, "list", null=True)
    folds: int = _f(5, "int", ge=2)
    seed: int = _f(0, "int")


@dataclass(frozen=True)
class DatasetSettings:
    name: str = _f("demo", "str")
    source: str | None = _f(None, "str", null=True)
    nuggets: str | None = _f(None, "str", null=True)


@dataclass(frozen=True)
class GridSettings:
    judges: list | None = _f(None, "list", null=True)
    optional_judges: list | None = _f(None, "list", null=True)
    prompts: list | None = _f(None, "list", null=True)
    strategies: list | None = _f(None, "list", null=True)


#: config section -> schema (``judge`` is checked by ``metaeval.judges.catalog``; ``strategy`` by its registry)
SECTIONS: dict[str, type] = {"sweep": SweepSettings, "runtime": RuntimeSettings, "cache": CacheSettings,
                             "analysis": AnalysisSettings, "calibration": CalibrationSettings,
                             "dataset": DatasetSettings, "grid": GridSettings}


def _describe(meta: Mapping[str, Any]) -> str:
    kind = meta["kind"]
    if kind == "choice":
        return "one of " + ", ".join(map(str, meta["choices"]))
    noun = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string",
            "list": "a list", "dict": "a mapping"}[kind]
    bounds = [f"{op} {meta[k]:g}" for k, op in (("ge", ">="), ("gt", ">"), ("le", "<=")) if meta.get(k) is not None]
    text = noun + (" " + " and ".join(bounds) if bounds else "")
    return text + (" or null" if meta["null"] else "")


def check_value(key: str, value: Any, meta: Mapping[str, Any]) -> Any:
    """``value`` if it obeys the rule in ``meta``; else one ConfigError line naming ``key``."""
    given = value

    def bad() -> ConfigError:
        return ConfigError(f"{key} must be {_describe(meta)}, got {given!r}")

    if value is None:
        if meta["null"]:
            return None
        raise bad()
    kind = meta["kind"]
    if kind == "bool":
        if not isinstance(value, bool):
            raise bad()
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad()
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise bad()
        value = float(value)
    elif kind == "str":
        if not isinstance(value, str) or not value:
            raise bad()
    elif kind == "choice":
        if value not in meta["choices"]:
            raise bad()
    elif kind == "list":
        if not isinstance(value, (list, tuple)):
            raise bad()
        return list(value)
    elif kind == "dict":
        if not isinstance(value, Mapping):
            raise bad()
        return dict(value)
    if kind in ("int", "float"):
        if (meta["ge"] is not None and value < meta["ge"]) or (meta["le"] is not None and value > meta["le"]) \
                or (meta["gt"] is not None and value <= meta["gt"]):
            raise bad()
    return value


def validate_section(section: str, values: Mapping[str, Any] | None, schema: type | None = None) -> Any:
    """The typed settings of one section (defaults for absent keys); unknown keys and bad values are errors."""
    schema = schema or SECTIONS[section]
    values = dict(values or {})
    if not isinstance(values, dict):
        raise ConfigError(f"{section} must be a mapping")
    known = {f.name: f for f in fields(schema)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"{section}.{unknown[0]} is not a setting; known: {', '.join(known)}")
    out = {}
    for name, f in known.items():
        if name in values:
            out[name] = check_value(f"{section}.{name}", values[name], f.metadata)
        elif f.default is MISSING and f.default_factory is MISSING:  # pragma: no cover - every field has one
            raise ConfigError(f"{section}.{name} is required")
    return schema(**out)


def validate_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check every known section of a composed config; returns section -> typed settings."""
    out: dict[str, Any] = {}
    for section, schema in SECTIONS.items():
        if section in config:
            out[section] = validate_section(section, config[section], schema)
    name = config.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise ConfigError(f"name must be a non-empty string or null, got {name!r}")
    if not isinstance(config.get("results_dir", "results"), str):
        raise ConfigError(f"results_dir must be a string, got {config.get('results_dir')!r}")
    return out
