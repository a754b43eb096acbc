"""OpenAI chat completions through the official SDK (also vLLM, llama.cpp, OpenRouter: any ``base_url``).

Generation params pass through to ``chat.completions.create`` (temperature, max_tokens, top_p, seed, stop,
response_format, ...).  Without ``base_url`` in the deployment the SDK's ``OPENAI_BASE_URL`` applies.

Fast path (the per-call cost at the ceiling, issue 15): ``chat.completions.create`` first runs the SDK's typed
``transform`` over the whole body (about 0.5 ms of CPU per call on a 4 KB prompt, more than all of metaeval's own
per-call work), which for a body of plain JSON values (strings, numbers, booleans, null, lists, string-keyed
objects; metaeval's messages are role/content strings) returns it unchanged, since the chat-completion params
declare no aliases or formats.  For such a body the backend sends the same JSON through the SDK's documented
low-level ``client.post("/chat/completions", cast_to=ChatCompletion)`` (same HTTP client, auth, timeout, errors
and response model), otherwise - or with ``METAEVAL_OPENAI_FAST_PATH=0`` - through ``create``.
``tests/integration/test_backends_contract.py`` checks that both paths put the same body on the wire.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from metaeval.judges.backends.base import (
    ChatBackend, ChatReply, ChatRequest, TransientError, register_backend, sdk_errors, sdk_reply, split_params,
)

_SCALARS = (str, int, float, bool, type(None))


def plain_json(value: Any) -> bool:
    """``value`` is made of JSON scalars, lists and string-keyed dicts only (what the SDK's transform leaves as is)."""
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain_json(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain_json(v) for v in value)
    return False


def fast_path_enabled() -> bool:
    return os.environ.get("METAEVAL_OPENAI_FAST_PATH", "1").strip().lower() not in ("0", "false", "no", "off")


@functools.lru_cache(maxsize=1)
def _sdk_has_security() -> bool:
    """Whether this SDK's request options carry per-request ``security`` (``create`` then asks for bearer auth)."""
    try:
        from openai._models import FinalRequestOptions
    except ImportError:  # pragma: no cover - an SDK without that module has no per-request security either
        return False
    return "security" in getattr(FinalRequestOptions, "model_fields", {})


def _post_options(timeout_s: float) -> dict[str, Any]:
    """``create``'s request options: its timeout and, where the SDK has per-request security, bearer auth only."""
    opts: dict[str, Any] = {"timeout": timeout_s}
    if _sdk_has_security():
        opts["security"] = {"bearer_auth": True}
    return opts


@register_backend
class OpenAIBackend(ChatBackend):
    name = "openai"
    SDK_MODULES = ("openai", "openai.types.chat")
    http = True
    structured_output = True  # OpenAI's json_schema (also vLLM) and llama.cpp's json_object schema
    batch_backend = "openai_batch"

    def __init__(self, deployment: Any, api_key: str):
        super().__init__(deployment, api_key)
        #: plain-JSON bodies go through ``client.post`` (see the module docstring)
        self._fast = fast_path_enabled()

    def _make_sdk_client(self) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(**self._sdk_kwargs())

    async def complete(self, request: ChatRequest) -> ChatReply:
        import openai

        client = self._sdk()
        messages = [dict(m) for m in request.messages]
        with sdk_errors(openai, self._api_key, request.timeout_s):
            if self._fast and "stream" not in request.params and plain_json(messages) and plain_json(dict(request.params)):
                from openai.types.chat import ChatCompletion

                body = {"model": request.model, "messages": messages, **request.params}
                resp = await client.post("/chat/completions", cast_to=ChatCompletion, body=body,
                                         options=_post_options(request.timeout_s))
            else:
                create = client.chat.completions.create
                resp = await create(model=request.model, messages=messages, timeout=request.timeout_s,
                                    **split_params(create, request.params))
        try:
            choice = resp.choices[0]
            text = choice.message.content or ""
        except (AttributeError, IndexError, TypeError):
            raise TransientError("bad_response", "response has no choices[0].message") from None
        return sdk_reply(resp, text, getattr(choice, "finish_reason", None), "prompt_tokens", "completion_tokens")
