"""Line-oriented JSON reading and writing with errors that name file, line and field."""

from __future__ import annotations

import gzip
import json
import os
from math import isfinite as _isfinite
from typing import Any, Iterable, Iterator

from metaeval.errors import FormatError


def open_text(path: str | os.PathLike, mode: str = "rt"):
    """Open a text file, transparently handling ``.gz``.  Reading is strict UTF-8 (a leading byte-order mark is
    skipped); writing is UTF-8 without one."""
    p = str(path)
    enc = "utf-8" if "w" in mode or "a" in mode else "utf-8-sig"
    if p.endswith(".gz"):
        return gzip.open(p, mode, encoding=enc)
    return open(p, mode, encoding=enc, newline="" if "w" in mode else None)


class DuplicateKeyError(ValueError):
    """A JSON object that names the same key twice (raised by ``loads_strict``)."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise DuplicateKeyError(k)
            seen.add(k)
    return obj


#: ``json.loads`` that rejects duplicated keys.  Python's ``json`` keeps the *last* value silently; a label file
#: with ``"assignment"`` twice is ambiguous, so metaeval treats it as an input error naming the key.
loads_strict = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys).decode


#: the longest line read (a 50 MB answer is fine; ``/dev/zero`` or a binary file without line ends is not)
MAX_LINE_BYTES = 256 * 1024 * 1024


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every line of a (possibly gzipped) UTF-8 file, line ending stripped.

    Lines are decoded one by one so that bytes which are not UTF-8 raise ``FormatError`` naming the line and
    column; a missing file or a folder raises ``FormatError`` too, and so does a line over ``MAX_LINE_BYTES``
    (read at most that far: ``metaeval score /dev/zero`` is one line, not a ``MemoryError``).  A UTF-8 byte-order mark at the start is
    skipped.
    """
    p = str(path)
    try:
        fh = gzip.open(p, "rb") if p.endswith(".gz") else open(p, "rb")
    except FileNotFoundError:
        raise FormatError(p, 0, "", "no such file") from None
    except IsADirectoryError:
        raise FormatError(p, 0, "", "is a folder, not a file") from None
    with fh:
        try:
            lineno = 0
            while True:
                raw = fh.readline(MAX_LINE_BYTES + 1)  # never more than the cap in memory (/dev/zero has no "\n")
                if not raw:
                    break
                lineno += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise FormatError(p, lineno, "", f"line longer than {MAX_LINE_BYTES:,} bytes (no line end found); "
                                      "not a line-oriented text file")
                if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark (Excel, Notepad)
                    raw = raw[3:]
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise FormatError(p, lineno, "", f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}: "
                                                      f"{exc.reason}); re-save the file as UTF-8") from None
                yield lineno, text.rstrip("\r\n")
        except (OSError, EOFError) as exc:  # e.g. a truncated or corrupt .gz
            raise FormatError(p, 0, "", f"cannot read: {exc}") from None


def iter_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for every non-blank line.

    Raises ``FormatError`` for an empty file, a line that is not valid JSON (including a truncated last line),
    a line that is not a JSON object, an object with a duplicated key, or bytes that are not UTF-8 (with the
    line and column).
    """
    seen = False
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        seen = True
        try:
            obj = loads_strict(line)
        except json.JSONDecodeError as exc:
            raise FormatError(path, lineno, "", f"malformed JSON ({exc.msg} at column {exc.colno})") from None
        except DuplicateKeyError as exc:
            raise FormatError(path, lineno, exc.key, "key appears twice in one JSON object (ambiguous; metaeval does not "
                                                     "pick one)") from None
        except RecursionError:
            raise FormatError(path, lineno, "", "malformed JSON (nested too deeply)") from None
        except ValueError as exc:  # e.g. an integer of more than 4,300 digits (int_max_str_digits)
            raise FormatError(path, lineno, "", f"unreadable JSON value ({_short(str(exc), 100)})") from None
        if not isinstance(obj, dict):
            raise FormatError(path, lineno, "", f"expected a JSON object, got {type(obj).__name__}")
        yield lineno, obj
    if not seen:
        raise FormatError(path, 0, "", "empty file (no JSON lines)")


def write_jsonl(path: str | os.PathLike, records: Iterable[dict[str, Any]]) -> int:
    """Write records one per line (UTF-8, no ASCII escaping); returns the count.  Writes atomically: a unique
    temporary file in the same folder renamed over ``path`` (``metaeval.io.atomic``), so concurrent writers never
    collide on a temporary name and a reader never sees half a file."""
    from metaeval.io.atomic import atomic_open

    n = 0
    with atomic_open(path, "w") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False))
            fh.write("\n")
            n += 1
    return n


_TYPE_NAMES = {str: "a string", list: "a list", dict: "an object", int: "an integer", float: "a number"}


def require(obj: dict[str, Any], key: str, types: type | tuple[type, ...], path: Any, line: int, prefix: str = "") -> Any:
    """Return ``obj[key]``, raising ``FormatError`` naming the field if it is missing or of the wrong type."""
    name = f"{prefix}{key}"
    if key not in obj:
        raise FormatError(path, line, name, "missing required field")
    value = obj[key]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
        want = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in _as_tuple(types))
        raise FormatError(path, line, name, f"expected {want}, got {type(value).__name__} {_short(value)}")
    return value


def optional(obj: dict[str, Any], key: str, types: type | tuple[type, ...], path: Any, line: int, default: Any = None, prefix: str = "") -> Any:
    """Like ``require`` but returns ``default`` when the field is absent or null."""
    if obj.get(key) is None:
        return default
    return require(obj, key, types, path, line, prefix)


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _short(value: Any, n: int = 40) -> str:
    s = repr(value)
    return s if len(s) <= n else s[: n - 3] + "..."


def finite_or_none(x: Any) -> float | None:
    """A number for a JSON record: ``float(x)``, or None when ``x`` is None, NaN or infinite."""
    if x is None:
        return None
    x = float(x)
    return x if _isfinite(x) else None


def to_jsonable(obj: Any) -> Any:
    """Recursively turn numpy scalars/arrays, sets, tuples and paths into JSON types; NaN and inf become None.

    The exact built-in types (what nearly every node is) are dispatched on ``type(obj)`` first: the same output as
    the ``isinstance`` chain below, which handles subclasses and everything else, at half the cost."""
    t = type(obj)
    if t is str or t is int or t is bool or obj is None:
        return obj
    if t is float:
        return obj if _isfinite(obj) else None
    if t is dict:
        return {(k if type(k) is str else str(k)): to_jsonable(v) for k, v in obj.items()}
    if t is list or t is tuple:
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(to_jsonable(v) for v in obj)
    if isinstance(obj, float):
        return obj if _isfinite(obj) else None
    if isinstance(obj, (str, int, bool)):
        return obj
    if hasattr(obj, "__json__"):  # a results record (metaeval.study.records) as the JSON it writes
        return to_jsonable(obj.__json__())
    if hasattr(obj, "tolist"):  # numpy scalars and arrays
        return to_jsonable(obj.tolist())
    if isinstance(obj, os.PathLike):
        return str(obj)
    return str(obj)
