"""Typed settings: the one way a configuration section becomes a frozen dataclass, checked with one-line errors.

A section is a frozen dataclass whose fields are declared with :func:`setting` (default, kind, bounds).  Its
``metadata`` holds the rule: ``kind`` (int | float | bool | str | choice | list | dict), bounds (``ge``, ``le``,
``gt``), ``choices``, whether ``null`` is allowed, and for lists the element rule (``item``: choices and
``unique``).  :func:`build_section` turns a plain mapping into the dataclass: absent keys take the field's
default (the ONE place defaults live), a wrong type or an out-of-range value is ONE ``ConfigError`` line naming
the key (``sweep.assign_batch must be an integer >= 1 and <= 10, got 0``), and an unknown key names the nearest
valid one (``sweep.budjet_usd is not a setting; did you mean budget_usd?``).

The sections themselves live with what they configure: ``metaeval.pipeline.settings`` (sweep, runtime, cache,
dataset, grid), ``metaeval.study.settings`` (analysis, calibration); the tree is assembled once at the edge
(``metaeval.workflow.settings``) and passed down as objects.
"""

from __future__ import annotations

import difflib
from dataclasses import MISSING, field, fields
from typing import Any, Iterable, Mapping

from metaeval.errors import ConfigError


def setting(default: Any, kind: str, *, ge: float | None = None, le: float | None = None, gt: float | None = None,
            choices: Iterable[Any] = (), null: bool = False, unique: bool = False, doc: str = "") -> Any:
    """A dataclass field with its rule.  For ``kind="list"``, ``choices`` and ``unique`` apply to the elements."""
    meta = {"kind": kind, "ge": ge, "le": le, "gt": gt, "choices": tuple(choices), "null": null, "unique": unique,
            "doc": doc}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    return field(default=default, metadata=meta)


def nearest(name: str, known: Iterable[str]) -> str:
    """`` (did you mean X?)`` for the closest of ``known`` to ``name`` (difflib ratio >= 0.6), else ``""``."""
    close = difflib.get_close_matches(str(name), list(known), n=1)
    return f"; did you mean {close[0]}?" if close else ""


def unknown_key_error(where: str, key: str, known: Iterable[str]) -> ConfigError:
    """One line: ``WHERE.KEY is not a setting; did you mean X? (known: ...)``."""
    known = list(known)
    return ConfigError(f"{where}.{key} is not a setting{nearest(key, known)} (known: {', '.join(known)})")


def _describe(meta: Mapping[str, Any]) -> str:
    kind = meta["kind"]
    if kind == "choice":
        return "one of " + ", ".join(map(str, meta["choices"]))
    noun = {"int": "an integer", "auto_int": "auto or an integer", "float": "a number", "bool": "true or false", "str": "a string",
            "list": "a list", "dict": "a mapping"}[kind]
    if kind == "list" and meta["choices"]:
        noun += " of " + ", ".join(map(str, meta["choices"]))
    if kind == "list" and meta["unique"]:
        noun += " (each at most once)"
    bounds = [f"{op} {meta[k]:g}" for k, op in (("ge", ">="), ("gt", ">"), ("le", "<=")) if meta.get(k) is not None]
    text = noun + (" " + " and ".join(bounds) if bounds else "")
    return text + (" or null" if meta["null"] else "")


def _check_list(value: Any, meta: Mapping[str, Any], bad: Any) -> list:
    if not isinstance(value, (list, tuple)):
        raise bad()
    items = list(value)
    if meta["choices"] and any(v not in meta["choices"] for v in items):
        raise bad()
    if meta["unique"] and len(set(map(str, items))) != len(items):
        raise bad()
    return items


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
    if kind == "auto_int":  # "auto", or an integer within the bounds
        if value == "auto":
            return value
        kind = "int"
    if kind == "bool":
        if not isinstance(value, bool):
            raise bad()
        return value
    if kind == "list":
        return _check_list(value, meta, bad)
    if kind == "dict":
        if not isinstance(value, Mapping):
            raise bad()
        return dict(value)
    if kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
        raise bad()
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise bad()
        value = float(value)
    if kind == "str" and (not isinstance(value, str) or not value):
        raise bad()
    if kind == "choice" and value not in meta["choices"]:
        raise bad()
    if kind in ("int", "float"):
        if (meta["ge"] is not None and value < meta["ge"]) or (meta["le"] is not None and value > meta["le"]) \
                or (meta["gt"] is not None and value <= meta["gt"]):
            raise bad()
    return value


def build_section(section: str, values: Mapping[str, Any] | None, schema: type) -> Any:
    """The typed settings of one section (defaults for absent keys); unknown keys and bad values are errors."""
    if values is None:
        values = {}
    if not isinstance(values, Mapping):
        raise ConfigError(f"{section} must be a mapping, got {values!r}")
    known = {f.name: f for f in fields(schema)}
    for key in values:
        if key not in known:
            raise unknown_key_error(section, key, known)
    out = {}
    for name, f in known.items():
        if name in values:
            out[name] = check_value(f"{section}.{name}", values[name], f.metadata)
        elif f.default is MISSING and f.default_factory is MISSING:  # pragma: no cover - every field has one
            raise ConfigError(f"{section}.{name} is required")
    return schema(**out)


def as_plain(settings: Any) -> dict[str, Any]:
    """A section's values as a plain dict (field order), the form written to ``config.yaml``."""
    return {f.name: getattr(settings, f.name) for f in fields(settings)}
