"""Groups of runs that cannot be told apart: Piepho's (2004) compact letter display ("An algorithm for a
letter-based representation of all-pairwise comparisons", J. Comput. Graph. Stat. 13:456-466, insert-absorb) of the
simultaneous pairwise decisions of :func:`metaeval.calibration.ranksets.pairwise_intervals`.  Runs sharing a letter
are pairwise ``~``; two runs with no letter in common differ.  Letters are ordered from the best run down (``a``
holds the top run)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.calibration.ranksets import PairwiseIntervals

__all__ = ["compact_letters", "letter_columns"]


def letter_columns(pw: PairwiseIntervals) -> list[frozenset[int]]:
    """The letter groups of Piepho's (2004) insert-absorb (sets of run indices), ordered from the best run down."""
    return [frozenset(r for r in range(len(pw.runs)) if c >> r & 1) for c in _letter_masks(pw)]


def _letter_masks(pw: PairwiseIntervals) -> list[int]:
    """:func:`letter_columns` as bit masks (bit ``r`` = run ``r``), in the same order.

    Insert-absorb: for every pair ``a < b`` that differs (``decisions() != 0``), each group holding both is
    replaced, in place, by the group without ``a`` and the group without ``b``; then every empty group, and every
    group strictly inside another (or equal to an earlier one), is absorbed.  The groups before a step are an
    antichain of distinct sets (true of the first, ``{all runs}``, and kept by absorbing), so only a replacement
    can be absorbed, and only into a group that was not split (a replacement lies strictly inside the group it
    came from; ``c - {a}`` still holds ``b``, which no other replacement ``c' - {b}`` holds; ``c - {a} <= c' -
    {a}`` would put ``c`` inside ``c'``): the step tests those pairs only (the same groups as testing all)."""
    dec = pw.decisions()
    R = len(pw.runs)
    order = list(np.argsort(-pw.estimate, kind="stable"))
    cols: list[int] = [(1 << R) - 1]
    for a in range(R):
        for b in range(a + 1, R):
            if dec[a, b] == 0:
                continue
            both = (1 << a) | (1 << b)
            if not any(c & both == both for c in cols):
                continue
            kept = [c for c in cols if c & both != both]
            new: list[int] = []
            for c in cols:
                if c & both != both:
                    new.append(c)
                    continue
                for x in (c & ~(1 << a), c & ~(1 << b)):
                    if x and not any(x & ~o == 0 and x != o for o in kept):
                        new.append(x)
            cols = new
    pos = {r: k for k, r in enumerate(order)}

    def first(c: int) -> int:
        return min(pos[r] for r in range(R) if c >> r & 1)

    cols.sort(key=lambda c: (first(c), -c.bit_count()))
    return cols


def compact_letters(pw: PairwiseIntervals, cols: list[frozenset[int]] | None = None) -> list[str]:
    """Per run, the letters of the groups it belongs to (:func:`letter_columns`, or ``cols`` when the caller has
    them); runs sharing a letter are ``~``."""
    cols = letter_columns(pw) if cols is None else cols
    R = len(pw.runs)
    letters = [_letter(k) for k in range(len(cols))]
    return ["".join(letters[k] for k, c in enumerate(cols) if r in c) for r in range(R)]


def _letter(k: int) -> str:
    base = "abcdefghijklmnopqrstuvwxyz"
    return base[k] if k < 26 else base[k // 26 - 1] + base[k % 26]
