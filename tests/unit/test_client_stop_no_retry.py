"""While a stop is under way (the task is being cancelled: Ctrl-C, SIGTERM), a transient error is not retried:
the cancellation goes on, even when an SDK reported the cancelled request as a connection error."""

from __future__ import annotations

import asyncio

import pytest

from metaeval.judges.backends.base import ChatReply, TransientError
from metaeval.judges.client import ChatClient
from metaeval.judges.config import Deployment


class _SwallowingBackend:
    """Turns the first cancellation into a TransientError (as an SDK wrapping a cancelled request may)."""

    name = "openai"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request):
        self.calls += 1
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise TransientError("connection", "connection error (request cancelled)") from None
        return ChatReply(text="[]", input_tokens=1, output_tokens=1, finish_reason="stop", model="m")

    async def aclose(self) -> None:
        pass


def test_cancelled_call_is_not_retried():
    dep = Deployment.from_dict({"name": "t", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                                "api_key_env": None, "limits": {"max_retries": 4, "backoff_base_s": 0.01}})
    client = ChatClient(dep)
    backend = _SwallowingBackend()
    client.backend = backend

    async def main():
        task = asyncio.create_task(client.complete([{"role": "user", "content": "hi"}]))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=5)

    asyncio.run(main())
    assert backend.calls == 1
