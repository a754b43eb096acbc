"""One named random stream per purpose: the package's only way to turn a seed into random numbers.

Every random draw of the package goes through this module (``tests/unit/test_random_streams.py`` fails on a
``default_rng(`` anywhere else).  Two kinds of stream:

* :func:`stream` - a **purpose** stream, for every draw of a study or a command (resamples, splits, pilots,
  replays, probe samples): keyed by the settings seed, the purpose's name and optional sub-keys;
* :func:`judge_stream` - a **simulated judge's** own draws: keyed by the judge's seed and the item alone, with no
  purpose (a simulated judge stands for a judge whose labels are data: the same judge gives the same labels in
  every study and command that uses it).

A purpose stream is ``numpy.random.default_rng(SeedSequence([seed, code(purpose), *keys]))`` where ``code`` is the
CRC-32 of the purpose's name.  Two streams with different purposes (or sub-keys) are statistically independent
(``SeedSequence`` hashes its whole entropy list), and a stream depends on nothing but its seed, its purpose and
its keys, so:

* changing ``analysis.seed`` moves every analysis interval and nothing else; ``calibration.seed`` moves only
  calibration; simulation, planning and the injection probe have their own seeds;
* adding a new consumer (a new purpose or key) never shifts the draws of an existing one.

Purposes are dotted names whose first part is one of :data:`PURPOSES`, the settings group whose seed draws them
(an ``analysis.*`` stream takes ``analysis.seed``; ``tests/unit/test_random_streams.py`` traces it); an unknown
first part is a programming error and raises ``ValueError``.  The purposes in use: ``analysis.topic_bootstrap``
(tau, bias, raw leaderboard and clustered agreement intervals), ``analysis.answer_bootstrap`` (within-topic
strictness intervals), ``analysis.sign_flip``, ``analysis.consistency_folds`` / ``analysis.consistency_bootstrap``;
``calibration.splits``, ``calibration.label_draws``, ``calibration.bootstrap_t``, ``calibration.rank_sets``;
``simulation.calibration_harness`` (and ``_mc``); ``planning.plan``, ``planning.need``, ``planning.replay``,
``planning.precision``, ``planning.pilot``; ``probe.answers``.

Reference: O'Neill (2015), PCG; NumPy's ``SeedSequence`` (NEP 19) for independent parallel streams.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

__all__ = ["PURPOSES", "judge_stream", "stream", "stream_entropy"]

#: The settings groups that own a seed; every purpose name starts with one of these.
PURPOSES: tuple[str, ...] = ("analysis", "calibration", "simulation", "planning", "sweep", "probe")


def _code(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def stream_entropy(seed: int, purpose: str, *keys: int | str) -> list[int]:
    """The ``SeedSequence`` entropy of a stream: ``[seed, crc32(purpose), *keys]`` (string keys CRC-32 coded).

    ``seed`` must be a non-negative int (numpy's own rule for entropy); ``purpose``'s first dotted part must be
    one of :data:`PURPOSES`.
    """
    seed = _check_seed(seed)
    head = purpose.split(".", 1)[0]
    if head not in PURPOSES:
        raise ValueError(f"unknown random-stream purpose {purpose!r}: it must start with one of {', '.join(PURPOSES)}")
    out = [seed, _code(purpose)]
    for k in keys:
        if isinstance(k, str):
            out.append(_code(k))
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 0:
            out.append(int(k))
        else:
            raise ValueError(f"stream key must be a string or a non-negative integer, got {k!r}")
    return out


def stream(seed: int, purpose: str, *keys: int | str) -> np.random.Generator:
    """The generator for ``purpose`` under ``seed`` (and optional sub-``keys``, e.g. a fold or a repeat index).

    >>> a = stream(0, "analysis.tau_levels").random(); b = stream(0, "analysis.tau_levels").random()
    >>> a == b
    True
    """
    return np.random.default_rng(np.random.SeedSequence(stream_entropy(seed, purpose, *keys)))


def judge_stream(seed: int, *keys: int) -> np.random.Generator:
    """The draws of a simulated judge with seed ``seed``: ``default_rng(SeedSequence([seed, *keys]))``.

    ``keys`` name the item when a judge draws per item (``metaeval.judges.replay``: the 64-bit hash of the
    (topic, run, nugget) and the sample index); none when it relabels a whole label set at once
    (``metaeval.simulation.simulate_judge``, ``metaeval.planning.consistency.simulate_sampling_judge``: then this is
    ``default_rng(seed)``, bit for bit).  ``metaeval.seeded_uniform.first_uniform(entropy)`` computes the first
    uniform of ``judge_stream(*entropy)`` without building the generator.
    """
    out = [_check_seed(seed)]
    for k in keys:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"judge stream key must be a non-negative integer, got {k!r}")
        out.append(int(k))
    return np.random.default_rng(np.random.SeedSequence(out))
