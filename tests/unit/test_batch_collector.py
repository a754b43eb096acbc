"""The batch collector against a scripted in-memory provider: grouping limits, identical requests, poll errors,
and a journal whose last line was cut short."""

from __future__ import annotations

import asyncio
import json

import pytest

from metaeval.judges.backends.base import ChatReply, ChatRequest, TransientError
from metaeval.judges.backends.anthropic_batch import AnthropicBatchBackend
from metaeval.judges.backends.openai_batch import OpenAIBatchBackend
from metaeval.judges.batch import BatchBackend, BatchJournal, custom_id
from metaeval.judges.config import Deployment


class ScriptedBatches(BatchBackend):
    """Batches end after ``polls_to_end`` polls; ``poll_errors`` transient errors are raised first."""

    provider = "openai"

    def __init__(self, batch: dict, poll_errors: int = 0, polls_to_end: int = 1):
        dep = Deployment.from_dict({"backend": "openai", "model": "m", "mode": "batch", "batch": batch})
        super().__init__(dep, "k")
        self.submitted: list[list[str]] = []
        self.poll_errors, self.polls_to_end, self.polls = poll_errors, polls_to_end, {}

    def _make_sdk_client(self):  # pragma: no cover - never used
        raise AssertionError

    def line_bytes(self, cid, request):
        return 100

    async def submit(self, group):
        self.submitted.append([cid for cid, _ in group])
        self._texts = {**getattr(self, "_texts", {}), **{cid: req.messages[0]["content"] for cid, req in group}}
        return f"b{len(self.submitted)}"

    async def ended(self, bid):
        if self.poll_errors:
            self.poll_errors -= 1
            raise TransientError("server", "HTTP 503 (scripted)")
        self.polls[bid] = self.polls.get(bid, 0) + 1
        return self.polls[bid] >= self.polls_to_end

    async def results(self, bid):
        ids = self.submitted[int(bid[1:]) - 1]
        return {cid: ChatReply(text="echo " + self._texts[cid]) for cid in ids}


def _req(text):
    return ChatRequest(model="m", messages=({"role": "user", "content": text},))


FAST = {"window_s": 0.01, "poll_s": 0.001, "max_poll_s": 0.002}


async def _all(backend, texts):
    out = await asyncio.gather(*(backend.complete(_req(t)) for t in texts), return_exceptions=True)
    await backend.aclose()
    return out


def test_groups_respect_max_bytes_and_identical_requests_share_one_item(tmp_path):
    b = ScriptedBatches({**FAST, "max_bytes": 350, "journal": str(tmp_path / "j.jsonl")})
    texts = ["a", "b", "a", "c", "d", "e"]  # "a" twice: one custom id, submitted once
    out = asyncio.run(_all(b, texts))
    assert [r.text for r in out] == ["echo " + t for t in texts]
    assert [len(g) for g in b.submitted] == [3, 2]  # 100 bytes each, at most 350 per batch
    assert sum(g.count(custom_id(_req("a"))) for g in b.submitted) == 1


def test_transient_poll_errors_are_waited_out(tmp_path):
    b = ScriptedBatches({**FAST, "max_poll_errors": 5, "journal": str(tmp_path / "j.jsonl")}, poll_errors=3)
    out = asyncio.run(_all(b, ["x", "y"]))
    assert [r.text for r in out] == ["echo x", "echo y"]


def test_too_many_poll_errors_fail_the_items_but_keep_the_batch_pending(tmp_path):
    journal = tmp_path / "j.jsonl"
    b = ScriptedBatches({**FAST, "max_poll_errors": 2, "journal": str(journal)}, poll_errors=10)
    out = asyncio.run(_all(b, ["x"]))
    assert isinstance(out[0], TransientError)
    assert BatchJournal(journal).pending() == ["b1"]  # a rerun polls b1 again instead of resubmitting
    again = ScriptedBatches({**FAST, "journal": str(journal)})
    again.submitted, again._texts = list(b.submitted), dict(b._texts)  # the provider still holds b1
    assert [r.text for r in asyncio.run(_all(again, ["x"]))] == ["echo x"]
    assert again.submitted == b.submitted  # nothing new was submitted


def test_an_unexpected_error_fails_the_requests_instead_of_hanging(tmp_path):
    """The provider holds no such batch here (results() raises IndexError): the waiting request gets an error."""
    journal = tmp_path / "j.jsonl"
    cid = custom_id(_req("x"))
    journal.write_text(json.dumps({"event": "submitted", "batch": "b9", "custom_ids": [cid]}) + "\n", encoding="utf-8")
    out = asyncio.run(asyncio.wait_for(_all(ScriptedBatches({**FAST, "journal": str(journal)}), ["x"]), 10))
    assert isinstance(out[0], TransientError) and "IndexError" in str(out[0])


def test_journal_with_a_cut_line_still_resumes(tmp_path, caplog):
    journal = tmp_path / "j.jsonl"
    cid = custom_id(_req("x"))
    journal.write_text(json.dumps({"event": "submitted", "batch": "b1", "custom_ids": [cid]}) + "\n"
                       + '{"event": "ended", "bat', encoding="utf-8")
    j = BatchJournal(journal)
    assert j.lookup(cid) == "b1" and j.pending() == ["b1"]
    assert "unreadable batch journal line" in caplog.text


def test_settings_are_checked_against_provider_limits():
    from metaeval.errors import ConfigError
    from metaeval.judges.batch import BatchSettings

    with pytest.raises(ConfigError, match="max_requests must be 1..50000"):
        BatchSettings.from_dict({"max_requests": 60000}, OpenAIBatchBackend)
    assert BatchSettings.from_dict({"max_requests": 60000}, AnthropicBatchBackend).max_requests == 60000
    with pytest.raises(ConfigError, match="unknown field"):
        BatchSettings.from_dict({"windw_s": 1}, OpenAIBatchBackend)
