"""Provider batch APIs for the wire test server: OpenAI (files + ``/v1/batches``) and Anthropic
(``/v1/messages/batches``), with delays, failed items and expired batches, all in memory.

OpenAI (https://platform.openai.com/docs/api-reference/batch)::

    POST /v1/files  (multipart: file=<JSONL>, purpose=batch)       -> {id: file-..., object: file, ...}
    POST /v1/batches {input_file_id, endpoint, completion_window}  -> {id: batch_..., status: validating, ...}
    GET  /v1/batches/{id}                                          -> status in_progress | completed | expired ...
    GET  /v1/files/{id}/content                                    -> output / error JSONL
    line in:  {custom_id, method: POST, url: /v1/chat/completions, body: {...}}
    line out: {id, custom_id, response: {status_code, request_id, body}, error}

Anthropic (https://docs.anthropic.com/en/api/creating-message-batches)::

    POST /v1/messages/batches {requests: [{custom_id, params}]}  -> {id: msgbatch_..., processing_status: in_progress}
    GET  /v1/messages/batches/{id}                               -> processing_status ended, results_url
    GET  /v1/messages/batches/{id}/results                       -> JSONL {custom_id, result: {type: succeeded,
                                                                    message} | {type: errored, error} | {type: expired}}

A batch ends ``batch_delay_s`` after it was created (its status is computed when asked).  Each item then draws,
from the server's seeded RNG, ``p_item_failed`` (an error line: OpenAI status 500 in the error file, Anthropic
``errored``) and, per batch, ``p_batch_expired`` (the batch expires: a seeded half of its items done, the rest
``batch_expired`` / ``expired``).  Replies come from the server's rule, exactly as the synchronous endpoints
answer, so labels agree between modes.  Counters: ``batches``, ``batch_items``, ``batch_item_failed``,
``batch_item_expired``, ``batch_polls``, ``files``.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Batch:
    id: str
    flavour: str
    items: list[dict]  # {custom_id, body}
    created: float
    ready_at: float
    endpoint: str = "/v1/chat/completions"
    input_file_id: str | None = None
    metadata: dict = field(default_factory=dict)
    results: list[dict] | None = None  # computed once when the batch ends
    expired: bool = False
    output_file_id: str | None = None
    error_file_id: str | None = None


class BatchAPI:
    """Batch state and handlers; ``server`` supplies ``rule``, ``faults``, ``counts``, ``_rng`` and reply builders."""

    def __init__(self, server: Any):
        self.server = server
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}

    def routes(self, app: Any) -> None:
        app.router.add_post("/v1/files", self.openai_upload)
        app.router.add_get("/v1/files/{file_id}/content", self.openai_file_content)
        app.router.add_post("/v1/batches", self.openai_create)
        app.router.add_get("/v1/batches/{batch_id}", self.openai_retrieve)
        app.router.add_post("/v1/messages/batches", self.anthropic_create)
        app.router.add_get("/v1/messages/batches/{batch_id}", self.anthropic_retrieve)
        app.router.add_get("/v1/messages/batches/{batch_id}/results", self.anthropic_results)

    # ------------------------------------------------------------------ shared
    def _count(self, name: str, n: int = 1) -> None:
        self.server.counts[name] += n

    def _new(self, flavour: str, items: list[dict], **kw: Any) -> _Batch:
        now = time.time()
        prefix = "batch_" if flavour == "openai" else "msgbatch_"
        b = _Batch(id=prefix + uuid.uuid4().hex[:24], flavour=flavour, items=items, created=now,
                   ready_at=now + self.server.faults.batch_delay_s, **kw)
        self.batches[b.id] = b
        self._count("batches")
        self._count("batch_items", len(items))
        return b

    def _finish(self, b: _Batch) -> None:
        """Compute every item's outcome once, when the batch has ended."""
        if b.results is not None or time.time() < b.ready_at:
            return
        f, r = self.server.faults, self.server._rng.random
        b.expired = r() < f.p_batch_expired
        out = []
        for i, item in enumerate(b.items):
            if b.expired and r() < 0.5:
                self._count("batch_item_expired")
                out.append({"custom_id": item["custom_id"], "outcome": "expired"})
            elif r() < f.p_item_failed:
                self._count("batch_item_failed")
                out.append({"custom_id": item["custom_id"], "outcome": "failed"})
            else:
                body = item["body"]
                messages = list(body.get("messages") or [])
                if b.flavour == "anthropic" and body.get("system"):
                    messages = [{"role": "system", "content": body["system"]}] + messages
                self._count("ok")
                out.append({"custom_id": item["custom_id"], "outcome": "ok", "text": self.server.rule(messages),
                            "body": body})
        b.results = out

    @staticmethod
    def _json(obj: Any, status: int = 200) -> Any:
        from aiohttp import web

        return web.json_response(obj, status=status)

    # ------------------------------------------------------------------ OpenAI
    async def openai_upload(self, request: Any) -> Any:
        reader = await request.multipart()
        data, purpose, filename = b"", None, "batch.jsonl"
        async for part in reader:
            if part.name == "file":
                filename = part.filename or filename
                data = await part.read()
            elif part.name == "purpose":
                purpose = (await part.text()).strip()
        if purpose != "batch":
            return self._json({"error": {"message": f"purpose must be batch, got {purpose!r}", "type": "invalid_request_error"}}, 400)
        fid = "file-" + uuid.uuid4().hex[:24]
        self.files[fid] = bytes(data)
        self._count("files")
        return self._json({"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                           "filename": filename, "purpose": "batch", "status": "processed"})

    async def openai_create(self, request: Any) -> Any:
        body = await request.json()
        fid = body.get("input_file_id")
        if fid not in self.files:
            return self._json({"error": {"message": f"no such file {fid}", "type": "invalid_request_error"}}, 404)
        if body.get("endpoint") != "/v1/chat/completions":
            return self._json({"error": {"message": "endpoint must be /v1/chat/completions", "type": "invalid_request_error"}}, 400)
        items, seen = [], set()
        for n, line in enumerate(self.files[fid].decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            obj = json.loads(line)
            cid = obj.get("custom_id")
            if not cid or cid in seen or obj.get("url") != "/v1/chat/completions" or obj.get("method") != "POST":
                return self._json({"error": {"message": f"line {n}: bad or duplicate custom_id/url/method", "type": "invalid_request_error"}}, 400)
            seen.add(cid)
            items.append({"custom_id": cid, "body": obj["body"]})
        b = self._new("openai", items, input_file_id=fid, metadata=dict(body.get("metadata") or {}))
        return self._json(self._openai_obj(b))

    def _openai_obj(self, b: _Batch) -> dict:
        self._finish(b)
        ended = b.results is not None
        if ended and b.output_file_id is None:
            ok, err = [], []
            for res in b.results:
                if res["outcome"] == "ok":
                    body = self.server.openai_reply(res["body"], res["text"])
                    ok.append({"id": "batch_req_" + uuid.uuid4().hex[:16], "custom_id": res["custom_id"],
                               "response": {"status_code": 200, "request_id": uuid.uuid4().hex, "body": body}, "error": None})
                elif res["outcome"] == "failed":
                    err.append({"id": "batch_req_" + uuid.uuid4().hex[:16], "custom_id": res["custom_id"],
                                "response": {"status_code": 500, "request_id": uuid.uuid4().hex,
                                             "body": {"error": {"message": "internal error (injected)", "type": "server_error"}}},
                                "error": None})
                else:
                    err.append({"id": "batch_req_" + uuid.uuid4().hex[:16], "custom_id": res["custom_id"], "response": None,
                                "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
            if ok:
                b.output_file_id = "file-" + uuid.uuid4().hex[:24]
                self.files[b.output_file_id] = "".join(json.dumps(x) + "\n" for x in ok).encode()
            if err:
                b.error_file_id = "file-" + uuid.uuid4().hex[:24]
                self.files[b.error_file_id] = "".join(json.dumps(x) + "\n" for x in err).encode()
        done = sum(1 for r in b.results or [] if r["outcome"] == "ok")
        status = ("expired" if b.expired else "completed") if ended else "in_progress"
        return {
            "id": b.id, "object": "batch", "endpoint": b.endpoint, "errors": None, "input_file_id": b.input_file_id,
            "completion_window": "24h", "status": status, "output_file_id": b.output_file_id,
            "error_file_id": b.error_file_id, "created_at": int(b.created), "in_progress_at": int(b.created),
            "expires_at": int(b.created + 86400), "completed_at": int(b.ready_at) if ended and not b.expired else None,
            "expired_at": int(b.ready_at) if b.expired else None, "failed_at": None, "cancelled_at": None,
            "request_counts": {"total": len(b.items), "completed": done, "failed": len(b.results or []) - done if ended else 0},
            "metadata": b.metadata,
        }

    async def openai_retrieve(self, request: Any) -> Any:
        b = self.batches.get(request.match_info["batch_id"])
        if b is None or b.flavour != "openai":
            return self._json({"error": {"message": "no such batch", "type": "invalid_request_error"}}, 404)
        self._count("batch_polls")
        return self._json(self._openai_obj(b))

    async def openai_file_content(self, request: Any) -> Any:
        from aiohttp import web

        data = self.files.get(request.match_info["file_id"])
        if data is None:
            return self._json({"error": {"message": "no such file", "type": "invalid_request_error"}}, 404)
        return web.Response(body=data, content_type="application/octet-stream")

    # ------------------------------------------------------------------ Anthropic
    async def anthropic_create(self, request: Any) -> Any:
        body = await request.json()
        reqs = body.get("requests")
        if not isinstance(reqs, list) or not reqs:
            return self._json({"type": "error", "error": {"type": "invalid_request_error", "message": "requests: a non-empty list"}}, 400)
        ids = [r.get("custom_id") for r in reqs]
        if len(set(ids)) != len(ids) or not all(isinstance(i, str) and 0 < len(i) <= 64 for i in ids):
            return self._json({"type": "error", "error": {"type": "invalid_request_error", "message": "custom_id: unique, 1-64 characters"}}, 400)
        b = self._new("anthropic", [{"custom_id": r["custom_id"], "body": r["params"]} for r in reqs])
        return self._json(self._anthropic_obj(b, request))

    def _anthropic_obj(self, b: _Batch, request: Any) -> dict:
        self._finish(b)
        ended = b.results is not None
        counts = {"processing": 0 if ended else len(b.items), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for res in b.results or []:
            counts[{"ok": "succeeded", "failed": "errored", "expired": "expired"}[res["outcome"]]] += 1
        iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))  # noqa: E731
        return {
            "id": b.id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts, "ended_at": iso(b.ready_at) if ended else None, "created_at": iso(b.created),
            "expires_at": iso(b.created + 86400), "archived_at": None, "cancel_initiated_at": None,
            "results_url": f"{self.server.url}/v1/messages/batches/{b.id}/results" if ended else None,
        }

    async def anthropic_retrieve(self, request: Any) -> Any:
        b = self.batches.get(request.match_info["batch_id"])
        if b is None or b.flavour != "anthropic":
            return self._json({"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}}, 404)
        self._count("batch_polls")
        return self._json(self._anthropic_obj(b, request))

    async def anthropic_results(self, request: Any) -> Any:
        from aiohttp import web

        b = self.batches.get(request.match_info["batch_id"])
        if b is None or b.flavour != "anthropic":
            return self._json({"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}}, 404)
        self._finish(b)
        if b.results is None:
            return self._json({"type": "error", "error": {"type": "invalid_request_error", "message": "batch has not ended"}}, 400)
        lines = []
        for res in b.results:
            if res["outcome"] == "ok":
                result = {"type": "succeeded", "message": self.server.anthropic_reply(res["body"], res["text"])}
            elif res["outcome"] == "failed":
                result = {"type": "errored", "error": {"type": "error", "error": {"type": "api_error", "message": "internal error (injected)"}}}
            else:
                result = {"type": "expired"}
            lines.append(json.dumps({"custom_id": res["custom_id"], "result": result}))
        return web.Response(text="\n".join(lines) + "\n", content_type="application/binary")



