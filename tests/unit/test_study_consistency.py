"""``metaeval.study.consistency.cell_consistency``: flip rate by hand, FAILED draws, no reference, all FAILED."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.data.dataset import load_dataset
from metaeval.planning.consistency import simulate_sampling_judge
from metaeval.study.consistency import cell_consistency


@pytest.fixture(scope="module")
def demo():
    return load_dataset("demo").labels


def _flip_by_hand(draws):
    k = len(draws)
    labs = np.stack([d.labels["support"].astype(str).to_numpy() for d in draws])
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    return float(np.mean([(labs[a] != labs[b]).mean() for a, b in pairs]))


def test_flip_rate_and_parts(demo):
    draws = simulate_sampling_judge(demo, 3, alpha=1.0, seed=4)
    res = cell_consistency(draws, demo, "v_strict", bootstrap=50, folds=4, repeats=3, seed=0)
    assert res["flip"]["flip_rate"] == pytest.approx(_flip_by_hand(draws), abs=1e-12)
    assert res["labels_with_failed_draw"] == 0 and "left out" not in res["line"]
    assert len(res["tau"]["vs_reference"]["per_draw"]) == 3 and res["topic_bootstrap_tau_sd"] > 0
    assert set(res["calibration"]["variants"]) == {"hard (draw 0)", "majority", "soft (vote share)"}


def test_failed_draws_are_left_out_not_counted_as_flips(demo):
    draws = simulate_sampling_judge(demo, 2, alpha=1.0, seed=5)
    labs = draws[1].labels["support"].astype(object).to_numpy().copy()
    labs[:10] = "FAILED"
    broken = [draws[0], draws[1].with_labels(labs, name="s1")]
    res = cell_consistency(broken, demo, "v_strict", bootstrap=0, folds=4, repeats=2, seed=0)
    keep = slice(10, None)
    a = draws[0].labels["support"].astype(str).to_numpy()[keep]
    b = draws[1].labels["support"].astype(str).to_numpy()[keep]
    assert res["flip"]["flip_rate"] == pytest.approx(float((a != b).mean()), abs=1e-12)
    assert res["labels_with_failed_draw"] == 10 and "10 label(s) with a FAILED draw left out" in res["line"]


def test_all_failed_reports_no_figure(demo):
    failed = demo.with_labels(np.array(["FAILED"] * len(demo.labels), dtype=object), name="f")
    res = cell_consistency([failed, failed], demo, "v_strict", bootstrap=0, seed=0)
    assert "flip" not in res and "tau" not in res and "no self-consistency figure" in res["line"]


def test_without_reference_only_between_draws(demo):
    draws = simulate_sampling_judge(demo, 3, alpha=1.0, seed=6)
    res = cell_consistency(draws, None, "v_strict", seed=0)
    assert res["reference"] is None and "vs_reference" not in res["tau"] and "between_draws" in res["tau"]
    assert "calibration" not in res and "no reference" in res["line"]
