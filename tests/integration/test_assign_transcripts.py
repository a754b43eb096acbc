"""``metaeval assign`` with an LLM judge (the loopback OpenAI-format test server): same client and cache as a
sweep, and a transcript with the prompt id and version, rendered messages, raw reply, parsed labels, re-asks,
latency, tokens and cost of every call - never the key."""

from __future__ import annotations

import json

from metaeval.cli import main
from metaeval.data.fetch import DEMO_DIR
from metaeval.testing.server import ChatTestServer

KEY = "sk-transcript-sentinel-8812"


def _lines(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_assign_llm_judge_writes_transcripts_and_uses_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("METAEVAL_TRANSCRIPT_KEY", KEY)
    nuggets = tmp_path / "nuggets.jsonl"  # two demo topics keep it short
    nuggets.write_text("".join((DEMO_DIR / "nuggets.jsonl").read_text(encoding="utf-8").splitlines(True)[:2]), encoding="utf-8")
    with ChatTestServer(expected_key=KEY) as srv:
        cfg = tmp_path / "judge.yaml"
        cfg.write_text(f"backend: openai\nname: srv\nmodel: test-model\nbase_url: {srv.openai_base_url}\n"
                       "api_key_env: METAEVAL_TRANSCRIPT_KEY\nprices: {input_per_1m: 2.5, output_per_1m: 10.0}\n")
        out = tmp_path / "a.jsonl"
        argv = ["assign", "--nuggets", str(nuggets), "--answers", str(DEMO_DIR / "runs.jsonl"), "--judge", str(cfg),
                "--out", str(out), "--cache", str(tmp_path / "cache.sqlite")]
        assert main(argv) == 0
        sent = srv.counts["requests"]
        recs, trans = _lines(out), _lines(tmp_path / "a.transcripts.jsonl")
        assert len(recs) == len(trans) == 16  # 8 runs x 2 topics, <= 10 nuggets per topic: one unit each
        # every call that was not a cache hit reached the server (identical prompts are sent once: single flight)
        assert sent == sum(not c["cache_hit"] for t in trans for c in t["calls"]) >= 14
        assert main(argv) == 0  # again: every call is a cache hit, nothing is sent
        assert srv.counts["requests"] == sent
    again = _lines(tmp_path / "a.transcripts.jsonl")
    assert all(c["cache_hit"] for t in again for c in t["calls"])
    for rec, t in zip(recs, trans):
        assert t["stage"] == "assign" and (t["qid"], t["run_id"]) == (rec["qid"], rec["run_id"])
        assert t["items"] == [n["text"] for n in rec["nuggets"]]
        assert t["labels"] == [n["assignment"] for n in rec["nuggets"]]  # parsed labels as written
        assert t["calls"] and len(t["calls"]) == t["reasks"] + 1
        c = t["calls"][0]
        assert c["prompt_id"] == "assign" and c["prompt_version"] == "v1" and c["reask"] == 0
        roles = [m["role"] for m in c["messages"]]
        assert "user" in roles and any(rec["answer_text"][:40] in m["content"] for m in c["messages"])
        assert c["raw_reply"] and c["input_tokens"] > 0 and c["output_tokens"] > 0
        assert c["cost_usd"] > 0 or c["cache_hit"]  # a cache hit costs nothing
        assert c["latency_s"] >= 0 and c["model"] == "test-model" and c["error"] is None
    text = (tmp_path / "a.transcripts.jsonl").read_text(encoding="utf-8") + out.read_text(encoding="utf-8")
    assert KEY not in text and "Authorization" not in text and "api_key" not in text.lower().replace("api_key_env", "")


def test_assignment_replies_index_the_judges_words_per_pair(tmp_path, monkeypatch):
    """What a report needs for a disagreement: the judge's raw reply and label for (topic, run, nugget)."""
    from metaeval.io.transcripts import assignment_replies, read_transcripts

    monkeypatch.setenv("METAEVAL_TRANSCRIPT_KEY", KEY)
    nuggets = tmp_path / "nuggets.jsonl"
    nuggets.write_text((DEMO_DIR / "nuggets.jsonl").read_text(encoding="utf-8").splitlines(True)[0], encoding="utf-8")
    with ChatTestServer(expected_key=KEY) as srv:
        cfg = tmp_path / "judge.yaml"
        cfg.write_text(f"backend: openai\nname: srv\nmodel: test-model\nbase_url: {srv.openai_base_url}\n"
                       "api_key_env: METAEVAL_TRANSCRIPT_KEY\n")
        out = tmp_path / "a.jsonl"
        assert main(["assign", "--nuggets", str(nuggets), "--answers", str(DEMO_DIR / "runs.jsonl"), "--judge",
                     str(cfg), "--out", str(out), "--no-cache"]) == 0
    idx = assignment_replies(read_transcripts(tmp_path / "a.transcripts.jsonl"))
    recs = _lines(out)
    assert len(idx) == sum(len(r["nuggets"]) for r in recs)
    for r in recs:
        for i, n in enumerate(r["nuggets"]):
            said = idx[(r["qid"], r["run_id"], n["text"])]
            assert said["label"] == n["assignment"] and said["position"] == i % 10 + 1
            assert said["raw_reply"] and said["prompt"] == "assign@v1" and said["model"] == "test-model"
