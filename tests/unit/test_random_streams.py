"""metaeval.random_streams: one named stream per purpose, independent of the others and of new consumers."""

import numpy as np
import pytest

from metaeval.random_streams import stream, stream_entropy


def test_same_seed_purpose_keys_same_draws():
    assert np.array_equal(stream(7, "analysis.tau").random(5), stream(7, "analysis.tau").random(5))


def test_purpose_and_seed_and_key_each_move_the_stream():
    base = stream(7, "analysis.tau").random(5)
    assert not np.array_equal(base, stream(8, "analysis.tau").random(5))
    assert not np.array_equal(base, stream(7, "calibration.tau").random(5))
    assert not np.array_equal(base, stream(7, "analysis.tau", 1).random(5))


def test_entropy_is_documented_formula():
    import zlib
    assert stream_entropy(3, "planning.pilot", 2, "x") == [3, zlib.crc32(b"planning.pilot"), 2, zlib.crc32(b"x")]
    ref = np.random.default_rng(np.random.SeedSequence([3, zlib.crc32(b"planning.pilot")])).random(3)
    assert np.array_equal(stream(3, "planning.pilot").random(3), ref)


@pytest.mark.parametrize("seed,purpose", [(-1, "analysis"), (1.5, "analysis"), (True, "analysis"), (0, "nope.x")])
def test_bad_seed_or_purpose_raises(seed, purpose):
    with pytest.raises(ValueError):
        stream(seed, purpose)
