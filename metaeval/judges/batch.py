"""Provider batch APIs as a chat backend (``deployment.mode: batch``): the same calls, half the price, hours later.

OpenAI's Batch API and Anthropic's Message Batches price every request at 50% of the synchronous price (both
providers' published discount) in exchange for an answer within a completion window (24 h).  A sweep's judge
calls are exactly that workload: thousands of independent requests with no latency need.

How it fits: ``BatchBackend.complete(request)`` is an ordinary backend call, so the client's cache, single flight,
retries, re-asks, parsing and cost accounting stay the same (``ChatClient`` prices the reply with
``Deployment.effective_prices``: the batch prices).  Underneath, a ``BatchCollector`` (one per event loop):

1. gives the request a deterministic ``custom_id`` (``custom_id()``: a hash of model, messages and params);
2. groups pending requests into one batch until ``window_s`` has passed since the first one or the group reaches
   ``max_requests`` / ``max_bytes`` (kept under the provider's limits, the batch backend's ``batch_limits``: OpenAI
   50,000 requests / 200 MB per file, Anthropic 100,000 requests / 256 MB);
3. submits the group (the provider's ``submit``), then writes ``{event: submitted, batch, custom_ids}`` to the
   **journal** (append-only JSONL, flushed and fsynced per line);
4. polls the batch with backoff (``poll_s`` x ``poll_backoff``^k, capped at ``max_poll_s``) until it has ended,
   downloads its results, writes ``{event: ended, batch, failed}`` to the journal and resolves each request by
   its ``custom_id``;
5. a failed or expired item raises ``TransientError`` in its ``complete`` call: the client backs off and calls
   again, and the item goes into a *new* batch (the journal knows it failed in the old one); a request rejected
   as invalid (HTTP 4xx inside the batch) raises ``PermanentError``.

Resume: a restarted sweep (even after ``kill -9``) reads the journal; a request whose ``custom_id`` is in a
submitted batch that has not ended - or ended with that item done - is attached to that batch: the collector
polls it (or downloads its results again) instead of submitting the request again.  Replies already in the
response cache never reach the backend at all.  The one window that can still resubmit: a kill between the
provider accepting a batch and the journal line being written (milliseconds).

The journal lives at ``batch.journal`` or, in a sweep, beside the response cache
(``<cache dir>/batches/<deployment>.jsonl``; ``metaeval.judges.llm``).  Limits: in batch mode
``limits.concurrency`` is how many requests may wait in batches at once (set it high, e.g. 2000) and
``rpm``/``tpm`` should be null (they bound the synchronous API).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
import weakref
from abc import abstractmethod
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from metaeval.errors import ConfigError
from metaeval.judges.backends.base import (ChatBackend, ChatReply, ChatRequest, PermanentError, TransientError,
                                           sdk_transport_error)

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.judges.config import Deployment

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class BatchSettings:
    """``deployment.batch``; every field optional."""

    max_requests: int = 5000
    max_bytes: int = 100 * 1024 * 1024
    window_s: float = 2.0
    poll_s: float = 5.0
    max_poll_s: float = 120.0
    poll_backoff: float = 1.5
    completion_window: str = "24h"
    journal: str | None = None
    #: consecutive failed polls (network, 5xx) before the batch's requests fail (transient: retried in a new batch)
    max_poll_errors: int = 10

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any] | None, backend: "type[BatchBackend]",
                  where: str = "deployment.batch") -> "BatchSettings":
        """Checked settings for the batch backend class ``backend`` (its ``batch_limits`` cap ``max_requests`` and
        ``max_bytes``; None: no provider cap known)."""
        obj = dict(obj or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise ConfigError(f"{where}: unknown field(s) {unknown}; known: {sorted(known)}")
        try:
            s = cls(**obj)
        except TypeError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        provider = backend.provider
        cap_n, cap_b = backend.batch_limits or (float("inf"), float("inf"))
        if not 1 <= s.max_requests <= cap_n:
            raise ConfigError(f"{where}.max_requests must be 1..{cap_n} for {provider}, got {s.max_requests}")
        if not 1 <= s.max_bytes <= cap_b:
            raise ConfigError(f"{where}.max_bytes must be 1..{cap_b} for {provider}, got {s.max_bytes}")
        for name in ("window_s", "poll_s", "max_poll_s"):
            if getattr(s, name) < 0:
                raise ConfigError(f"{where}.{name} must be >= 0, got {getattr(s, name)}")
        if s.poll_backoff < 1:
            raise ConfigError(f"{where}.poll_backoff must be >= 1, got {s.poll_backoff}")
        return s


def custom_id(request: ChatRequest) -> str:
    """The request's id inside a batch: ``r`` + 40 hex digits of SHA-256 over model, messages and params
    (deterministic, so a restarted sweep recognises its own requests; fits Anthropic's ``[A-Za-z0-9_-]{1,64}``)."""
    blob = json.dumps({"model": request.model, "messages": [dict(m) for m in request.messages],
                       "params": dict(request.params)}, sort_keys=True, ensure_ascii=False, default=str)
    return "r" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:40]


class BatchJournal:
    """Append-only JSONL of submitted and ended batches (one file per deployment); read once at start."""

    def __init__(self, path: str | os.PathLike | None):
        self.path = Path(path) if path else None
        #: batch id -> {"custom_ids": set, "ended": bool, "failed": set}
        self.batches: dict[str, dict[str, Any]] = {}
        #: custom id -> batch ids containing it, oldest first
        self.by_id: dict[str, list[str]] = {}
        if self.path is not None and self.path.exists():
            bad: list[dict[str, Any]] = []
            for n, raw in enumerate(self.path.read_bytes().split(b"\n"), 1):
                if not raw.strip():
                    continue
                try:  # line by line: one bad byte costs one line, never the whole journal
                    self._apply(json.loads(raw.decode("utf-8")))
                except (ValueError, KeyError, TypeError, AttributeError) as exc:  # ValueError: JSON and UTF-8
                    bad.append({"line": n, "reason": f"{type(exc).__name__}: {str(exc)[:120]}",
                                "raw": raw.decode("utf-8", "replace")})
            if bad:
                self._set_aside(bad)

    @property
    def quarantine_path(self) -> Path:
        assert self.path is not None
        return self.path.with_name(self.path.name + ".quarantine")

    def _set_aside(self, bad: list[dict[str, Any]]) -> None:
        """Copy unreadable lines to ``<journal>.quarantine`` (each once) and skip them; the journal itself is not
        rewritten (other processes of the deployment may be appending to it).  Their batches' requests are simply
        sent again if needed."""
        q = self.quarantine_path
        seen: set[str] = set()
        if q.exists():
            for raw in q.read_bytes().split(b"\n"):
                try:
                    seen.add(json.loads(raw)["raw"])
                except (ValueError, KeyError, TypeError):
                    continue
        new = [b for b in bad if b["raw"] not in seen]
        if new:
            try:
                from metaeval.layout import open_nofollow

                with os.fdopen(open_nofollow(q, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "a", encoding="utf-8") as fh:
                    for b in new:
                        fh.write(json.dumps({**b, "source": str(self.path)}, ensure_ascii=False) + "\n")
            except OSError as exc:
                log.warning("batch journal %s: could not write %s (%s)", self.path, q, exc)
        lines = ", ".join(str(b["line"]) for b in bad[:10])
        log.warning("%s: %d unreadable batch journal line(s) (line %s: %s) set aside in %s and skipped",
                    self.path, len(bad), lines, bad[0]["reason"], q)

    def _apply(self, rec: Mapping[str, Any]) -> None:
        bid = rec["batch"]
        if rec["event"] == "submitted":
            self.batches[bid] = {"custom_ids": set(rec["custom_ids"]), "ended": False, "failed": set()}
            for cid in rec["custom_ids"]:
                self.by_id.setdefault(cid, []).append(bid)
        elif rec["event"] == "ended" and bid in self.batches:
            self.batches[bid]["ended"] = True
            self.batches[bid]["failed"] = set(rec.get("failed", ()))

    def write(self, rec: dict[str, Any]) -> None:
        self._apply(rec)
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        from metaeval.layout import open_nofollow

        with os.fdopen(open_nofollow(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "a", encoding="utf-8") as fh:
            fh.write(json.dumps({**rec, "t": round(time.time(), 3)}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def lookup(self, cid: str) -> str | None:
        """The batch a request should wait for: the newest holding it that has not ended, or ended with it done."""
        for bid in reversed(self.by_id.get(cid, [])):
            b = self.batches[bid]
            if not b["ended"] or cid not in b["failed"]:
                return bid
        return None

    def pending(self) -> list[str]:
        return [bid for bid, b in self.batches.items() if not b["ended"]]


class BatchCollector:
    """Groups, submits, polls and resolves the requests of one backend on one event loop (see module docstring)."""

    def __init__(self, backend: "BatchBackend"):
        self.backend = backend
        self.settings = backend.settings
        self.journal = BatchJournal(self.settings.journal)
        self._futures: dict[str, list[asyncio.Future]] = {}
        self._group: list[tuple[str, ChatRequest]] = []
        self._group_bytes = 0
        self._timer: asyncio.Task | None = None
        self._pollers: dict[str, asyncio.Task] = {}
        self._results: dict[str, dict[str, ChatReply | Exception]] = {}
        self._tasks: set[asyncio.Task] = set()
        #: what this process did (tests and the sweep log read it)
        self.stats = {"submitted_batches": 0, "submitted_requests": 0, "resumed_batches": 0, "polls": 0}

    async def complete(self, request: ChatRequest) -> ChatReply:
        cid = custom_id(request)
        fut = asyncio.get_running_loop().create_future()
        waiting = cid in self._futures
        self._futures.setdefault(cid, []).append(fut)
        if not waiting:
            bid = self.journal.lookup(cid)
            if bid is not None:
                self._attach(bid)
            else:
                self._add(cid, request)
        return await fut

    # ------------------------------------------------------------------ grouping and submission
    def _add(self, cid: str, request: ChatRequest) -> None:
        size = self.backend.line_bytes(cid, request)
        if self._group and (len(self._group) >= self.settings.max_requests or self._group_bytes + size > self.settings.max_bytes):
            self._flush()
        self._group.append((cid, request))
        self._group_bytes += size
        if len(self._group) >= self.settings.max_requests:
            self._flush()
        elif self._timer is None:
            self._timer = self._spawn(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.settings.window_s)
        self._timer = None
        self._flush()

    def _flush(self) -> None:
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
            self._timer = None
        group, self._group, self._group_bytes = self._group, [], 0
        if group:
            self._spawn(self._submit(group))

    async def _submit(self, group: list[tuple[str, ChatRequest]]) -> None:
        try:
            bid = await self.backend.submit(group)
        except Exception as exc:  # noqa: BLE001 - every waiting request must hear about it, never hang
            err = exc if isinstance(exc, (TransientError, PermanentError)) else TransientError(
                "bad_response", f"batch submission failed: {type(exc).__name__}: {exc}"[:300])
            for cid, _ in group:
                self._fail(cid, err)
            return
        self.journal.write({"event": "submitted", "batch": bid, "provider": self.backend.name,
                            "custom_ids": [cid for cid, _ in group]})
        self.stats["submitted_batches"] += 1
        self.stats["submitted_requests"] += len(group)
        log.info("batch %s submitted: %d request(s)", bid, len(group))
        self._attach(bid, resumed=False)

    # ------------------------------------------------------------------ polling and results
    def _attach(self, bid: str, resumed: bool = True) -> None:
        if bid in self._results:
            self._resolve(bid)
        elif bid not in self._pollers:
            if resumed:
                self.stats["resumed_batches"] += 1
                log.info("batch %s: resuming (from the journal)", bid)
            self._pollers[bid] = self._spawn(self._poll(bid))

    async def _poll(self, bid: str) -> None:
        try:
            await self._poll_until_ended(bid)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug or an odd reply must fail the waiting requests, not hang them
            self._pollers.pop(bid, None)
            err = TransientError("bad_response", f"batch {bid}: {type(exc).__name__}: {exc}"[:300])
            for cid in list(self.journal.batches.get(bid, {}).get("custom_ids", ())):
                self._fail(cid, err)

    async def _poll_until_ended(self, bid: str) -> None:
        s = self.settings
        delay, errors = s.poll_s, 0
        while True:
            try:
                self.stats["polls"] += 1
                ended = await self.backend.ended(bid)
                errors = 0
            except PermanentError as exc:  # the batch is unknown or failed validation: its requests fail
                self._end(bid, {cid: exc for cid in self.journal.batches.get(bid, {}).get("custom_ids", ())})
                return
            except TransientError as exc:
                errors += 1
                if errors >= s.max_poll_errors:
                    self._end(bid, {cid: exc for cid in self.journal.batches.get(bid, {}).get("custom_ids", ())},
                              write=False)  # not ended for the journal: a rerun polls it again
                    return
                ended = False
            if ended:
                break
            await asyncio.sleep(delay)
            delay = min(s.max_poll_s, max(delay, 0.05) * s.poll_backoff)
        try:
            results = await self.backend.results(bid)
        except (TransientError, PermanentError) as exc:
            self._end(bid, {cid: exc for cid in self.journal.batches.get(bid, {}).get("custom_ids", ())}, write=False)
            return
        expected = self.journal.batches.get(bid, {}).get("custom_ids", set(results))
        for cid in expected:
            results.setdefault(cid, TransientError("batch_missing", f"batch {bid}: no result for {cid}"))
        self._end(bid, results)

    def _end(self, bid: str, results: dict[str, ChatReply | Exception], write: bool = True) -> None:
        failed = sorted(cid for cid, r in results.items() if isinstance(r, Exception))
        if write:
            self.journal.write({"event": "ended", "batch": bid, "failed": failed})
            self._results[bid] = results
        self._pollers.pop(bid, None)
        log.info("batch %s ended: %d done, %d failed", bid, len(results) - len(failed), len(failed))
        for cid, res in results.items():
            if isinstance(res, Exception):
                self._fail(cid, res)
            else:
                self._done(cid, res)

    def _resolve(self, bid: str) -> None:
        for cid, res in self._results[bid].items():
            if cid in self._futures:
                self._fail(cid, res) if isinstance(res, Exception) else self._done(cid, res)

    def _done(self, cid: str, reply: ChatReply) -> None:
        for fut in self._futures.pop(cid, []):
            if not fut.done():
                fut.set_result(reply)

    def _fail(self, cid: str, exc: Exception) -> None:
        for fut in self._futures.pop(cid, []):
            if not fut.done():
                fut.set_exception(_copy(exc))

    def _spawn(self, coro: Any) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()


def _copy(exc: Exception) -> Exception:
    """A fresh exception per waiting future (one instance raised in several tasks shares its traceback)."""
    if isinstance(exc, TransientError):
        return TransientError(exc.kind, str(exc), exc.status, exc.retry_after)
    if isinstance(exc, PermanentError):
        return PermanentError(str(exc), exc.status)
    return exc


class BatchBackend(ChatBackend):
    """A chat backend whose ``complete`` goes through a provider's batch API; subclasses implement the wire:
    ``submit(group) -> batch id``, ``ended(batch id) -> bool``, ``results(batch id) -> {custom id: reply or
    error}`` and ``line_bytes`` (the size of one request in the batch input, for ``max_bytes``)."""

    provider = "base"
    is_batch = True
    #: the provider's caps on one batch: (requests, bytes of the batch input); None: none known
    batch_limits: tuple[int, int] | None = None

    def __init__(self, deployment: Any, api_key: str):
        super().__init__(deployment, api_key)
        self.settings = BatchSettings.from_dict(getattr(deployment, "batch", None), type(self),
                                                f"deployment {getattr(deployment, 'name', '?')}: batch")
        self._collectors: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, BatchCollector]" = weakref.WeakKeyDictionary()

    def collector(self) -> BatchCollector:
        loop = asyncio.get_running_loop()
        col = self._collectors.get(loop)
        if col is None:
            col = self._collectors[loop] = BatchCollector(self)
        return col

    async def complete(self, request: ChatRequest) -> ChatReply:
        return await self.collector().complete(request)

    async def _call(self, what: str, coro: Any) -> Any:
        """Await one batch-API call, mapping the provider SDK's errors (the SDK module is named ``provider``) onto
        transient / permanent errors with the key redacted."""
        import importlib

        sdk = importlib.import_module(self.provider)
        try:
            return await coro
        except sdk.APIError as exc:
            mapped = sdk_transport_error(sdk, exc, self._api_key, f"{what}: timed out", f"{what}: ")
            if mapped is None:
                raise
            raise mapped from None

    async def aclose(self) -> None:
        col = self._collectors.pop(asyncio.get_running_loop(), None)
        if col is not None:
            await col.aclose()
        await super().aclose()

    @abstractmethod
    def line_bytes(self, cid: str, request: ChatRequest) -> int: ...

    @abstractmethod
    async def submit(self, group: list[tuple[str, ChatRequest]]) -> str: ...

    @abstractmethod
    async def ended(self, batch_id: str) -> bool: ...

    @abstractmethod
    async def results(self, batch_id: str) -> dict[str, ChatReply | Exception]: ...


def journal_beside_cache(deployment: "Deployment", cache: Any) -> "Deployment":
    """A batch-mode deployment with ``batch.journal`` defaulted to ``<cache dir>/batches/<name>.jsonl`` (so a sweep's
    journal lives in its results folder); other deployments are returned unchanged."""
    import dataclasses

    if deployment.mode != "batch":
        return deployment
    batch = dict(deployment.batch or {})
    path = getattr(cache, "path", cache)
    if batch.get("journal") or not isinstance(path, (str, os.PathLike)):
        return deployment
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in str(deployment.name or deployment.model))
    batch["journal"] = str(Path(path).resolve().parent / "batches" / f"{safe}.jsonl")
    return dataclasses.replace(deployment, batch=batch)
