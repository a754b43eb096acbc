"""Relevance grading (the paper's optional first stage) end to end: the LLM judge against the test server
(re-asks, FAILED grades, structured output), and ``metaeval sweep sweep.relevance=judge`` with the test server
and with the offline lexical judge: request counts follow the batching, and creation sees exactly the documents
the judge graded >= 1."""

from __future__ import annotations

import asyncio
import json
import math
import re
import subprocess
import sys
import threading
from collections import defaultdict
from pathlib import Path

import pytest

from metaeval.data.dataset import load_dataset
from metaeval.judges import make_judge
from metaeval.judges.lexical import LexicalJudge, content_words
from metaeval.testing.rules import analyse, label_rule, scripted
from metaeval.testing.server import ChatTestServer
from metaeval.types import Document, Topic

TOPIC = Topic("q1", "why do cats purr")
DOCS = [Document("d1", "Cats purr by vibrating the larynx.", "Purring"), Document("d2", "Dogs bark at strangers.")]
_IDS = re.compile(r'<document index="\d+" id="([^"]*)">')


def llm(srv, **extra):
    return {"judge": "llm", "deployment": {
        "name": "t", "backend": "openai", "model": "test-model", "base_url": srv.openai_base_url, "api_key_env": None,
        "limits": {"timeout_s": 2, "max_retries": 1, "backoff_base_s": 0.01, "max_backoff_s": 0.02}}, **extra}


def grade(cfg, docs=DOCS):
    judge = make_judge(cfg)

    async def go():
        try:
            return await judge.grade_relevance(TOPIC, docs)
        finally:
            await judge.aclose()

    return asyncio.run(go())


def test_llm_grades_relevance_with_the_versioned_prompt():
    with ChatTestServer() as srv:
        res = grade(llm(srv))
        body = srv.recent[-1]
    assert res.status == "ok" and res.reasks == 0 and len(res.grades) == 2 and set(res.grades) <= {0, 1, 2, 3}
    assert res.grades == tuple(json.loads(label_rule(body["messages"])))  # the server's grades, in document order
    (tr,) = res.traces
    assert (tr.prompt_id, tr.prompt_version) == ("relevance", "v1")
    user = body["messages"][-1]["content"]
    assert '<document index="1" id="d1">\nPurring\nCats purr by vibrating the larynx.\n</document>' in user


def test_llm_relevance_reasks_then_fails_without_a_default_grade():
    with ChatTestServer(rule=scripted(["[3]"])) as srv:  # wrong length once, then the cooperative rule
        res = grade(llm(srv))
        assert srv.counts["requests"] == 2
    assert res.status == "ok" and res.reasks == 1 and len(res.traces) == 2
    with ChatTestServer(rule=scripted(["I cannot grade these."] * 3)) as srv:
        res = grade(llm(srv))
        assert srv.counts["requests"] == 3  # first call + 2 re-asks
    assert res.grades == (None, None) and res.status == "failed" and res.raw == "I cannot grade these."
    assert "no list found" in res.reason
    with ChatTestServer(rule=scripted(["[2, 7]"] * 3)) as srv:
        res = grade(llm(srv, max_reasks=1))
        assert srv.counts["requests"] == 2
    assert res.grades == (2, None) and res.status == "partial" and "#2 7" in res.reason


def test_llm_relevance_structured_output_schema():
    with ChatTestServer() as srv:
        res = grade(llm(srv, prompts={"relevance": "relevance@v2-json"}, structured_output="json_schema"))
        body = srv.recent[-1]
    assert res.status == "ok" and len(res.grades) == 2
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["grades"] == {"type": "array", "items": {"type": "integer", "enum": [0, 1, 2, 3]},
                                              "minItems": 2, "maxItems": 2}


# ---------------------------------------------------------------------- sweeps


def sweep(tmp_path: Path, *overrides: str) -> dict:
    cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "runtime=serial", "grid=single",
           "strategy=auto_auto", "sweep.relevance=judge", "calibration.enabled=false", "analysis.bootstrap=0",
           "+report.enabled=false", f"results_dir={tmp_path}", "name=rel", *overrides]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads((tmp_path / "rel" / "summary.json").read_text(encoding="utf-8"))


def jobs_by_stage(tmp_path: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for line in (tmp_path / "rel" / "jobs.jsonl").read_text(encoding="utf-8").splitlines():
        j = json.loads(line)
        out[j["spec"]["stage"]].append(j)
    return out


def test_sweep_with_judge_relevance_against_test_server(tmp_path):
    ds = load_dataset("demo")
    seen: dict[str, list] = defaultdict(list)  # task -> [(query, docids, grades)] as the server saw them
    lock = threading.Lock()

    def recording(messages):
        reply = label_rule(messages)
        a = analyse(messages)
        if a["task"] in ("relevance", "create"):
            ids = _IDS.findall(messages[-1]["content"] if a["task"] == "relevance" else analyse_user(messages))
            with lock:
                seen[a["task"]].append((a["query"], ids, json.loads(reply) if a["task"] == "relevance" else None))
        return reply

    with ChatTestServer(rule=recording) as srv:
        s = sweep(tmp_path, "judge=testserver", f"judge.deployment.base_url={srv.openai_base_url}")
        total = srv.counts["requests"]
    jobs = jobs_by_stage(tmp_path)
    (cell,) = s["cells"]
    n_docs = {q: len(ds.documents.get(q, [])) for q in ds.qids}
    # relevance: one job per topic over all candidate documents, ceil(documents/10) calls each
    assert len(jobs["relevance"]) == len(ds.qids)
    assert sum(j["stats"]["judge_calls"] for j in jobs["relevance"]) == sum(math.ceil(n / 10) for n in n_docs.values())
    assert len(seen["relevance"]) == sum(math.ceil(n / 10) for n in n_docs.values())
    # the judge's grades as the server gave them -> the documents graded >= 1 per topic
    relevant: dict[str, set] = defaultdict(set)
    for query, ids, grades in seen["relevance"]:
        relevant[query] |= {d for d, g in zip(ids, grades) if g >= 1}
    topic_of = {ds.topics[q]: q for q in ds.qids}
    assert set(topic_of) == {q for q, _, _ in seen["relevance"]}
    want_create = sum(math.ceil(len(relevant[t]) / 10) for t in topic_of)
    assert sum(j["stats"]["judge_calls"] for j in jobs["create"]) == want_create
    # creation saw exactly the judge-graded documents (not the qrels' choice)
    for query, ids, _ in seen["create"]:
        assert set(ids) == relevant[query]
    assert {q for q, _, _ in seen["create"]} == {t for t in topic_of if relevant[t]}
    graded = ds.qrels[ds.qrels["grade"] >= 1]
    qrels_sets = {ds.topics[q]: set(graded[graded.qid == q].docid) for q in ds.qids}
    assert any(relevant[t] != qrels_sets[t] for t in topic_of)  # the switch really changed the input
    stored = {j["spec"]["qid"]: j["output"] for j in jobs["relevance"]}
    for q, out in stored.items():
        assert {d for d, g in zip(out["docids"], out["grades"]) if g >= 1} == relevant[ds.topics[q]]
    assert cell["relevance"] == {"documents": sum(n_docs.values()), "relevant": sum(len(v) for v in relevant.values()),
                                 "failed_grades": 0}
    assert total == sum(j["stats"]["judge_calls"] + j["stats"]["reasks"] - j["stats"]["cache_hits"]
                        for js in jobs.values() for j in js)  # identical requests go out once (single flight + cache)


def analyse_user(messages) -> str:
    return next(m["content"] for m in messages if m.get("role") == "user")


def test_sweep_with_lexical_relevance_offline_and_resume(tmp_path):
    """The lexical judge grades offline; smaller batches make the counts discriminating; a rerun reuses all."""
    ds = load_dataset("demo")
    settings = ["judge=lexical", "sweep.relevance_batch=3", "sweep.creation_window=2"]
    s = sweep(tmp_path, *settings)
    jobs = jobs_by_stage(tmp_path)
    lex = LexicalJudge()
    relevant = {}
    for q in ds.qids:
        words = content_words(ds.topics[q])
        relevant[q] = [d.docid for d in ds.documents.get(q, []) if lex.relevance_grade(words, d) >= 1]
    assert sum(j["stats"]["judge_calls"] for j in jobs["relevance"]) == sum(math.ceil(len(ds.documents[q]) / 3) for q in ds.qids)
    assert sum(j["stats"]["judge_calls"] for j in jobs["create"]) == sum(math.ceil(len(v) / 2) for v in relevant.values())
    graded = ds.qrels[ds.qrels["grade"] >= 1]
    assert any(set(relevant[q]) != set(graded[graded.qid == q].docid) for q in ds.qids)
    (cell,) = s["cells"]
    assert cell["relevance"]["relevant"] == sum(len(v) for v in relevant.values())
    s2 = sweep(tmp_path, *settings)  # everything is in the store, relevance jobs included
    (cell2,) = s2["cells"]
    assert cell2["this_run"]["executed"] == 0 and cell2["stats"]["reused"] == cell2["stats"]["jobs"] > 0


@pytest.mark.parametrize("judge", ["simulated_fig6"])
def test_judge_that_cannot_grade_relevance_is_skipped(tmp_path, judge):
    from metaeval.workflow.compose import compose_sweep

    _, (cell,) = compose_sweep(["grid=single", f"judge={judge}", "strategy=auto_auto", "sweep.relevance=judge"])
    assert cell.skipped and "relevance" in cell.skipped
    _, (cell,) = compose_sweep(["grid=single", "judge=lexical", "strategy=auto_auto", "sweep.relevance=judge"])
    assert cell.skipped is None
    from metaeval.errors import ConfigError

    with pytest.raises(ConfigError, match="sweep.relevance"):
        compose_sweep(["grid=single", "judge=lexical", "sweep.relevance=bm25"])
