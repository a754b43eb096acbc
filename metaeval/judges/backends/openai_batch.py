"""OpenAI's Batch API (``deployment.mode: batch``): a JSONL file of chat-completion requests uploaded with
``purpose=batch``, one ``/v1/batches`` job over it, its output and error files read back by ``custom_id``.

Wire shapes (https://platform.openai.com/docs/guides/batch): input line ``{custom_id, method: POST, url:
/v1/chat/completions, body}``; output line ``{id, custom_id, response: {status_code, body}, error}``; a batch
ends as ``completed``, ``expired`` (unfinished requests are in the error file with ``batch_expired``),
``failed`` (the input did not validate), or ``cancelled``.  Grouping, polling, the journal and retries live in
``metaeval.judges.batch``; this module only speaks the wire, through the official SDK (also any compatible
server, e.g. the test server, via ``base_url``).
"""

from __future__ import annotations

import json
from typing import Any

from metaeval.judges.backends.base import ChatReply, ChatRequest, PermanentError, TransientError, register_backend
from metaeval.judges.backends.openai_backend import OpenAIBackend
from metaeval.judges.batch import BatchBackend

ENDPOINT = "/v1/chat/completions"
ENDED = {"completed", "expired", "failed", "cancelled"}


@register_backend
class OpenAIBatchBackend(BatchBackend):
    name = "openai_batch"
    provider = "openai"
    batch_limits = (50_000, 200 * 1024 * 1024)  # requests, bytes per batch input file
    structured_output = True  # the body is the chat-completions body: response_format passes through
    _make_sdk_client = OpenAIBackend._make_sdk_client

    def _line(self, cid: str, request: ChatRequest) -> str:
        body = {"model": request.model, "messages": [dict(m) for m in request.messages], **dict(request.params)}
        return json.dumps({"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": body}, ensure_ascii=False)

    def line_bytes(self, cid: str, request: ChatRequest) -> int:
        return len(self._line(cid, request).encode("utf-8")) + 1

    async def submit(self, group: list[tuple[str, ChatRequest]]) -> str:
        data = "".join(self._line(cid, req) + "\n" for cid, req in group).encode("utf-8")
        client = self._sdk()
        f = await self._call("upload batch file", client.files.create(file=("metaeval-batch.jsonl", data), purpose="batch"))
        b = await self._call("create batch", client.batches.create(
            input_file_id=f.id, endpoint=ENDPOINT, completion_window=self.settings.completion_window,
            metadata={"source": "metaeval"}))
        return str(b.id)

    async def ended(self, batch_id: str) -> bool:
        b = await self._call("poll batch", self._sdk().batches.retrieve(batch_id))
        if b.status == "failed":
            errs = getattr(getattr(b, "errors", None), "data", None) or []
            msg = "; ".join(str(getattr(e, "message", e)) for e in errs)[:300]
            raise PermanentError(f"batch {batch_id} failed validation: {msg or 'no reason given'}")
        self._last = getattr(self, "_last", {})
        self._last[batch_id] = b
        return b.status in ENDED

    async def _file_lines(self, file_id: str | None) -> list[dict[str, Any]]:
        if not file_id:
            return []
        content = await self._call("download batch results", self._sdk().files.content(file_id))
        return [json.loads(line) for line in content.text.splitlines() if line.strip()]

    async def results(self, batch_id: str) -> dict[str, ChatReply | Exception]:
        b = getattr(self, "_last", {}).get(batch_id) or await self._call("poll batch", self._sdk().batches.retrieve(batch_id))
        out: dict[str, ChatReply | Exception] = {}
        for line in await self._file_lines(b.output_file_id) + await self._file_lines(getattr(b, "error_file_id", None)):
            out[line["custom_id"]] = _item(line)
        return out


def _item(line: dict[str, Any]) -> ChatReply | Exception:
    """One output/error-file line -> the reply, or the error its ``complete`` call raises."""
    resp, err = line.get("response"), line.get("error")
    if err:
        code = str(err.get("code", "error"))
        return TransientError("batch_expired" if code == "batch_expired" else "server", f"batch item {code}: {err.get('message', '')}"[:300])
    status = int((resp or {}).get("status_code") or 0)
    body = (resp or {}).get("body") or {}
    if status != 200:
        msg = f"batch item HTTP {status}: {(body.get('error') or {}).get('message', '')}"[:300]
        if status == 429 or status >= 500 or status in (408, 409):
            return TransientError("rate_limit" if status == 429 else "server", msg, status)
        return PermanentError(msg, status)
    try:
        choice = body["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        return TransientError("bad_response", "batch item has no choices[0].message")
    usage = body.get("usage") or {}
    return ChatReply(text=text, input_tokens=int(usage.get("prompt_tokens", 0) or 0),
                     output_tokens=int(usage.get("completion_tokens", 0) or 0),
                     finish_reason=choice.get("finish_reason"), model=body.get("model"))
