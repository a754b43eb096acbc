"""Must-show: 500 assignment units under 20% each of 429 (Retry-After: 1), 500 and timeouts.

Every item ends labelled or FAILED with a reason, none lost or duplicated, every retry is in a trace and the
server saw exactly the attempts the traces account for; a repeat run with the same cache (on a healthy server)
sends exactly one request per prompt that got no reply in the first run; the sentinel API key appears in no cache,
result or log file.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from metaeval.judges import make_judge
from metaeval.testing.rules import label_rule
from metaeval.testing.server import ChatTestServer, Faults
from metaeval.prompts import load_template
from metaeval.prompts.templates_io import assign_values
from metaeval.types import Answer, Topic

SENTINEL = "sk-SENTINEL-never-write-me-7f3a9c"


def windows(labels, n_units: int):
    """(topic, answer, nugget texts) units: each NIST answer's nuggets in windows of 10."""
    lab = labels.labels
    answers = {(r.qid, r.run_id): r.answer_text for r in labels.answers.itertuples()}
    units = []
    for (qid, run), grp in lab.groupby(["qid", "run_id"], sort=True, observed=True):
        texts = grp.sort_values("nugget_id")["nugget"].tolist()
        for start in range(0, len(texts), 10):
            units.append((Topic(qid, labels.topics.get(qid, "")), Answer(run, qid, answers[(qid, run)]), texts[start:start + 10]))
            if len(units) == n_units:
                return units
    return units


def judge_config(srv: ChatTestServer, cache: Path) -> dict:
    return {
        "judge": "llm", "cache": str(cache), "max_reasks": 2,
        "deployment": {
            "name": "fault-test", "backend": "openai", "model": "test-model", "base_url": srv.openai_base_url,
            "api_key_env": "METAEVAL_FAULT_KEY", "params": {"temperature": 0},
            # timeout 2 s against hangs of 10 s: a hung request is unmistakable, a slow healthy one (a loaded
            # machine) is not cut short - the counts below do not depend on the machine's speed
            "limits": {"concurrency": 64, "max_retries": 10, "timeout_s": 2.0, "backoff_base_s": 0.01,
                       "max_backoff_s": 0.05},
        },
    }


def run_units(config: dict, units) -> tuple[list, dict]:
    judge = make_judge(config)

    async def go():
        try:
            return await asyncio.gather(*(judge.assign(t, a, n) for t, a, n in units))
        finally:
            await judge.aclose()

    results = asyncio.run(go())
    return results, judge.client.stats.to_dict()


@pytest.mark.timeout(300)
def test_500_units_under_faults_none_lost_retries_traced_cache_and_no_key(nist_labels, tmp_path, monkeypatch):
    monkeypatch.setenv("METAEVAL_FAULT_KEY", SENTINEL)
    log_file = tmp_path / "run.log"
    handler = logging.FileHandler(log_file)
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)  # SDK and httpx debug logs included: they must not carry the key either
    try:
        units = windows(nist_labels, 500)
        assert len(units) == 500
        faults = Faults(p_429=0.2, p_500=0.2, p_hang=0.2, retry_after="1", hang_s=10.0, seed=11)
        cache = tmp_path / "cache" / "responses.sqlite"
        with ChatTestServer(faults=faults, expected_key=SENTINEL) as srv:
            results, stats = run_units(judge_config(srv, cache), units)
            first_requests = srv.counts["requests"]
            counts = dict(srv.counts)

            # -- every item accounted for, exactly once
            assert len(results) == 500
            assert [len(r.labels) for r in results] == [len(n) for _, _, n in units]
            expected_rule = [json.loads(label_rule(load_template("assign@v1").render(**assign_values(t.text, a.text, n)))) for t, a, n in units]
            failed_units = 0
            for res, want in zip(results, expected_rule):
                if res.status == "ok":
                    assert [x.value for x in res.labels] == want  # the reply for *this* unit, not another's
                else:
                    failed_units += 1
                    assert all(x.value == "FAILED" for x in res.labels) and res.reason
            # -- faults really happened and every attempt is in a trace
            # (each fault has p = 0.2 per request over >= 500 requests; how many land depends on the interleaving, so
            # the floor only proves that every kind happened many times, not a rate)
            assert counts["429"] > 20 and counts["500"] > 20 and counts["hang"] > 10
            # attempts on the wire: traces that were not answered from the cache (a unit identical to one in
            # flight waits for it and reads its reply: single flight)
            traced_attempts = sum(tr.retries + 1 for r in results for tr in r.traces if not tr.cache_hit)
            timeouts = sum(e.kind == "timeout" for r in results for tr in r.traces for e in tr.retry_events)
            assert traced_attempts == stats["requests"]
            # an attempt that timed out may never have reached the server's handler; every other one did
            assert traced_attempts - timeouts <= first_requests <= traced_attempts
            kinds = {e.kind for r in results for tr in r.traces for e in tr.retry_events}
            assert kinds == {"rate_limit", "server", "timeout"}
            assert any(e.retry_after == 1.0 for r in results for tr in r.traces for e in tr.retry_events)

            # -- repeat run, on a healthy server: served from the cache
            # A request is its rendered prompt, and 30 of the 500 windows repeat another's (texts that differ only
            # where the prompt does not show it count as the same).  A unit's reply is cached when its request got a
            # reply in the first run, its own or an identical unit's (a failed unit's twin may have succeeded after
            # it).  The repeat run has no faults, so its outcome is fixed too: each request with no reply yet is sent
            # by exactly one unit (an identical one waits for it: single flight), every other unit is a cache hit.
            # (Keyed by the texts, or with the faults left on, the count moved from run to run: 500 vs 499 hits.)
            srv.faults = Faults()
            srv.reset_counts()
            again, stats2 = run_units(judge_config(srv, cache), units)
            # a request is its rendered prompt: windows whose texts differ only where the prompt does not show it
            # (surrounding whitespace) are the same request
            prompts = [json.dumps(load_template("assign@v1").render(**assign_values(t.text, a.text, n)), sort_keys=True)
                       for t, a, n in units]
            answered = {p for p, r in zip(prompts, results) if r.status == "ok"}
            unanswered = set(prompts) - answered
            assert len(unanswered) <= failed_units
            assert all(r.status == "ok" for r in again)
            assert stats2["cache_hits"] == 500 - len(unanswered)
            sent = [p for p, r in zip(prompts, again) if not all(t.cache_hit for t in r.traces)]
            assert sorted(sent) == sorted(unanswered)  # each missing key sent by exactly one unit
            assert srv.counts["requests"] == sum(tr.retries + 1 for r in again for tr in r.traces if not tr.cache_hit)
            assert srv.counts["requests"] >= len(unanswered)  # a healthy request may still time out on a loaded machine
            if failed_units == 0:
                assert srv.counts["requests"] == 0
            for r1, r2 in zip(results, again):
                if r1.status == "ok":  # done units come back from the cache, unchanged
                    assert r2.labels == r1.labels and all(t.cache_hit for t in r2.traces)

        out = tmp_path / "results.jsonl"
        with out.open("w") as fh:
            for r in results + again:
                fh.write(json.dumps(r.provenance(), default=str) + "\n")
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()
    # -- the key is nowhere on disk: cache (db + WAL), results, logs
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.startswith("responses.sqlite") for p in files) and log_file.stat().st_size > 0
    for p in files:
        assert SENTINEL.encode() not in p.read_bytes(), f"API key found in {p}"
