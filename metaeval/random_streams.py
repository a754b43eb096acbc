"""One named random stream per purpose: the package's only way to turn a settings seed into random numbers.

A stream is ``numpy.random.default_rng(SeedSequence([seed, code(purpose), *keys]))`` where ``code`` is the
CRC-32 of the purpose's name.  Two streams with different purposes (or sub-keys) are statistically independent
(``SeedSequence`` hashes its whole entropy list), and a stream depends on nothing but its seed, its purpose and
its keys, so:

* changing ``analysis.seed`` moves every analysis interval and nothing else; ``calibration.seed`` moves only
  calibration; simulation and planning have their own seeds;
* adding a new consumer (a new purpose or key) never shifts the draws of an existing one.

Purposes are dotted names whose first part is one of :data:`PURPOSES` (``"analysis.tau_levels"``,
``"calibration.crossfit"``, ...); an unknown first part is a programming error and raises ``ValueError``.

Reference: O'Neill (2015), PCG; NumPy's ``SeedSequence`` (NEP 19) for independent parallel streams.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["PURPOSES", "stream", "stream_entropy"]

#: The settings groups that own a seed; every purpose name starts with one of these.
PURPOSES: tuple[str, ...] = ("analysis", "calibration", "simulation", "planning", "sweep")


def _code(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


def stream_entropy(seed: int, purpose: str, *keys: int | str) -> list[int]:
    """The ``SeedSequence`` entropy of a stream: ``[seed, crc32(purpose), *keys]`` (string keys CRC-32 coded).

    ``seed`` must be a non-negative int (numpy's own rule for entropy); ``purpose``'s first dotted part must be
    one of :data:`PURPOSES`.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    head = purpose.split(".", 1)[0]
    if head not in PURPOSES:
        raise ValueError(f"unknown random-stream purpose {purpose!r}: it must start with one of {', '.join(PURPOSES)}")
    out = [int(seed), _code(purpose)]
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
