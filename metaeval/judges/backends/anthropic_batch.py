"""Anthropic's Message Batches (``deployment.mode: batch``): ``POST /v1/messages/batches`` with ``requests:
[{custom_id, params}]``, polled until ``processing_status`` is ``ended``, results read as JSONL from the batch's
``results_url`` (https://docs.anthropic.com/en/docs/build-with-claude/batch-processing).  A result is
``succeeded`` (the message), ``errored`` (an ``invalid_request_error`` is permanent, anything else transient),
``expired`` or ``canceled`` (transient: the item goes into a new batch).  ``params`` are built exactly as the
synchronous backend builds them (system messages joined into ``system``; ``max_tokens`` defaults to 1024).
"""

from __future__ import annotations

import json
from typing import Any

from metaeval.judges.backends.anthropic_backend import AnthropicBackend
from metaeval.judges.backends.base import ChatReply, ChatRequest, PermanentError, TransientError, register_backend
from metaeval.judges.batch import BatchBackend


def message_params(request: ChatRequest) -> dict[str, Any]:
    system = "\n\n".join(m["content"] for m in request.messages if m["role"] == "system")
    params = dict(request.params)
    out: dict[str, Any] = {"model": request.model, "max_tokens": int(params.pop("max_tokens", 1024)),
                           "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages
                                        if m["role"] != "system"]}
    if system:
        out["system"] = system
    out.update(params)
    return out


@register_backend
class AnthropicBatchBackend(BatchBackend):
    name = "anthropic_batch"
    provider = "anthropic"
    batch_limits = (100_000, 256 * 1024 * 1024)  # requests, bytes per batch
    _make_sdk_client = AnthropicBackend._make_sdk_client

    def line_bytes(self, cid: str, request: ChatRequest) -> int:
        return len(json.dumps({"custom_id": cid, "params": message_params(request)}, ensure_ascii=False).encode("utf-8")) + 1

    async def submit(self, group: list[tuple[str, ChatRequest]]) -> str:
        reqs = [{"custom_id": cid, "params": message_params(req)} for cid, req in group]
        b = await self._call("create message batch", self._sdk().messages.batches.create(requests=reqs))
        return str(b.id)

    async def ended(self, batch_id: str) -> bool:
        b = await self._call("poll message batch", self._sdk().messages.batches.retrieve(batch_id))
        return b.processing_status == "ended"

    async def results(self, batch_id: str) -> dict[str, ChatReply | Exception]:
        async def collect() -> dict[str, ChatReply | Exception]:
            out: dict[str, ChatReply | Exception] = {}
            async for entry in await self._sdk().messages.batches.results(batch_id):
                out[entry.custom_id] = _item(entry.result)
            return out

        return await self._call("download message batch results", collect())


def _item(result: Any) -> ChatReply | Exception:
    kind = getattr(result, "type", None)
    if kind == "succeeded":
        msg = result.message
        text = "".join(getattr(b, "text", "") for b in msg.content if getattr(b, "type", "") == "text")
        usage = getattr(msg, "usage", None)
        return ChatReply(text=text, input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
                         output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
                         finish_reason=getattr(msg, "stop_reason", None), model=getattr(msg, "model", None))
    if kind == "errored":
        inner = getattr(getattr(result, "error", None), "error", None)
        etype = str(getattr(inner, "type", "api_error"))
        msg = f"batch item errored: {etype}: {getattr(inner, 'message', '')}"[:300]
        if etype in ("invalid_request_error", "authentication_error", "permission_error", "not_found_error"):
            return PermanentError(msg)
        return TransientError("rate_limit" if etype == "rate_limit_error" else "server", msg)
    return TransientError("batch_expired" if kind == "expired" else "server", f"batch item {kind}")
