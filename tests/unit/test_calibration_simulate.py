"""Synthetic judges drawn through a confusion matrix."""

import numpy as np
import pandas as pd
import pytest

from metaeval.simulation import resolve_confusion, simulate_codes, simulate_judge, simulate_support
from metaeval.errors import ConfigError
from metaeval.paper import fig6_confusion


def test_simulate_support_matches_confusion_rows():
    conf = fig6_confusion("paper-fig6-edits", normalize=True)
    n = 60000
    labels = np.array(["not_support"] * n + ["partial_support"] * n + ["support"] * n + ["FAILED"] * 7, dtype=object)
    out = simulate_support(labels, conf, np.random.default_rng(1))
    assert (out[-7:] == "FAILED").all()
    tab = pd.crosstab(labels[:-7], out[:-7], normalize="index").loc[
        ["not_support", "partial_support", "support"], ["not_support", "partial_support", "support"]]
    # binomial sd of a proportion with n=60000 is < 0.0021; allow 4 sd
    assert np.abs(tab.to_numpy() - conf).max() < 0.0085


def test_counts_are_normalised_and_identity_is_identity():
    labels = np.array(["support", "not_support", "partial_support", "FAILED"], dtype=object)
    out = simulate_support(labels, np.eye(3) * 5, np.random.default_rng(0))
    assert out.tolist() == labels.tolist()


def test_reps_shape_and_seed_reproducible():
    codes = np.array([0, 1, 2, -1, 2])
    a = simulate_codes(codes, fig6_confusion(normalize=False), np.random.default_rng(3), reps=4)
    b = simulate_codes(codes, fig6_confusion(normalize=False), np.random.default_rng(3), reps=4)
    assert a.shape == (4, 5) and (a == b).all() and (a[:, 3] == -1).all()


def test_bad_confusion_rejected(tmp_path):
    with pytest.raises(ConfigError):
        resolve_confusion(np.ones((2, 3)))
    with pytest.raises(ConfigError):
        resolve_confusion([[1, 0, 0], [0, 0, 0], [0, 0, 1]])
    with pytest.raises(ConfigError):
        resolve_confusion("no-such-matrix")
    f = tmp_path / "c.json"
    f.write_text('{"counts": [[2, 0, 0], [0, 1, 1], [0, 0, 4]]}')
    assert np.allclose(resolve_confusion(str(f))[1], [0, 0.5, 0.5])


def test_simulate_judge_keeps_rows(nist_labels):
    sim = simulate_judge(nist_labels, seed=5)
    assert len(sim.labels) == len(nist_labels.labels)
    assert (sim.labels[["qid", "run_id", "nugget_id"]].to_numpy() == nist_labels.labels[["qid", "run_id", "nugget_id"]].to_numpy()).all()
    assert sim.name == "simulated"
    same = (sim.labels["support"].astype(str) == nist_labels.labels["support"].astype(str)).mean()
    assert 0.6 < same < 0.85  # Figure 6 diagonal weights give ~0.73 agreement
    again = simulate_judge(nist_labels, seed=5)
    assert (again.labels["support"] == sim.labels["support"]).all()
