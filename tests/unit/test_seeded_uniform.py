"""``first_uniform`` is numpy's ``default_rng(entropy).random()`` bit for bit (the simulated judge's labels depend on
it), on the entropy shapes the judge uses ((seed, item), (seed, item, sample), (seed, item, sample, 1)) and on edge
values (0, 32-bit boundaries, 64-bit items, more words than the 4-word pool).  The judge-level check (labels equal the per-label numpy draw) is in
``test_simulated_fastpath.py``."""

from __future__ import annotations

import random

import numpy as np
import pytest

from metaeval.seeded_uniform import first_uniform


def _cases(n: int = 3000) -> list[list[int]]:
    rnd = random.Random(20261130)
    cases = [[0], [0, 0], [0, 1], [1, 2**64 - 1], [0, 2**32 - 1], [0, 2**32], [2**32, 2**64], [5, 123, 7, 1],
             [2**63, 2**64 - 1, 2**40, 3, 9]]
    for _ in range(n):
        seed = rnd.choice([0, 1, 7, 2**31, rnd.getrandbits(32), rnd.getrandbits(40)])
        case = [seed, rnd.getrandbits(64)]
        if rnd.random() < 0.5:
            case.append(rnd.randint(1, 64))
            if rnd.random() < 0.5:
                case.append(1)
        cases.append(case)
    return cases


def test_equals_numpy_default_rng_bit_for_bit():
    diff = [(c, first_uniform(c), np.random.default_rng(c).random()) for c in _cases()
            if first_uniform(c) != np.random.default_rng(c).random()]
    assert not diff, diff[:3]


def test_rejects_negative_entropy():
    with pytest.raises(ValueError):
        first_uniform([0, -1])
