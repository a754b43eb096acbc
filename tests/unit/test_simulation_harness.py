"""The simulation harness on the NIST labels with a few replications (the 200-rep study is a CLI run)."""

import numpy as np
import pytest

from metaeval.calibration.harness import run_study
from metaeval.errors import ConfigError


@pytest.fixture(scope="module")
def study(nist_labels):
    return run_study(nist_labels, reps=12, seed=5, methods=["ppi", "matrix_unconstrained", "posterior"], metrics=["v_strict"])


def test_raw_judge_is_biased_and_ppi_corrects(study):
    raw = study["raw"]["v_strict"]
    assert raw["bias"] < -0.08 and raw["mean_abs_bias"] > 0.08
    ppi = study["methods"]["ppi"]["v_strict"]
    assert ppi["bias_reduction"] > 0.6
    assert 0.85 <= ppi["coverage"] <= 1.0
    assert ppi["n"] == raw["n"] > 0
    for m in ("ppi", "matrix_unconstrained", "posterior"):
        f = study["methods"][m]["v_strict"]
        assert {"bias", "rmse", "coverage", "tau_after"} <= set(f)
        assert f["rmse"] >= abs(f["bias"])


def test_identity_confusion_gives_unbiased_raw_judge(nist_labels):
    res = run_study(nist_labels, confusion=np.eye(3), reps=2, seed=0, methods=["ppi"], metrics=["a_strict"])
    raw = res["raw"]["a_strict"]
    assert raw["bias"] == 0 and raw["rmse"] == 0
    assert res["methods"]["ppi"]["a_strict"]["rmse"] == 0
    assert res["raw"]["a_strict"]["tau"]["pooled"] == pytest.approx(1.0)


def test_reproducible_and_validated(nist_labels):
    a = run_study(nist_labels, reps=2, seed=3, methods=["matrix"], metrics=["v_strict"])
    b = run_study(nist_labels, reps=2, seed=3, methods=["matrix"], metrics=["v_strict"])
    assert a["methods"] == b["methods"]
    with pytest.raises(ConfigError):
        run_study(nist_labels, reps=1, design="nope", methods=["ppi"])
    with pytest.raises(ConfigError):
        run_study(nist_labels, reps=1, holdout=0.01, methods=["ppi"])
