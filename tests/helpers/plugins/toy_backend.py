"""A toy judge provider, outside the package: one file, registered by ``@register_backend`` on import.

It speaks the OpenAI chat-completions wire format with plain ``aiohttp`` (no provider SDK) to any server at the
deployment's ``base_url`` (the tests point it at ``metaeval.testing.server.ChatTestServer``)."""

from __future__ import annotations

from typing import Any

from metaeval.judges.backends.base import ChatBackend, ChatReply, ChatRequest, TransientError, register_backend


@register_backend
class ToyHTTPBackend(ChatBackend):
    name = "toy_http"
    http = True  # calls a server over HTTP: replicas: auto may spread it over actors

    def _make_sdk_client(self) -> Any:
        import aiohttp

        return aiohttp.ClientSession(headers={"authorization": f"Bearer {self._api_key}"},
                                     timeout=aiohttp.ClientTimeout(total=self.deployment.limits.timeout_s))

    async def complete(self, request: ChatRequest) -> ChatReply:
        import aiohttp

        body = {"model": request.model, "messages": [dict(m) for m in request.messages], **dict(request.params)}
        try:
            async with self._sdk().post(f"{self.deployment.base_url}/chat/completions", json=body) as resp:
                if resp.status != 200:
                    raise TransientError("server", f"toy backend: HTTP {resp.status}", resp.status)
                data = await resp.json()
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TransientError("connection", f"toy backend: {type(exc).__name__}") from None
        usage = data.get("usage") or {}
        return ChatReply(text=data["choices"][0]["message"]["content"], input_tokens=int(usage.get("prompt_tokens", 0)),
                         output_tokens=int(usage.get("completion_tokens", 0)), model=data.get("model"))
