"""Anthropic messages through the official SDK.

System messages are joined into the ``system`` field; ``max_tokens`` (required by the API) defaults to 1024.
Without ``base_url`` in the deployment the SDK's ``ANTHROPIC_BASE_URL`` applies.
"""

from __future__ import annotations

from typing import Any

from metaeval.judges.backends.base import (
    ChatBackend, ChatReply, ChatRequest, PermanentError, TransientError, redact, sdk_transport_error, split_params,
)


class AnthropicBackend(ChatBackend):
    name = "anthropic"
    SDK_MODULES = ("anthropic",)

    def _make_sdk_client(self) -> Any:
        from anthropic import AsyncAnthropic

        kwargs: dict[str, Any] = {"api_key": self._api_key, "max_retries": 0, "timeout": self.deployment.limits.timeout_s}
        if self.deployment.base_url:
            kwargs["base_url"] = self.deployment.base_url
        return AsyncAnthropic(**kwargs)

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
        try:
            resp = await create(model=request.model, messages=messages, max_tokens=max_tokens, timeout=request.timeout_s,
                                **split_params(create, params))
        except (anthropic.APITimeoutError, anthropic.APIConnectionError, anthropic.APIStatusError) as exc:
            raise sdk_transport_error(anthropic, exc, self._api_key, f"timed out after {request.timeout_s:g}s") from None
        except anthropic.APIResponseValidationError as exc:
            raise TransientError("bad_response", redact(f"unreadable response: {exc}", self._api_key)) from None
        except TypeError as exc:  # our call does not fit this SDK version: a configuration problem
            raise PermanentError(redact(f"request rejected by the SDK: {exc}", self._api_key)) from None
        except ValueError as exc:
            raise TransientError("bad_response", redact(f"unreadable response: {exc}", self._api_key)) from None
        try:
            text = "".join(getattr(b, "text", "") for b in resp.content if getattr(b, "type", "") == "text")
        except (AttributeError, TypeError):
            raise TransientError("bad_response", "response has no content blocks") from None
        usage = getattr(resp, "usage", None)
        return ChatReply(
            text=text,
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            finish_reason=getattr(resp, "stop_reason", None),
            model=getattr(resp, "model", None),
        )
