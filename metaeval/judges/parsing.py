"""Read a list out of a model reply: pure functions, no model calls.

Accepted shapes (first match wins, searched in this order):

1. the contents of fenced code blocks (```json / ```python / ```), last block first;
2. the whole reply as JSON: a list, or an object whose ``labels`` / ``nuggets`` (or first list-valued) field
   is a list;
3. any bracketed ``[...]`` span or braced ``{...}`` span inside prose, read as JSON or, failing that, as a
   Python literal (``ast.literal_eval``: never ``eval``); the *last* such span that is a list of strings wins,
   because models put the answer after their reasoning.

``check_labels`` then validates length and vocabulary; ``check_grades`` does the same for integer grades
(relevance, 0-3).  It never invents a label: a reply that cannot be used
returns a ``problem`` string which the LLM judge sends back in a re-ask, and after the last re-ask the items are
FAILED with the raw reply kept.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n(.*?)```", re.DOTALL)
_PREFERRED_KEYS = ("labels", "nuggets", "grades", "assignments", "importance", "items")


def _as_list(obj: Any) -> list | None:
    if isinstance(obj, list):
        return obj
    if isinstance(obj, dict):
        for key in _PREFERRED_KEYS:
            if isinstance(obj.get(key), list):
                return obj[key]
        for val in obj.values():
            if isinstance(val, list):
                return val
    return None


def _literal(text: str) -> Any:
    text = text.strip()
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _spans(text: str, open_ch: str, close_ch: str) -> list[str]:
    """Balanced ``open_ch...close_ch`` spans (outermost), skipping brackets inside quoted strings."""
    spans, depth, start, quote, esc = [], 0, -1, "", False
    for i, ch in enumerate(text):
        if quote:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "\"'" and depth > 0:
            # an apostrophe inside a word (don't) is not a quote
            if ch == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < len(text) and text[i + 1].isalnum():
                continue
            quote = ch
        elif ch == open_ch:
            if depth == 0:
                start = i
            depth += 1
        elif ch == close_ch and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def _is_str_list(obj: Any) -> bool:
    return isinstance(obj, list) and all(isinstance(x, str) for x in obj)


def extract_list(reply: str) -> list | None:
    """The list a reply contains (see module docstring), or ``None`` when there is none."""
    if not isinstance(reply, str) or not reply.strip():
        return None
    for _lang, body in reversed(_FENCE.findall(reply)):
        found = _as_list(_literal(body))
        if found is not None:
            return found
    whole = _as_list(_literal(reply))
    if whole is not None:
        return whole
    candidates: list[tuple[int, list]] = []
    for open_ch, close_ch in (("[", "]"), ("{", "}")):
        for span in _spans(reply, open_ch, close_ch):
            found = _as_list(_literal(span))
            if found is not None:
                candidates.append((reply.rfind(span), found))
    if not candidates:
        return None
    candidates.sort(key=lambda c: c[0])
    strs = [c for c in candidates if _is_str_list(c[1]) and c[1]]
    return (strs or candidates)[-1][1]


def normalize_label(value: Any) -> str:
    """``"Partial Support"`` -> ``"partial_support"``."""
    return re.sub(r"[\s\-]+", "_", str(value).strip().strip(".").lower())


class _Checked:
    """A checked reply: ``ok`` when it has no ``problem``."""

    problem: str | None

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class LabelCheck(_Checked):
    """Outcome of checking one reply: ``labels`` (canonical strings, ``None`` per unknown item) and ``problem``."""

    labels: tuple[str | None, ...] | None
    problem: str | None


def check_labels(reply: str, n: int, allowed: Sequence[str]) -> LabelCheck:
    """Validate a labelling reply: a list of exactly ``n`` entries from ``allowed`` (after ``normalize_label``)."""
    items = extract_list(reply)
    if items is None:
        return LabelCheck(None, "no list found in the reply")
    if len(items) != n:
        return LabelCheck(None, f"expected exactly {n} labels, got {len(items)}")
    vocab = {normalize_label(a): a for a in allowed}
    labels = tuple(vocab.get(normalize_label(x)) if isinstance(x, (str, int, float)) else None for x in items)
    unknown = [f"#{i + 1} {items[i]!r}" for i, lab in enumerate(labels) if lab is None]
    if unknown:
        allowed_txt = ", ".join(repr(a) for a in allowed)
        return LabelCheck(labels, f"unknown label(s) {', '.join(unknown[:5])}; allowed: {allowed_txt}")
    return LabelCheck(labels, None)


_INT = re.compile(r"[+-]?\d+")


def _as_grade(value: Any) -> int | None:
    """An integer grade from ``2``, ``2.0`` or ``"2"``; ``None`` for anything else (``True``, ``2.5``, ``"two"``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT.fullmatch(value.strip().strip(".")):
        return int(value.strip().strip("."))
    return None


@dataclass(frozen=True)
class GradeCheck(_Checked):
    """Outcome of checking one grading reply: ``grades`` (``None`` per unusable item) and ``problem``."""

    grades: tuple[int | None, ...] | None
    problem: str | None


def check_grades(reply: str, n: int, allowed: Sequence[int] = (0, 1, 2, 3)) -> GradeCheck:
    """Validate a grading reply: a list of exactly ``n`` integers from ``allowed`` (``"2"`` and ``2.0`` count as 2).

    A wrong length or no list gives ``grades=None``; a right-length list with some unusable entries keeps the
    usable ones and ``None`` for the others.  Either way ``problem`` says what to fix (sent back in a re-ask).
    """
    items = extract_list(reply)
    if items is None:
        return GradeCheck(None, "no list found in the reply")
    if len(items) != n:
        return GradeCheck(None, f"expected exactly {n} grades, got {len(items)}")
    ok = {int(a) for a in allowed}
    grades = tuple(g if g in ok else None for g in (_as_grade(x) for x in items))
    bad = [f"#{i + 1} {items[i]!r}" for i, g in enumerate(grades) if g is None]
    if bad:
        return GradeCheck(grades, f"unusable grade(s) {', '.join(bad[:5])}; each must be one of the integers "
                                  f"{', '.join(str(a) for a in sorted(ok))}")
    return GradeCheck(grades, None)


def check_nuggets(reply: str, max_nuggets: int) -> tuple[list[str] | None, str | None]:
    """Validate a creation reply: a non-empty list of at most ``max_nuggets`` non-empty strings."""
    items = extract_list(reply)
    if items is None:
        return None, "no list found in the reply"
    if not all(isinstance(x, str) for x in items):
        return None, "every nugget must be a string"
    cleaned = [" ".join(x.split()) for x in items if x.strip()]
    if not cleaned:
        return None, "the list of nuggets is empty"
    if len(cleaned) > max_nuggets:
        return None, f"at most {max_nuggets} nuggets allowed, got {len(cleaned)}"
    return cleaned, None
