"""OpenAI chat completions through the official SDK (also vLLM, llama.cpp, OpenRouter: any ``base_url``).

Generation params pass through to ``chat.completions.create`` (temperature, max_tokens, top_p, seed, stop,
response_format, ...).  Without ``base_url`` in the deployment the SDK's ``OPENAI_BASE_URL`` applies.
"""

from __future__ import annotations

from typing import Any

from metaeval.judges.backends.base import (
    ChatBackend, ChatReply, ChatRequest, PermanentError, TransientError, redact, split_params, status_error,
)


class OpenAIBackend(ChatBackend):
    name = "openai"

    def _make_sdk_client(self) -> Any:
        from openai import AsyncOpenAI

        kwargs: dict[str, Any] = {"api_key": self._api_key, "max_retries": 0, "timeout": self.deployment.limits.timeout_s}
        if self.deployment.base_url:
            kwargs["base_url"] = self.deployment.base_url
        return AsyncOpenAI(**kwargs)

    async def complete(self, request: ChatRequest) -> ChatReply:
        import openai

        client = self._sdk()
        try:
            create = client.chat.completions.create
            resp = await create(
                model=request.model, messages=[dict(m) for m in request.messages], timeout=request.timeout_s,
                **split_params(create, request.params),
            )
        except openai.APITimeoutError:
            raise TransientError("timeout", f"timed out after {request.timeout_s:g}s") from None
        except openai.APIConnectionError as exc:
            raise TransientError("connection", redact(f"connection error: {exc}", self._api_key)) from None
        except openai.APIStatusError as exc:
            raise status_error(exc, self._api_key) from None
        except openai.APIResponseValidationError as exc:
            raise TransientError("bad_response", redact(f"unreadable response: {exc}", self._api_key)) from None
        except TypeError as exc:  # our call does not fit this SDK version: a configuration problem
            raise PermanentError(redact(f"request rejected by the SDK: {exc}", self._api_key)) from None
        except ValueError as exc:  # a 200 whose body is not the expected JSON
            raise TransientError("bad_response", redact(f"unreadable response: {exc}", self._api_key)) from None
        try:
            choice = resp.choices[0]
            text = choice.message.content or ""
        except (AttributeError, IndexError, TypeError):
            raise TransientError("bad_response", "response has no choices[0].message") from None
        usage = getattr(resp, "usage", None)
        return ChatReply(
            text=text,
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            finish_reason=getattr(choice, "finish_reason", None),
            model=getattr(resp, "model", None),
        )
