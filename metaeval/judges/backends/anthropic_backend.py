"""Anthropic messages through the official SDK.

System messages are joined into the ``system`` field; ``max_tokens`` (required by the API) defaults to 1024.
Without ``base_url`` in the deployment the SDK's ``ANTHROPIC_BASE_URL`` applies.
"""

from __future__ import annotations

from typing import Any

from metaeval.judges.backends.base import (
    ChatBackend, ChatReply, ChatRequest, TransientError, register_backend, sdk_errors, sdk_reply, split_params,
)


@register_backend
class AnthropicBackend(ChatBackend):
    name = "anthropic"
    SDK_MODULES = ("anthropic",)
    http = True
    batch_backend = "anthropic_batch"  # no response_format: structured_output stays False

    def _make_sdk_client(self) -> Any:
        from anthropic import AsyncAnthropic

        return AsyncAnthropic(**self._sdk_kwargs())

    async def complete(self, request: ChatRequest) -> ChatReply:
        import anthropic

        system = "\n\n".join(m["content"] for m in request.messages if m["role"] == "system")
        messages = [{"role": m["role"], "content": m["content"]} for m in request.messages if m["role"] != "system"]
        params = dict(request.params)
        max_tokens = int(params.pop("max_tokens", 1024))
        if system:
            params["system"] = system
        client = self._sdk()
        create = client.messages.create
        with sdk_errors(anthropic, self._api_key, request.timeout_s):
            resp = await create(model=request.model, messages=messages, max_tokens=max_tokens, timeout=request.timeout_s,
                                **split_params(create, params))
        try:
            text = "".join(getattr(b, "text", "") for b in resp.content if getattr(b, "type", "") == "text")
        except (AttributeError, TypeError):
            raise TransientError("bad_response", "response has no content blocks") from None
        return sdk_reply(resp, text, getattr(resp, "stop_reason", None), "input_tokens", "output_tokens")
