"""Batch mode over HTTP: the OpenAI and Anthropic batch APIs of the wire test server, through ChatClient.

Same replies as the synchronous endpoints, batch prices, failed/expired items retried in new batches, and a
restarted client that resumes polling a submitted batch (from the journal) instead of submitting it again.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from metaeval.judges.batch import BatchJournal, custom_id
from metaeval.judges.backends.base import ChatRequest
from metaeval.judges.client import ChatClient
from metaeval.testing.rules import label_rule
from metaeval.testing.server import ChatTestServer, Faults

FAST = {"window_s": 0.05, "poll_s": 0.05, "max_poll_s": 0.2}


def _prompt(i: int) -> list[dict]:
    nuggets = "\n".join(f"[{k + 1}] fact {i}-{k}" for k in range(3))
    return [{"role": "user", "content": f"Label each nugget.\n<answer>\nanswer {i}\n</answer>\n"
                                        f'<nuggets count="3">\n{nuggets}\n</nuggets>\nsupport, partial_support or not_support'}]


def _deployment(srv, backend, **batch):
    url = srv.openai_base_url if backend == "openai" else srv.anthropic_base_url
    return {"name": f"b-{backend}", "backend": backend, "model": "test-model", "base_url": url, "mode": "batch",
            "api_key_env": None, "params": {"temperature": 0, "max_tokens": 64},
            "limits": {"concurrency": 500, "max_retries": 6, "backoff_base_s": 0.01, "max_backoff_s": 0.05},
            "prices": {"input_per_1m": 2.0, "output_per_1m": 8.0}, "batch": {**FAST, **batch}}


async def _run(client, n):
    traces = await asyncio.gather(*(client.complete(_prompt(i)) for i in range(n)))
    await client.aclose()
    return traces


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_batch_replies_equal_sync_and_cost_half(backend, tmp_path):
    with ChatTestServer(faults=Faults(batch_delay_s=0.1)) as srv:
        journal = tmp_path / "j.jsonl"
        client = ChatClient(_deployment(srv, backend, journal=str(journal), max_requests=25))
        traces = asyncio.run(_run(client, 60))
        assert [t.raw_output for t in traces] == [label_rule(_prompt(i)) for i in range(60)]
        assert srv.counts["requests"] == 0  # nothing went to the synchronous endpoint
        assert srv.counts["batches"] == 3 and srv.counts["batch_items"] == 60  # 25 + 25 + 10
        for t in traces:  # half of 2.0 / 8.0 USD per million tokens
            assert t.cost_usd == pytest.approx((t.input_tokens * 1.0 + t.output_tokens * 4.0) / 1e6)
            assert t.input_tokens > 0
        recs = [json.loads(x) for x in journal.read_text().splitlines()]
        assert sorted(r["event"] for r in recs) == ["ended"] * 3 + ["submitted"] * 3


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_failed_and_expired_items_are_retried_in_new_batches(backend, tmp_path):
    with ChatTestServer(faults=Faults(batch_delay_s=0.05, p_item_failed=0.2, p_batch_expired=0.5, seed=3)) as srv:
        client = ChatClient(_deployment(srv, backend, journal=str(tmp_path / "j.jsonl")))
        traces = asyncio.run(_run(client, 40))
        assert [t.raw_output for t in traces] == [label_rule(_prompt(i)) for i in range(40)]
        assert srv.counts["batch_item_failed"] + srv.counts["batch_item_expired"] > 0
        lost = srv.counts["batch_item_failed"] + srv.counts["batch_item_expired"]
        assert srv.counts["batch_items"] == 40 + lost  # each failed item resubmitted once per failure, no more
        assert sum(t.retries for t in traces) == lost


def test_invalid_item_is_permanent(tmp_path):
    """A 4xx inside a batch (here: an OpenAI batch whose endpoint the server rejects line by line) is not retried."""
    from metaeval.judges.backends.openai_batch import _item

    err = _item({"custom_id": "r1", "response": {"status_code": 400, "body": {"error": {"message": "bad"}}}, "error": None})
    assert type(err).__name__ == "PermanentError"
    exp = _item({"custom_id": "r1", "response": None, "error": {"code": "batch_expired", "message": "late"}})
    assert type(exp).__name__ == "TransientError" and exp.kind == "batch_expired"


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_restart_resumes_polling_instead_of_resubmitting(backend, tmp_path):
    """Client 1 submits and is abandoned while the batch runs; client 2 (same journal) waits for that batch."""
    journal = tmp_path / "j.jsonl"
    with ChatTestServer(faults=Faults(batch_delay_s=1.0)) as srv:
        async def first():
            client = ChatClient(_deployment(srv, backend, journal=str(journal)))
            tasks = [asyncio.create_task(client.complete(_prompt(i))) for i in range(10)]
            while not journal.exists():
                await asyncio.sleep(0.02)
            for t in tasks:  # "killed" while polling
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run(first())
        assert srv.counts["batches"] == 1 and BatchJournal(journal).pending()
        client = ChatClient(_deployment(srv, backend, journal=str(journal)))
        traces = asyncio.run(_run(client, 10))
        assert [t.raw_output for t in traces] == [label_rule(_prompt(i)) for i in range(10)]
        assert srv.counts["batches"] == 1 and srv.counts["batch_items"] == 10  # nothing submitted twice
        assert not BatchJournal(journal).pending()


def test_custom_id_is_stable_and_fits_anthropic():
    req = ChatRequest(model="m", messages=({"role": "user", "content": "x"},), params={"temperature": 0})
    same = ChatRequest(model="m", messages=({"role": "user", "content": "x"},), params={"temperature": 0})
    other = ChatRequest(model="m", messages=({"role": "user", "content": "y"},), params={"temperature": 0})
    assert custom_id(req) == custom_id(same) != custom_id(other)
    import re

    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", custom_id(req))
