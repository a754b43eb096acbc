"""Checks shared by the line-oriented readers (``trec``, ``trec_eval``): a field parsed as a number and a key
seen once, each failing with one ``FormatError`` naming the file, line and field."""

from __future__ import annotations

from typing import Any, Callable, Hashable

from metaeval.errors import FormatError


def parse_number(text: str, kind: Callable[[str], Any], path: str, lineno: int, field: str, context: str = "") -> Any:
    """``kind(text)`` (``int`` or ``float``); ``FormatError`` "not an integer/a number: 'x' (context)" otherwise."""
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise FormatError(path, lineno, field, f"not {what}: {text!r}{f' ({context})' if context else ''}") from None


def first_time(seen: dict[Hashable, int], key: Hashable, path: str, lineno: int, field: str, what: str) -> None:
    """Record ``key`` as seen on ``lineno``; ``FormatError`` "duplicate <what>, first on line N" when it was seen."""
    if key in seen:
        raise FormatError(path, lineno, field, f"duplicate {what}, first on line {seen[key]}")
    seen[key] = lineno
