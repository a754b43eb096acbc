"""metaeval.analysis.ranks: competition ranks (1 = best) against scipy's rankdata, NaN handling."""

import numpy as np
import pytest
from scipy.stats import rankdata

from metaeval.analysis.ranks import rank_array, ranks


def test_rank_array_equals_scipy_min_method_on_random_ties():
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.integers(0, 5, size=rng.integers(1, 12)).astype(float)
        assert np.array_equal(rank_array(v), rankdata(-v, method="min"))


def test_nan_kept_or_last():
    v = np.array([0.3, np.nan, 0.5, 0.3])
    assert np.array_equal(rank_array(v), [2, np.nan, 1, 2], equal_nan=True)
    assert np.array_equal(rank_array(v, nan="last"), [2, 4, 1, 2])
    with pytest.raises(ValueError):
        rank_array(v, nan="first")


def test_ranks_mapping_hand_computed():
    assert ranks({"a": 0.2, "b": 0.9, "c": 0.2, "d": float("nan"), "e": None}) == {"a": 2, "b": 1, "c": 2, "d": 4, "e": 4}
    assert ranks({}) == {}
