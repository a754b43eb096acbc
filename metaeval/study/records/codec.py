"""JSON records: frozen dataclasses that the study writes and the report, the API and the LaTeX export read back.

A record is a frozen dataclass whose field annotations are the schema.  :func:`decode` turns a parsed JSON value
into the record, checking every field against its annotation; :func:`encode` turns a record back into plain JSON
(dataclasses -> objects, tuples -> lists).  ``encode(decode(T, doc)) == doc`` for a document ``T`` wrote.

Annotations understood: ``str``, ``int``, ``float`` (an int is a number too; a bool is neither), ``bool``,
``X | None``, ``tuple[X, ...]`` (a JSON list), ``tuple[X, Y]`` (a list of that length), ``Mapping[str, X]``
(a JSON object with any keys: the genuinely open parts, e.g. a calibration block or a config echo), ``Any``
(any JSON value, stored as read) and nested records.  An object for a record must carry every field without a
default and no other key.  A field declared with :func:`absent_when_default` is left out of the file while it
holds its default (e.g. ``withheld`` on a cell that was not withheld), as the study wrote it before the schema
was declared.

Every mismatch is ONE :class:`~metaeval.errors.FormatError` naming the file and the field's path
(``cells[2].stats.cost_usd``) with what was expected and what was found.  :func:`json_schema` derives a JSON
Schema (draft 2020-12) from the same annotations.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from metaeval.errors import FormatError

_OMIT = "omit_when_default"


def absent_when_default(default: Any = None, *, factory: Any = None) -> Any:
    """A field left out of the written file while it equals its default (``None``, ``()``, ``{}``)."""
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={_OMIT: True})
    return dataclasses.field(default=default, metadata={_OMIT: True})


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _is_record(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _describe(tp: Any) -> str:
    """The annotation in words, for error messages."""
    if tp is Any:
        return "any JSON value"
    if tp is type(None):
        return "null"
    if _is_record(tp):
        return f"an object ({tp.__name__})"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of {_describe(args[0])}"
        return f"a list of {len(args)} values"
    if origin in (Mapping, dict, typing.Mapping):
        return "an object"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(tp, str(tp))


def _bad(path: str, where: str, tp: Any, value: Any) -> FormatError:
    shown = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__.replace("dict", "an object") \
        .replace("list", "a list")
    return FormatError(path, 0, where or "(document)", f"expected {_describe(tp)}, got {shown}")


def decode(tp: Any, value: Any, path: str, where: str = "") -> Any:
    """``value`` (parsed JSON) as annotation ``tp``; ``path`` (the file) and ``where`` (the field) name a mismatch."""
    if tp is Any:
        return value
    if tp is type(None):
        if value is None:
            return None
        raise _bad(path, where, tp, value)
    if _is_record(tp):
        return _decode_record(tp, value, path, where)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        arms = [a for a in args if a is not type(None)]
        if len(arms) == 1:
            if _is_record(arms[0]) or typing.get_origin(arms[0]) is not None:
                return decode(arms[0], value, path, where)  # a mismatch inside names its own field
            try:
                return decode(arms[0], value, path, where)
            except FormatError:
                raise _bad(path, where, tp, value) from None
        for arm in arms:  # unions of scalars (``int | str``): the first that fits
            try:
                return decode(arm, value, path, where)
            except FormatError:
                continue
        raise _bad(path, where, tp, value)
    if origin is tuple:
        if not isinstance(value, list):
            raise _bad(path, where, tp, value)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v, path, f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise _bad(path, where, tp, value)
        return tuple(decode(a, v, path, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
    if origin in (Mapping, dict):
        if not isinstance(value, dict):
            raise _bad(path, where, tp, value)
        vt = args[1] if len(args) == 2 else Any
        return {str(k): decode(vt, v, path, f"{where}.{k}" if where else str(k)) for k, v in value.items()}
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise _bad(path, where, tp, value)
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _bad(path, where, tp, value)
    if tp is float:  # kept as written (an int stays an int): the file reads back identical
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        raise _bad(path, where, tp, value)
    if tp is str:
        if isinstance(value, str):
            return value
        raise _bad(path, where, tp, value)
    raise TypeError(f"unsupported annotation {tp!r} at {where}")  # a schema bug, not an input error


def _decode_record(cls: type, value: Any, path: str, where: str) -> Any:
    if not isinstance(value, dict):
        raise _bad(path, where, cls, value)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = [k for k in value if k not in fields]
    if unknown:
        at = f"{where}.{unknown[0]}" if where else str(unknown[0])
        raise FormatError(path, 0, at, f"not a field of {cls.__name__} (known: {', '.join(fields)})")
    hints = _hints(cls)
    kwargs = {}
    for name, f in fields.items():
        at = f"{where}.{name}" if where else name
        if name not in value:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise FormatError(path, 0, at, f"missing (a required field of {cls.__name__})")
            continue
        kwargs[name] = decode(hints[name], value[name], path, at)
    return cls(**kwargs)


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def encode(obj: Any) -> Any:
    """A record (or any value inside one) as plain JSON: objects, lists, strings, numbers, booleans, null."""
    if _is_record(type(obj)):
        out = {}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if f.metadata.get(_OMIT) and _same(v, _default(f)):
                continue
            out[f.name] = encode(v)
        return out
    if isinstance(obj, (tuple, list)):
        return [encode(v) for v in obj]
    if isinstance(obj, Mapping):
        return {str(k): encode(v) for k, v in obj.items()}
    return obj


def _same(v: Any, d: Any) -> bool:
    if d is dataclasses.MISSING:
        return False
    if isinstance(d, (tuple, list, dict)) or isinstance(v, (tuple, list, dict)):
        return not v and not d and (v is None) == (d is None)
    return v is d or v == d


def json_schema(tp: Any, defs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON Schema of annotation ``tp`` (records go to ``$defs`` once, referenced by name)."""
    top = defs is None
    defs = {} if defs is None else defs
    if tp is Any:
        out: dict[str, Any] = {}
    elif tp is type(None):
        out = {"type": "null"}
    elif _is_record(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}  # placeholder: recursion-safe
            hints = _hints(tp)
            props = {f.name: json_schema(hints[f.name], defs) for f in dataclasses.fields(tp) if f.init}
            required = [f.name for f in dataclasses.fields(tp) if f.init and _default(f) is dataclasses.MISSING]
            doc = (tp.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
            defs[name] = {"type": "object", "description": doc, "properties": props, "required": required,
                          "additionalProperties": False}
        out = {"$ref": f"#/$defs/{name}"}
    else:
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin in (typing.Union, types.UnionType):
            out = {"anyOf": [json_schema(a, defs) for a in args]}
        elif origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                out = {"type": "array", "items": json_schema(args[0], defs)}
            else:
                out = {"type": "array", "prefixItems": [json_schema(a, defs) for a in args],
                       "minItems": len(args), "maxItems": len(args)}
        elif origin in (Mapping, dict):
            vt = args[1] if len(args) == 2 else Any
            out = {"type": "object", "additionalProperties": json_schema(vt, defs)}
        else:
            out = {"type": {str: "string", int: "integer", float: "number", bool: "boolean"}[tp]}
    if top:
        return {**out, "$defs": defs} if defs else out
    return out
