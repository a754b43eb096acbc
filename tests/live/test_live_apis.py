"""Opt-in tests against the real paid APIs: ``METAEVAL_LIVE=1`` plus the key variables.

    METAEVAL_LIVE=1 OPENAI_API_KEY=... ANTHROPIC_API_KEY=... .venv/bin/python -m pytest -m live

Each makes one assignment call (a few hundred tokens) through the judge the sweep configs define.
"""

from __future__ import annotations

import os

import pytest

from metaeval.data.dataset import load_dataset
from metaeval.judges.base import SyncJudge
from metaeval.judges.catalog import build_judge, resolve_judge
from metaeval.types import Nugget, Topic

pytestmark = pytest.mark.live


@pytest.mark.parametrize("name", ["gpt-4o", "claude"])
def test_one_assignment_call(name):
    cfg = dict(resolve_judge(name).config)
    key_env = cfg["deployment"]["api_key_env"]
    if not os.environ.get(key_env):
        pytest.skip(f"{key_env} is not set")
    ds = load_dataset("demo")
    answer = ds.answers[0]
    nuggets = ds.nuggets[ds.nuggets["qid"] == answer.qid].sort_values("nugget_id")
    batch = [Nugget(text=t, importance=i) for t, i in zip(nuggets["nugget"][:5], nuggets["importance"][:5])]
    with SyncJudge(build_judge({**cfg, "cache": None})) as judge:
        res = judge.assign(Topic(answer.qid, ds.topics[answer.qid]), answer, batch)
    assert len(res.labels) == len(batch)
    assert res.status != "failed" or res.reason
    (trace,) = res.traces[:1]
    assert trace.input_tokens > 0 and trace.cost_usd > 0 and not trace.cache_hit
