"""``first_uniform(entropy)`` = ``numpy.random.default_rng(entropy).random()`` (=
``metaeval.random_streams.judge_stream(*entropy).random()``), bit for bit, without numpy's per-call cost (~24 us:
a ``SeedSequence``, a ``PCG64`` and a ``Generator`` built for one number; this takes ~11 us).

The simulated judge draws every label from its own generator seeded by ``(seed, hash(label's ids)[, sample])`` so
that a label does not depend on batching or call order; with ~14 labels per assignment job, building numpy's
generator per label was a third of a zero-cost sweep's per-job time.  The stream is numpy's, so labels are
unchanged (``tests/unit/test_seeded_uniform.py`` compares with numpy on random entropy of every shape used).

The algorithm, as numpy implements it (``numpy/random/bit_generator.pyx``, ``numpy/random/src/pcg64``):

1. entropy -> 32-bit words: each non-negative int little-endian in 32-bit words (0 -> one word 0), concatenated;
2. ``SeedSequence`` (M. E. O'Neill's ``seed_seq`` improvement): a 4-word pool filled with ``hashmix`` of the
   words (``INIT_A``/``MULT_A``), every pool word mixed into every other (``mix``), remaining words mixed in;
   ``generate_state(4, uint64)``: 8 words ``hashmix``-ed from the cycled pool (``INIT_B``/``MULT_B``), paired
   little-endian into 4 uint64 ``v``;
3. ``PCG64`` (``pcg_setseq_128`` with the XSL-RR output): ``initstate = v0 << 64 | v1``, ``initseq = v2 << 64 |
   v3``; ``inc = 2 initseq + 1``, ``state = 0``, step, ``state += initstate``, step (step: ``state = state * M +
   inc mod 2^128``);
4. ``Generator.random()``: one step, ``x = rotr64(hi ^ lo, state >> 122)``, ``(x >> 11) * 2^-53``.
"""

from __future__ import annotations

from typing import Sequence

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_M128 = (1 << 128) - 1
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_POOL = 4
_PCG_MULT = 0x2360ED051FC65DA44385DF649FCCF645
_TWO_M53 = 1.0 / 9007199254740992.0


def _words(entropy: Sequence[int]) -> list[int]:
    out: list[int] = []
    for n in entropy:
        n = int(n)
        if n < 0:
            raise ValueError(f"entropy must be non-negative integers, got {n}")
        if n == 0:
            out.append(0)
        while n:
            out.append(n & _M32)
            n >>= 32
    return out


def _consts(init: int, mult: int, n: int) -> tuple[int, ...]:
    """The hash constants' sequence: ``init * mult^k mod 2^32`` (data-independent, so computed once)."""
    out, h = [], init
    for _ in range(n + 1):
        out.append(h)
        h = (h * mult) & _M32
    return tuple(out)


#: hashmix k uses (A[k], A[k + 1]): the value is xor-ed with the current constant, then multiplied by the next
_A = _consts(_INIT_A, _MULT_A, 64)
_B = _consts(_INIT_B, _MULT_B, 8)
#: (source, destination) of the pool's all-pairs mixing, in numpy's order
_PAIRS = tuple((s, d) for s in range(_POOL) for d in range(_POOL) if s != d)


def _pool(words: list[int]) -> list[int]:
    """SeedSequence's mixed pool of 4 words."""
    A = _A
    pool = []
    for i in range(_POOL):
        v = (((words[i] if i < len(words) else 0) ^ A[i]) * A[i + 1]) & _M32
        pool.append(v ^ (v >> 16))
    k = _POOL
    for src, dst in _PAIRS:
        v = ((pool[src] ^ A[k]) * A[k + 1]) & _M32
        k += 1
        r = (_MIX_L * pool[dst] - _MIX_R * (v ^ (v >> 16))) & _M32
        pool[dst] = r ^ (r >> 16)
    for w in words[_POOL:]:
        for dst in range(_POOL):
            v = ((w ^ A[k]) * A[k + 1]) & _M32
            k += 1
            r = (_MIX_L * pool[dst] - _MIX_R * (v ^ (v >> 16))) & _M32
            pool[dst] = r ^ (r >> 16)
    return pool


def first_uniform(entropy: Sequence[int]) -> float:
    """The first ``random()`` of ``numpy.random.default_rng(list(entropy))`` (non-negative ints)."""
    words = _words(entropy)
    if len(words) > 12:
        raise ValueError("at most 12 words of entropy")
    p0, p1, p2, p3 = _pool(words)
    B = _B
    s = []
    for i, p in enumerate((p0, p1, p2, p3, p0, p1, p2, p3)):
        v = ((p ^ B[i]) * B[i + 1]) & _M32
        s.append(v ^ (v >> 16))
    inc = (((s[4] | (s[5] << 32)) << 65) | ((s[6] | (s[7] << 32)) << 1) | 1) & _M128
    state = (inc + (((s[0] | (s[1] << 32)) << 64) | s[2] | (s[3] << 32))) & _M128  # state 0, a step, += initstate
    state = (state * _PCG_MULT + inc) & _M128
    state = (state * _PCG_MULT + inc) & _M128  # random(): one more step, then the output of the new state
    x = ((state >> 64) ^ state) & _M64
    rot = state >> 122
    x = ((x >> rot) | (x << (64 - rot))) & _M64
    return (x >> 11) * _TWO_M53
