"""LLMJudge against the test server: the three tasks, re-asks (traced), FAILED with the raw reply, structured output."""

from __future__ import annotations

import asyncio
import json

import pytest

from metaeval.judges import make_judge
from metaeval.testing.rules import label_rule, scripted
from metaeval.testing.server import ChatTestServer, Faults
from metaeval.types import Answer, Document, Importance, Support, Topic

TOPIC = Topic("q1", "why do cats purr")
ANSWER = Answer("run-a", "q1", "Cats purr by vibrating the larynx. They purr when content.")
NUGGETS = ["cats purr using the larynx", "cats purr when content", "purring heals bones"]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("METAEVAL_LLM_KEY", "sk-llm-test")


def config(srv, backend="openai", **extra):
    base = srv.openai_base_url if backend == "openai" else srv.anthropic_base_url
    return {"judge": "llm", "deployment": {
        "name": f"t-{backend}", "backend": backend, "model": "test-model", "base_url": base,
        "api_key_env": "METAEVAL_LLM_KEY",
        "limits": {"timeout_s": 2, "max_retries": 1, "backoff_base_s": 0.01, "max_backoff_s": 0.02}}, **extra}


def call(cfg, method, *args):
    judge = make_judge(cfg)

    async def go():
        try:
            return await getattr(judge, method)(*args)
        finally:
            await judge.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
@pytest.mark.parametrize("assign_prompt", ["assign@v1", "assign@v2-json", "assign2@v1", "assign2@v2-json"])
def test_assign_with_every_prompt_version(backend, assign_prompt):
    with ChatTestServer() as srv:
        res = call(config(srv, backend, prompts={"assign": assign_prompt}), "assign", TOPIC, ANSWER, NUGGETS)
        body = srv.recent[-1]
    assert res.status == "ok" and res.reasks == 0 and len(res.labels) == 3
    if assign_prompt.startswith("assign2"):
        assert Support.PARTIAL_SUPPORT not in res.labels
    (tr,) = res.traces
    pid, _, version = assign_prompt.partition("@")
    assert (tr.prompt_id, tr.prompt_version) == (pid, version) and len(tr.prompt_sha) == 12
    text = json.dumps(body)
    assert "<answer>" in text and "Cats purr by vibrating the larynx" in text


def test_importance_and_creation():
    docs = [Document("d1", "Cats purr with the larynx. More text."), Document("d2", "Purring happens when content.")]
    with ChatTestServer() as srv:
        imp = call(config(srv), "label_importance", TOPIC, NUGGETS)
        cre = call(config(srv), "create_nuggets", TOPIC, docs, ["an existing nugget"])
    assert imp.status == "ok" and all(x in (Importance.VITAL, Importance.OKAY) for x in imp.labels) and len(imp.labels) == 3
    assert cre.status == "ok" and cre.nuggets == ("an existing nugget", "Cats purr with the larynx.", "Purring happens when content.")


def test_reask_recovers_and_is_traced():
    rule = scripted(["I think they are all fine.", '["support"]'])  # prose, then wrong length, then the rule
    with ChatTestServer(rule=rule) as srv:
        res = call(config(srv), "assign", TOPIC, ANSWER, NUGGETS)
        assert srv.counts["requests"] == 3
        last = srv.recent[-1]["messages"]
    assert res.status == "ok" and res.reasks == 2 and [t.reask for t in res.traces] == [0, 1, 2]
    assert [t.raw_output for t in res.traces[:2]] == ["I think they are all fine.", '["support"]']
    # the re-ask carries the conversation and names the problem
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert last[-2]["content"] == '["support"]' and "expected exactly 3 labels, got 1" in last[-1]["content"]
    assert [x.value for x in res.labels] == json.loads(label_rule(last))


def test_failed_after_reasks_keeps_raw_reply_and_never_defaults():
    with ChatTestServer(faults=Faults(p_malformed=1.0)) as srv:
        res = call(config(srv, max_reasks=2), "assign", TOPIC, ANSWER, NUGGETS)
        assert srv.counts["requests"] == 3
    assert res.status == "failed" and res.labels == (Support.FAILED,) * 3
    assert res.raw == "I am not able to grade these nuggets, sorry." and "after 2 re-ask(s)" in res.reason


def test_unknown_label_fails_only_that_item():
    rule = scripted(['["support", "maybe", "not_support"]'] * 3)
    with ChatTestServer(rule=rule) as srv:
        res = call(config(srv, max_reasks=2), "assign", TOPIC, ANSWER, NUGGETS)
    assert res.labels == (Support.SUPPORT, Support.FAILED, Support.NOT_SUPPORT) and res.status == "partial"
    assert "'maybe'" in res.reason


def test_transport_failure_is_failed_with_reason_not_reasked():
    with ChatTestServer(faults=Faults(p_500=1.0)) as srv:
        res = call(config(srv), "assign", TOPIC, ANSWER, NUGGETS)
        assert srv.counts["requests"] == 2  # 1 + max_retries, no re-ask
    assert res.status == "failed" and "call failed" in res.reason and "server" in res.reason
    assert res.traces[0].error and res.traces[0].retries == 1


@pytest.mark.parametrize("style,rtype", [("json_schema", "json_schema"), ("json_object_schema", "json_object")])
def test_structured_output_schema_reaches_the_wire_and_the_cache_key(style, rtype):
    with ChatTestServer() as srv:
        res = call(config(srv, structured_output=style, prompts={"assign": "assign@v2-json"}), "assign", TOPIC, ANSWER, NUGGETS)
        plain = call(config(srv, prompts={"assign": "assign@v2-json"}), "assign", TOPIC, ANSWER, NUGGETS)
        fmt = srv.recent[0]["response_format"]
    assert res.status == "ok" and fmt["type"] == rtype
    schema = fmt["json_schema"]["schema"] if rtype == "json_schema" else fmt["schema"]
    arr = schema["properties"]["labels"]
    assert arr["minItems"] == arr["maxItems"] == 3 and set(arr["items"]["enum"]) == {"support", "partial_support", "not_support"}
    assert res.traces[0].message_hash != plain.traces[0].message_hash and "response_format" in res.traces[0].params


def test_one_judge_across_several_event_loops():
    """asyncio.run twice on one judge (e.g. SyncJudge, notebooks): each loop gets its own SDK client and limiter."""
    with ChatTestServer() as srv:
        judge = make_judge(config(srv))
        first = asyncio.run(judge.assign(TOPIC, ANSWER, NUGGETS))
        second = asyncio.run(judge.assign(TOPIC, ANSWER, NUGGETS[:2]))
        asyncio.run(judge.aclose())
        assert srv.counts["requests"] == 2
    assert first.status == second.status == "ok"


def test_stats_count_calls():
    with ChatTestServer() as srv:
        cfg = config(srv)
        cfg["deployment"]["prices"] = {"input_per_1m": 1.0, "output_per_1m": 4.0}
        cfg["deployment"]["params"] = {"max_tokens": 100}
        judge = make_judge(cfg)
        assert srv.counts["requests"] == 0
        res = asyncio.run(judge.assign(TOPIC, ANSWER, NUGGETS))
        stats = judge.stats()
    assert res.status == "ok" and stats["calls"] == 1 and stats["requests"] == 1 and stats["cache_hits"] == 0
    assert make_judge("lexical").stats() == {}
