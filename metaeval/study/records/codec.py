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
was declared; one declared with :func:`only_when_written` is in the file exactly when it was in the file read (or
set in code), whatever its value, null included (it holds :data:`NOT_WRITTEN` otherwise); :func:`json_key` names a
field whose JSON key is not a Python name (``lambda``).  A union of records (``A | B``) takes the arm whose fields
the object's keys fit (so a mismatch inside still names its own field).

An *open* record (:func:`open_record`: an analysis block whose keys depend on what could be computed) declares the
fields its readers use, checked like any other, and keeps every other key as read in ``extra``; it writes its keys
back in the order it read them, so the file stays byte-identical.  Its JSON Schema allows other properties.

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
_KEY = "json_key"


class _NotWritten:
    """The value of an :func:`only_when_written` field that the file did not have (falsy; never written)."""

    _it: "_NotWritten | None" = None

    def __new__(cls) -> "_NotWritten":
        if cls._it is None:
            cls._it = super().__new__(cls)
        return cls._it

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NOT_WRITTEN"

    def __reduce__(self):
        return (_NotWritten, ())


#: the value of a field the file did not carry (:func:`only_when_written`)
NOT_WRITTEN = _NotWritten()


def only_when_written() -> Any:
    """A field written exactly when it holds a value (``None`` included): :data:`NOT_WRITTEN` while it has none."""
    return dataclasses.field(default=NOT_WRITTEN)


def json_key(name: str) -> Any:
    """A required field written under the JSON key ``name`` (one that is not a Python name, e.g. ``lambda``)."""
    return dataclasses.field(metadata={_KEY: name})


_OPEN = "__open_record__"


def open_record(cls: type) -> type:
    """Mark a record (a frozen dataclass with the fields ``extra: Mapping[str, Any]`` and ``key_order:
    tuple[str, ...]``, both defaulted) as open: keys it does not declare are kept in ``extra``, and ``key_order``
    (the keys as read) orders what it writes."""
    names = {f.name for f in dataclasses.fields(cls)}
    if not {"extra", "key_order"} <= names:
        raise TypeError(f"open record {cls.__name__} needs fields extra and key_order")
    setattr(cls, _OPEN, True)
    return cls


def _is_open(cls: type) -> bool:
    return bool(getattr(cls, _OPEN, False))


@lru_cache(maxsize=None)
def _own(cls: type) -> tuple[dataclasses.Field, ...]:
    """The fields that are JSON keys (an open record's ``extra`` and ``key_order`` are not); a record's fields are
    fixed when its class is made, so they are looked up once per class (a study's files hold some 50,000 values)."""
    skip = ("extra", "key_order") if _is_open(cls) else ()
    return tuple(f for f in dataclasses.fields(cls) if f.init and f.name not in skip)


@lru_cache(maxsize=None)
def _by_key(cls: type) -> dict[str, dataclasses.Field]:
    """JSON key -> field of :func:`_own` (read only)."""
    return {_key(f): f for f in _own(cls)}


def _key(f: dataclasses.Field) -> str:
    return f.metadata.get(_KEY, f.name)


def absent_when_default(default: Any = None, *, factory: Any = None) -> Any:
    """A field left out of the written file while it equals its default (``None``, ``()``, ``{}``)."""
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={_OMIT: True})
    return dataclasses.field(default=default, metadata={_OMIT: True})


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _is_record(tp: Any) -> bool:
    try:
        return _is_record_type(tp)
    except TypeError:  # an unhashable annotation is no class
        return False


@lru_cache(maxsize=None)
def _is_record_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _shape(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    """``(typing.get_origin(tp), typing.get_args(tp))``, computed once per annotation."""
    try:
        return _cached_shape(tp)
    except TypeError:  # unhashable: computed each time
        return typing.get_origin(tp), typing.get_args(tp)


@lru_cache(maxsize=None)
def _cached_shape(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    return typing.get_origin(tp), typing.get_args(tp)


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
    if tp is str:  # the scalars first (most of a document's values; no generic branch below can match them)
        if isinstance(value, str):
            return value
        raise _bad(path, where, tp, value)
    if tp is float:  # kept as written (an int stays an int): the file reads back identical
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        raise _bad(path, where, tp, value)
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _bad(path, where, tp, value)
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise _bad(path, where, tp, value)
    if _is_record(tp):
        return _decode_record(tp, value, path, where)
    origin, args = _shape(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        arms = [a for a in args if a is not type(None)]
        records = [a for a in arms if _is_record(a)]
        if len(records) > 1 and isinstance(value, dict):
            return decode(_best_record(records, value), value, path, where)
        if len(arms) == 1:
            if _is_record(arms[0]) or _shape(arms[0])[0] is not None:
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
    raise TypeError(f"unsupported annotation {tp!r} at {where}")  # a schema bug, not an input error


def _best_record(records: list[type], value: dict) -> type:
    """The record of a union that an object's keys fit best: every key a field and every required field present,
    else the most keys that are fields (its decoding then names the field that does not fit)."""
    def fit(cls: type) -> tuple[bool, int]:
        fields = _by_key(cls)
        known = sum(k in fields for k in value)
        required = all(k in value for k, f in fields.items() if _default(f) is dataclasses.MISSING)
        return (known == len(value) and required, known)

    return max(records, key=fit)  # the first of equals: declaration order


def _decode_record(cls: type, value: Any, path: str, where: str) -> Any:
    if not isinstance(value, dict):
        raise _bad(path, where, cls, value)
    fields = _by_key(cls)
    unknown = [k for k in value if k not in fields]
    if unknown and not _is_open(cls):
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
        kwargs[f.name] = decode(hints[f.name], value[name], path, at)
    if _is_open(cls):
        kwargs["extra"] = {k: value[k] for k in unknown}
        kwargs["key_order"] = tuple(value)
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
        is_open = _is_open(type(obj))
        for f in _own(type(obj)):
            v = getattr(obj, f.name)
            if v is NOT_WRITTEN or (f.metadata.get(_OMIT) and _same(v, _default(f))):
                continue
            if is_open and obj.key_order and _key(f) not in obj.key_order and _same(v, _default(f)):
                continue  # an open record writes the keys it read (a default it did not read stays out)
            out[_key(f)] = encode(v)
        if is_open:
            extra = {str(k): encode(v) for k, v in obj.extra.items()}
            order = [k for k in obj.key_order if k in out or k in extra]
            out = {k: out[k] if k in out else extra[k] for k in order} | \
                {k: v for k, v in (out | extra).items() if k not in order}
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
            props = {_key(f): json_schema(hints[f.name], defs) for f in _own(tp)}
            required = [_key(f) for f in _own(tp) if _default(f) is dataclasses.MISSING]
            doc = (tp.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
            defs[name] = {"type": "object", "description": doc, "properties": props, "required": required,
                          "additionalProperties": _is_open(tp) or False}
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
