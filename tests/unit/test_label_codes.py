"""metaeval.types label codes and orders: one place, one direction (lowest first), FAILED = -1."""

import numpy as np

from metaeval.types import (FAILED_CODE, IMPORTANCE_ORDER, SUPPORT_CODE, SUPPORT_LEVELS, SUPPORT_ORDER, Support,
                            importance_codes, label_codes, support_codes, support_labels)


def test_orders_run_lowest_first():
    assert SUPPORT_ORDER == ("not_support", "partial_support", "support")
    assert IMPORTANCE_ORDER == ("okay", "vital")
    assert SUPPORT_LEVELS[:3] == SUPPORT_ORDER and SUPPORT_CODE == {"not_support": 0, "partial_support": 1, "support": 2}


def test_support_codes_and_inverse():
    labels = np.array(["support", "FAILED", "not_support", "partial_support", "garbage", None], dtype=object)
    codes = support_codes(labels)
    assert codes.dtype == np.int8 and codes.tolist() == [2, FAILED_CODE, 0, 1, -1, -1]
    assert support_labels(codes).tolist() == ["support", "FAILED", "not_support", "partial_support", "FAILED", "FAILED"]
    assert support_codes(np.array([Support.SUPPORT, Support.FAILED], dtype=object)).tolist() == [2, -1]  # enum members
    assert [Support(x).rank for x in SUPPORT_ORDER] == [0, 1, 2] and Support.FAILED.rank == -1
    grid = np.array([["support", "okay"], ["partial_support", "not_support"]], dtype=object)
    assert support_codes(grid).tolist() == [[2, -1], [1, 0]]  # shape kept


def test_importance_codes_same_direction():
    assert importance_codes(["vital", "okay", "FAILED"]).tolist() == [1, 0, -1]
    assert label_codes(["b", "a", "c"], ("a", "b")).tolist() == [1, 0, -1]


def test_simulation_names_are_the_same_functions():
    from metaeval import simulation

    assert simulation.labels_to_codes is support_codes and simulation.codes_to_labels is support_labels
