"""The letter groups (metaeval.calibration.letters.letter_columns): the fast insert-absorb gives the groups, in the
order, of Piepho's (2004) insert-absorb written out in full (every group against every group at each step)."""

from __future__ import annotations

import numpy as np

from metaeval.calibration.letters import compact_letters, letter_columns


class _Pw:
    """The part of PairwiseIntervals the letters read: runs, estimate, decisions()."""

    def __init__(self, dec: np.ndarray, estimate: np.ndarray):
        self.runs = [f"r{i}" for i in range(len(estimate))]
        self.estimate = estimate
        self._dec = dec

    def decisions(self) -> np.ndarray:
        return self._dec


def _reference(pw) -> list[frozenset[int]]:
    dec = pw.decisions()
    R = len(pw.runs)
    order = list(np.argsort(-pw.estimate, kind="stable"))
    cols: list[frozenset[int]] = [frozenset(range(R))]
    for a in range(R):
        for b in range(a + 1, R):
            if dec[a, b] == 0:
                continue
            new: list[frozenset[int]] = []
            for c in cols:
                if a in c and b in c:
                    new += [c - {a}, c - {b}]
                else:
                    new.append(c)
            cols = [c for k, c in enumerate(new)
                    if c and not any((c < o) or (c == o and q < k) for q, o in enumerate(new))]
    pos = {r: k for k, r in enumerate(order)}
    cols.sort(key=lambda c: (min(pos[r] for r in c), -len(c)))
    return cols


def _random_pw(rng, R: int) -> _Pw:
    """Decisions as a max-t table makes them: runs far apart in estimate differ, near ones may not."""
    est = np.sort(rng.uniform(0, 1, R))[::-1] if rng.random() < 0.5 else rng.uniform(0, 1, R)
    gap = rng.uniform(0.0, 0.6)
    noise = rng.normal(0, 0.1, (R, R))
    diff = est[:, None] - est[None, :] + (noise - noise.T) / 2
    dec = np.where(diff > gap, 1, np.where(diff < -gap, -1, 0))
    if rng.random() < 0.3:  # arbitrary patterns too
        up = rng.choice([-1, 0, 1], size=(R, R), p=[0.3, 0.4, 0.3])
        dec = np.triu(up, 1) - np.triu(up, 1).T
    np.fill_diagonal(dec, 0)
    return _Pw(dec, est)


def test_fast_letters_equal_the_full_insert_absorb_on_random_tables():
    rng = np.random.default_rng(7)
    for _ in range(400):
        pw = _random_pw(rng, int(rng.integers(1, 16)))
        assert letter_columns(pw) == _reference(pw)


def test_fast_letters_at_a_track_size_and_the_letters_themselves():
    rng = np.random.default_rng(8)
    for _ in range(3):
        pw = _random_pw(rng, 45)
        ref = _reference(pw)
        assert letter_columns(pw) == ref
        letters = compact_letters(pw)
        assert len(letters) == 45 and all(letters)
