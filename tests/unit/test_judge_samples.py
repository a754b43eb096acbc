"""k samples of one judge call (``sweep.samples``; issue 16): what each judge kind does with a sample index.

The simulated judge's flip rate is checked against its closed form on the NIST labels: with independent draws
(``alpha`` null) two draws of a label with human class h disagree with probability ``1 - sum_c C[h, c]^2``; with
per-label propensities ``p ~ Dirichlet(alpha C[h])`` the chance is ``alpha (1 - sum_c C[h, c]^2) / (alpha + 1)``
(E[sum_c p_c^2] = (alpha sum_c C_c^2 + 1) / (alpha + 1)).
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from metaeval.errors import ConfigError
from metaeval.judges.lexical import LexicalJudge
from metaeval.judges.replay import SimulatedJudge
from metaeval.planning.consistency import flip_stats
from metaeval.simulation import labels_to_codes, resolve_confusion
from metaeval.types import Answer, Nugget, Topic


def _draws(ref, judge, k):
    """k draws of every (answer, nugget) label of ``ref`` through ``judge.for_sample``: codes (k, n)."""
    g = ref.labels.groupby(["qid", "run_id"], sort=False)
    rows = []
    for s in range(k):
        j = judge.for_sample(s)
        labs = []
        for (qid, run), grp in g:
            answer = Answer(run_id=run, qid=qid, text="")
            for i in range(0, len(grp), 10):
                nuggets = [Nugget(text=t) for t in grp["nugget"].iloc[i:i + 10]]
                res = asyncio.run(j.assign(Topic(qid, ""), answer, nuggets))
                labs.extend(lab.value for lab in res.labels)
        rows.append(labels_to_codes(np.array(labs, dtype=object)))
    return np.stack(rows)


@pytest.fixture(scope="module")
def nist_subset(nist_labels):
    qids = nist_labels.qids[:6]
    return nist_labels.subset(qids=qids)


@pytest.mark.parametrize("alpha", [None, 1.0])
def test_simulated_flip_rate_matches_closed_form(nist_subset, alpha):
    ref = nist_subset
    judge = SimulatedJudge(ref, confusion="paper-fig6-edits", seed=3, alpha=alpha)
    codes = _draws(ref, judge, 2)
    h = labels_to_codes(ref.labels["support"].astype(object).to_numpy())
    C = resolve_confusion("paper-fig6-edits")
    ok = h >= 0
    per = 1 - (C[h[ok]] ** 2).sum(1)
    if alpha is not None:
        per = alpha * per / (alpha + 1)
    disagree = (codes[0][ok] != codes[1][ok]).astype(float)
    se = np.sqrt((per * (1 - per)).mean() / ok.sum())  # independent Bernoulli(per_i) given the human labels
    assert abs(disagree.mean() - per.mean()) < 4 * se, (disagree.mean(), per.mean(), se)
    assert flip_stats(codes[:, ok])["flip_rate"] == pytest.approx(disagree.mean(), abs=1e-12)  # k = 2: flip = disagree


def test_sample_zero_is_the_judge_and_samples_are_reproducible(nist_subset):
    judge = SimulatedJudge(nist_subset, confusion="paper-fig6-edits", seed=1)
    assert judge.for_sample(0) is judge
    twin = judge.for_sample(2)
    assert twin is not judge and twin.sample_index == 2 and judge.sample_index == 0
    a = _draws(nist_subset.subset(qids=nist_subset.qids[:1]), judge, 3)
    b = _draws(nist_subset.subset(qids=nist_subset.qids[:1]), SimulatedJudge(nist_subset, confusion="paper-fig6-edits", seed=1), 3)
    assert (a == b).all()            # same seed and sample index: the same labels, whatever the order of calls
    assert (a[0] != a[1]).any()      # another sample index: another draw


def test_llm_judge_sample_shares_its_client():
    from metaeval.judges.client import ChatClient
    from metaeval.judges.config import Deployment
    from metaeval.judges.llm import LLMJudge

    dep = Deployment.from_dict({"name": "t", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                                "api_key_env": None})
    judge = LLMJudge(ChatClient(dep), sample_index=1)
    twin = judge.for_sample(3)
    assert twin.client is judge.client          # one client: one cache, one rate limiter per deployment
    assert (twin.sample_index, judge.sample_index) == (4, 1)


def test_deterministic_judge_refuses_samples():
    judge = LexicalJudge()
    assert judge.for_sample(0) is judge
    with pytest.raises(ConfigError, match="deterministic"):
        judge.for_sample(1)


def test_alpha_must_be_positive(nist_subset):
    with pytest.raises(ConfigError, match="alpha"):
        SimulatedJudge(nist_subset, alpha=0.0)
