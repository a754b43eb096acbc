"""The procedure's run-level taus, one batch per metric (procedure._taus): the same value, bit for bit, as tau-b on
the runs present for each candidate alone, with NaN runs, ties and every size up to a track's."""

from __future__ import annotations

import numpy as np

from metaeval.analysis.kendall import tau_b_batch
from metaeval.study.calibration_workflow.procedure import _taus


def test_batched_taus_equal_one_candidate_at_a_time():
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(300):
        R, k = int(rng.integers(3, 95)), int(rng.integers(1, 10))
        truth = np.round(rng.random(R), int(rng.integers(1, 4)))  # rounded: ties
        if rng.random() < 0.3:
            truth[rng.random(R) < 0.1] = np.nan
        ests = {f"c{i}": np.round(rng.random(R), int(rng.integers(1, 4))) for i in range(k)}
        for e in ests.values():
            if rng.random() < 0.3:
                e[rng.random(R) < 0.2] = np.nan
        got = _taus(ests, truth, tau_b_batch)
        for n, e in ests.items():
            ok = np.isfinite(e) & np.isfinite(truth)
            if ok.sum() < 3:
                continue
            want = float(tau_b_batch(e[ok], truth[ok]))
            assert got[n] == want or (np.isnan(want) and np.isnan(got[n])), (R, n)
            checked += 1
    assert checked > 1000
