"""``SimulatedJudge.assign`` draws one uniform per label against precomputed thresholds (issue 15: the zero-cost
judge's own cost); its labels equal the former per-label ``simulate_support`` draw, for every sample index."""

from __future__ import annotations

import asyncio
import hashlib

import numpy as np
import pytest

from metaeval.data.dataset import load_dataset
from metaeval.judges.replay import SimulatedJudge, _norm
from metaeval.simulation import simulate_support
from metaeval.types import Answer, Topic


def _former(judge: SimulatedJudge, qid: str, run_id: str, nuggets: list[str]) -> list[str]:
    """The implementation this replaced (one ``simulate_support`` call per label)."""
    ref, _ = judge.reference_support(qid, run_id, nuggets)
    out = []
    for n, lab in zip(nuggets, ref):
        item = int.from_bytes(hashlib.sha256("\x1f".join((qid, run_id, _norm(n))).encode()).digest()[:8], "little")
        rng = np.random.default_rng([judge.seed, item] + ([judge.sample_index] if judge.sample_index else []))
        out.append(str(simulate_support(np.array([lab], dtype=object), judge.confusion, rng)[0]))
    return out


@pytest.mark.parametrize("confusion,seed,sample", [(None, 0, 0), (None, 3, 2), ([[5, 3, 2], [1, 1, 1], [0, 2, 9]], 1, 0),
                                                   ("paper-fig6-manual", 0, 1),
                                                   ([[1, 0, 0], [0, 1, 0], [0, 0, 1]], 0, 0),  # identity: no draw
                                                   ([[1, 0, 0], [2, 5, 3], [0, 0, 1]], 5, 1)])  # one-hot rows only
def test_labels_equal_the_former_draw(confusion, seed, sample):
    ds = load_dataset("demo")
    judge = SimulatedJudge(ds.labels, confusion=confusion, seed=seed, sample_index=sample)
    lab = ds.labels.labels
    n = 0
    for (qid, run), grp in lab.groupby(["qid", "run_id"], sort=True, observed=True):
        nuggets = list(grp.sort_values("nugget_id")["nugget"]) + ["a nugget the reference does not hold"]
        res = asyncio.run(judge.assign(Topic(str(qid), ""), Answer(str(run), str(qid), ""), nuggets))
        assert [x.value for x in res.labels] == _former(judge, str(qid), str(run), nuggets)
        n += len(nuggets)
    assert n > 300


def test_propensity_draws_equal_the_former_draw():
    """``alpha`` set: the per-label propensity draw (its uniform now from ``metaeval.seeded_uniform``) equals the
    former all-numpy draw, sample by sample."""
    from metaeval.simulation import codes_to_labels, labels_to_codes

    ds = load_dataset("demo")
    lab = ds.labels.labels
    grp = next(iter(lab.groupby(["qid", "run_id"], sort=True, observed=True)))[1]
    qid, run = str(grp["qid"].iloc[0]), str(grp["run_id"].iloc[0])
    nuggets = list(grp.sort_values("nugget_id")["nugget"])
    for sample in (0, 1, 4):
        judge = SimulatedJudge(ds.labels, confusion="paper-fig6-edits", seed=2, sample_index=sample, alpha=1.5)
        res = asyncio.run(judge.assign(Topic(qid, ""), Answer(run, qid, ""), nuggets))
        ref, _ = judge.reference_support(qid, run, nuggets)
        for n, r, got in zip(nuggets, ref, res.labels):
            item = int.from_bytes(hashlib.sha256("\x1f".join((qid, run, _norm(n))).encode()).digest()[:8], "little")
            h = int(labels_to_codes(np.array([r], dtype=object))[0])
            p = np.random.default_rng([2, item]).gamma(1.5 * np.maximum(judge.confusion[h], 1e-9))
            u = np.random.default_rng([2, item, sample, 1]).random()
            code = int(min((u >= np.cumsum(p / p.sum())[:2]).sum(), 2))
            assert got.value == str(codes_to_labels(np.array([code], dtype=np.int8))[0])
