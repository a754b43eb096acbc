"""Tests written for the survivors of ``scripts/mutation_check.py`` (docs/development.md, "Mutation check"): each
kills one mutant that the module's own tests let through.  Values are checked against scipy or by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau


# ------------------------------------------------------------------ analysis/kendall.py
def test_tau_b_of_two_items_is_plus_or_minus_one():
    """One pair: the tau-b denominator is exactly 1 (kills ``den > 0`` -> ``den > 1`` in ``_div``)."""
    from metaeval.analysis.kendall import tau_a, tau_b, tau_b_batch

    assert tau_b([0.1, 0.2], [0.3, 0.9]) == 1.0 == kendalltau([0.1, 0.2], [0.3, 0.9]).statistic
    assert tau_b([0.1, 0.2], [0.9, 0.3]) == -1.0 and tau_a([0.1, 0.2], [0.9, 0.3]) == -1.0
    assert tau_b_batch(np.array([[0.1, 0.2], [0.5, 0.4]]), np.array([[1.0, 2.0], [1.0, 2.0]])).tolist() == [1.0, -1.0]
    assert np.isnan(tau_b([0.1, 0.1], [0.3, 0.9]))  # a tie on one side: undefined


# ------------------------------------------------------------------ analysis/levels.py
def _long_tables():
    """6 topics x 7 runs of a reference and a noisy candidate (long tables: run_id, qid, metric, value)."""
    import pandas as pd

    rng = np.random.default_rng(35)
    x = rng.random((6, 7)).round(2)
    y = (x + rng.normal(0, 0.15, x.shape)).round(2)
    rows = lambda m: [(f"r{r}", f"q{t}", "v_strict", float(m[t, r])) for t in range(6) for r in range(7)]  # noqa: E731
    cols = ["run_id", "qid", "metric", "value"]
    return pd.DataFrame(rows(x), columns=cols), pd.DataFrame(rows(y), columns=cols)


def test_tau_levels_defaults_are_seed_0_and_95_percent():
    from metaeval.analysis.levels import tau_levels

    ref, cand = _long_tables()
    got = tau_levels(ref, cand, n_boot=200)
    want = tau_levels(ref, cand, n_boot=200, seed=0, alpha=0.05)
    assert (got.seed, got.alpha) == (0, 0.05) and got.ci == want.ci
    assert got.ci != tau_levels(ref, cand, n_boot=200, seed=1).ci  # the seed does move the intervals
    assert tau_levels(ref, cand).n_boot == 0 and tau_levels(ref, cand).ci == {}


def test_levels_from_aligned_bootstraps_for_any_positive_n_boot_and_not_by_default():
    from metaeval.analysis.cells import align
    from metaeval.analysis.levels import levels_from_aligned

    ref, cand = _long_tables()
    al = align(ref, [cand], "v_strict")
    none = levels_from_aligned(al)
    assert none.n_boot == 0 and none.ci == {} and none.seed is None
    one = levels_from_aligned(al, n_boot=1)
    assert one.n_boot == 1 and set(one.ci) == {"run", "topic_avg", "pooled"}
    assert levels_from_aligned(al, n_boot=50).ci == levels_from_aligned(al, n_boot=50, seed=0).ci


def test_tau_levels_as_dict_keeps_both_limits_of_every_interval():
    import json

    from metaeval.analysis.levels import tau_levels

    res = tau_levels(*_long_tables(), n_boot=100)
    d = res.as_dict()
    assert res.top_heavy_ci and d["top_heavy_ci"] == {k: [float(lo), float(hi)] for k, (lo, hi) in res.top_heavy_ci.items()}
    assert d["ci"] == {k: [float(lo), float(hi)] for k, (lo, hi) in res.ci.items()}
    assert all(lo <= hi for lo, hi in d["top_heavy_ci"].values())
    json.dumps(d)


# ------------------------------------------------------------------ report/verdict.py
def test_a_yaml_error_without_a_position_names_no_line(tmp_path):
    """An unreadable character is a YAML reader error (no ``problem_mark``): line 0, "the whole file"."""
    from metaeval.errors import FormatError
    from metaeval.report.verdict import load_thresholds

    p = tmp_path / "t.yaml"
    p.write_bytes(b"metric: v_strict\nmin_run_tau_low: \x07\n")
    with pytest.raises(FormatError) as e:
        load_thresholds(p)
    assert e.value.line == 0 and str(p) in str(e.value) and "not valid YAML" in str(e.value)
    p.write_text("metric: [v_strict\n", encoding="utf-8")  # a parser error has a position: its 1-based line
    with pytest.raises(FormatError) as e:
        load_thresholds(p)
    assert e.value.line == 2
