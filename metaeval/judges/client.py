"""``ChatClient``: the one place where caching, limits, retries, accounting and tracing happen.

Flow of ``await client.complete(messages, prompt=...)``::

    cache lookup (hit -> trace with cache_hit=True, no request)
      -> single flight: the same cache key already on the wire -> wait for it, then read the cache
      -> for attempt in 0..max_retries:
             rate limiter slot (concurrency, rpm, tpm) -> backend.complete(request)
             TransientError -> record RetryEvent, sleep backoff *outside* the slot, try again
             PermanentError -> stop
      -> cache put (successful replies only) -> CallTrace

Backoff before retry ``k`` (0-based): ``d = max(retry_after or 0, base * 2**k * (1 + jitter * u))`` with
``u ~ U(0,1)`` from a seeded ``random.Random``, then ``d = min(d, max_backoff_s)``: bounded, jittered, and
honouring the server's Retry-After up to the cap (tests shorten waits through ``max_backoff_s``).

Every request has a wall-clock deadline of ``limits.timeout_s`` (connect and every read together; the SDK's own
timeout is per read).  Processes sharing one cache file claim a request before sending it
(``ResponseCache.claim``: a lease row in the same SQLite file); a request another process holds is waited for
(polling the file) and its reply read from the cache, so each distinct request is sent once.

Offline replay (``METAEVAL_OFFLINE=1``, set by ``metaeval sweep --offline``): a cache miss raises ``CallFailed``
("offline: no cached reply ...") and nothing is sent.  A reply that echoes the API key has the key (and every
8+-character fragment of it) redacted in *every* field (text, finish/stop reason, model name) before it is cached,
traced or returned (``metaeval.security.redaction.redact_reply``), and the HTTP libraries' loggers get the same
redaction (``protect_loggers``).  A reply longer than ``MAX_REPLY_CHARS`` is stored cut, with a marker, and the
call fails (its tokens are still counted): a label is never parsed from a cut reply.

When retries run out the call raises ``CallFailed`` carrying a trace with ``error`` set, so the judge can mark
its items FAILED with the reason.  The API key is read once from the environment at construction (a missing
key is a ``ConfigError`` before any work), handed to the backend, and scrubbed from every error message.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import weakref
from typing import Any, Mapping, Sequence

from metaeval.errors import ConfigError, MetaevalError
from metaeval.judges.backends import ChatBackend, ChatRequest, PermanentError, TransientError, make_backend
from metaeval.judges.backends.base import redact
from metaeval.judges.cache import ResponseCache, cache_key
from metaeval.judges.config import NO_KEY, Deployment
from metaeval.judges.limits import RateLimiter
from metaeval.judges.trace import CallTrace, ClientStats, RetryEvent, utc_now
from metaeval.security.redaction import MAX_REPLY_CHARS, cap_reply, protect_loggers, redact_reply


def offline_mode() -> bool:
    """``METAEVAL_OFFLINE`` set to 1/true/yes: replay from the response cache only (inherited by local Ray actors)."""
    return os.environ.get("METAEVAL_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def warm_up(obj: Any) -> None:
    """``obj.warm()`` when ``obj`` has one (a backend or client that imports its SDK ahead of the first request)."""
    warm = getattr(obj, "warm", None)
    if warm is not None:
        warm()


class CallFailed(MetaevalError):
    """A call that failed permanently or ran out of retries; ``trace.error`` says why."""

    def __init__(self, message: str, trace: CallTrace):
        super().__init__(message)
        self.trace = trace


class ChatClient:
    def __init__(
        self,
        deployment: Deployment | Mapping[str, Any],
        *,
        cache: ResponseCache | str | None = None,
        backend: ChatBackend | None = None,
        seed: int = 0,
        offline: bool | None = None,
    ):
        self.deployment = deployment if isinstance(deployment, Deployment) else Deployment.from_dict(deployment)
        #: replay only: a cache miss fails the call instead of sending it (``METAEVAL_OFFLINE=1``, ``sweep --offline``)
        self.offline = offline_mode() if offline is None else bool(offline)
        if self.offline and not os.environ.get(self.deployment.api_key_env or "", "").strip():
            key = NO_KEY  # a replay sends nothing: it needs no key (TREC AutoJudge replays run without one)
        else:
            key = self.deployment.api_key()  # ConfigError now, before any work
            if key != NO_KEY and not key.isascii():  # an HTTP header carries ASCII only: every call would fail
                raise ConfigError(f"deployment {self.deployment.name!r}: environment variable "
                                  f"{self.deployment.api_key_env} holds non-ASCII characters; an API key is ASCII "
                                  "(a pasted quote or dash?): set it again")
        self._secret = key
        if key and key != NO_KEY:
            protect_loggers(key)  # httpx/httpcore/openai/anthropic DEBUG records print headers a server may fill
        self.backend = backend or make_backend(self.deployment, key)
        self.cache = ResponseCache(cache) if isinstance(cache, str) else cache
        self._owns_cache = isinstance(cache, str)  # opened here from a path: closed by aclose()
        self.revision = getattr(self.deployment, "revision", None)
        check = getattr(self.cache, "check_endpoint", None)
        if check is not None:  # warn when this deployment name pointed at another server before
            check(self.deployment.name, self.deployment.base_url)
        self.stats = ClientStats()
        #: the most characters of one reply that are kept (``metaeval.security.redaction.MAX_REPLY_CHARS``)
        self.max_reply_chars = MAX_REPLY_CHARS
        self._rng = random.Random(seed)
        self._prepared: Any = None  # the event loop whose backend client is built (``_within_deadline``)
        self._limiters: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RateLimiter]" = weakref.WeakKeyDictionary()
        #: per event loop: cache key -> future done when the call holding that key finishes (single flight)
        self._inflight: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Future]]" = weakref.WeakKeyDictionary()

    # ------------------------------------------------------------------ helpers
    def _limiter(self) -> RateLimiter:
        loop = asyncio.get_running_loop()
        lim = self._limiters.get(loop)
        if lim is None:
            lm = self.deployment.limits
            lim = self._limiters[loop] = RateLimiter(lm.concurrency, lm.rpm, lm.tpm)
        return lim

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        lm = self.deployment.limits
        expo = lm.backoff_base_s * (2**attempt) * (1.0 + lm.jitter * self._rng.random())
        return min(max(retry_after or 0.0, expo), lm.max_backoff_s)

    def _estimate_tokens(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens to reserve against ``tpm``: the messages (``config.estimate_tokens``) plus ``max_tokens``."""
        from metaeval.judges.config import estimate_tokens

        text = "".join(m["content"] for m in messages)
        return estimate_tokens(text) + int(self.deployment.params.get("max_tokens", 512) or 512)

    # ------------------------------------------------------------------ the call
    async def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        prompt: Mapping[str, str] | None = None,
        sample_index: int = 0,
        reask: int = 0,
        extra_params: Mapping[str, Any] | None = None,
    ) -> CallTrace:
        """One chat completion through cache, limits and retries; returns its trace (``raw_output`` = reply).

        ``extra_params`` (e.g. a per-call ``response_format`` schema) are merged over the deployment's params and,
        like them, are part of the cache key and the trace.
        """
        dep = self.deployment
        params = {**dict(dep.params), **dict(extra_params or {})}
        msgs = tuple({"role": str(m["role"]), "content": str(m["content"])} for m in messages)
        key = cache_key(dep.backend, dep.model, msgs, params, sample_index, self.revision, dep.name)
        prompt = dict(prompt or {})
        base = dict(
            deployment=dep.name, backend=dep.backend, model=dep.model, params=params,
            prompt_id=prompt.get("prompt_id"), prompt_version=prompt.get("prompt_version"),
            prompt_sha=prompt.get("prompt_sha"), message_hash=key, sample_index=sample_index, reask=reask,
            messages=msgs,
        )
        self.stats.calls += 1
        t0 = time.perf_counter()
        if self.cache is None:
            if self.offline:
                return self._offline_miss(key, base, t0)
            return await self._send(key, msgs, params, base, t0)
        inflight = self._inflight.setdefault(asyncio.get_running_loop(), {})
        aget = getattr(self.cache, "aget", None)  # a remote cache (Ray cache actor proxy) is awaited
        while True:
            hit = await aget(key) if aget is not None else self.cache.get(key)
            if hit is not None:
                return self._hit_trace(hit, base, t0)
            if self.offline:
                return self._offline_miss(key, base, t0)
            pending = inflight.get(key)
            if pending is None:
                break
            # the same request is already on the wire: wait for it and read its reply from the cache (if that
            # call failed, the loop comes back here with a miss and this caller sends its own request)
            await asyncio.shield(pending)
        done: asyncio.Future = asyncio.get_running_loop().create_future()
        inflight[key] = done
        # another process on this cache file may be sending it (a Ray cache actor proxy: its async pair)
        leases = getattr(self.cache, "aclaim", None) is not None or getattr(self.cache, "claim", None) is not None
        try:
            if leases:
                waited = await self._claim(key, base, t0)
                if waited is not None:
                    return waited
            try:
                return await self._send(key, msgs, params, base, t0)
            finally:
                if leases:
                    arelease = getattr(self.cache, "arelease", None)
                    await arelease(key) if arelease is not None else self.cache.release(key)
        finally:
            inflight.pop(key, None)
            done.set_result(None)

    async def _within_deadline(self, request: ChatRequest) -> Any:
        """``backend.complete(request)`` within a wall-clock deadline of ``timeout_s`` for the whole request
        (connect, sending, every read): the SDK's own timeout is per read, so a server trickling one byte every
        half second (slowloris) would hold a call for minutes.  Past the deadline: a transient ``timeout``."""
        deadline = float(request.timeout_s)
        loop = asyncio.get_running_loop()
        if self._prepared is not loop:  # imports and the SDK client: before the clock starts
            prepare = getattr(self.backend, "prepare", None)
            if prepare is not None:
                prepare()
            self._prepared = loop
        try:
            async with asyncio.timeout(deadline):
                return await self.backend.complete(request)
        except TimeoutError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # a stop under way, not our deadline
                raise asyncio.CancelledError() from None
            raise TransientError("timeout", f"no complete reply within the {deadline:g}s deadline "
                                 "(timeout_s bounds the whole request: connect and every read)") from None

    def _hit_trace(self, hit: Mapping[str, Any], base: dict[str, Any], t0: float) -> CallTrace:
        self.stats.cache_hits += 1
        return CallTrace(
            **base, raw_output=hit["text"], input_tokens=hit.get("input_tokens", 0),
            output_tokens=hit.get("output_tokens", 0), cost_usd=0.0,
            latency_s=time.perf_counter() - t0, cache_hit=True, retries=0, retry_events=(),
            timestamp=utc_now(), finish_reason=hit.get("finish_reason"),
            replayed_cost_usd=self._replayed_cost(hit),
        )

    def lease_s(self) -> float:
        """How long a claim on a request lasts: the longest this client can take over it (every attempt's
        deadline plus every backoff) plus 30 s; a holder that dies on this host frees it at once."""
        lm = self.deployment.limits
        return lm.timeout_s * (lm.max_retries + 1) + lm.max_backoff_s * lm.max_retries + 30.0

    async def _claim(self, key: str, base: dict[str, Any], t0: float) -> CallTrace | None:
        """Claim ``key`` in the shared cache file (``ResponseCache.claim``): None when this process is to send it;
        the cached reply's trace when another process sent it (polled until its lease ends)."""
        from metaeval.judges.cache import CLAIMED, HELD

        delay = 0.02
        aclaim, aget = getattr(self.cache, "aclaim", None), getattr(self.cache, "aget", None)
        while True:
            state = await aclaim(key, self.lease_s()) if aclaim is not None else self.cache.claim(key, self.lease_s())
            if state == CLAIMED:
                return None
            hit = await aget(key) if aget is not None else self.cache.get(key)
            if hit is not None:
                return self._hit_trace(hit, base, t0)
            if state != HELD:  # stored but unreadable: send it again
                return None
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.5)

    async def _send(self, key: str, msgs: tuple, params: dict[str, Any], base: dict[str, Any], t0: float) -> CallTrace:
        """The request itself: limits, retries, accounting, cache write."""
        dep = self.deployment
        request = ChatRequest(model=dep.model, messages=msgs, params=params, timeout_s=dep.limits.timeout_s)
        events: list[RetryEvent] = []
        limiter = self._limiter()
        est = self._estimate_tokens(msgs)
        error: str | None = None
        reply = None
        attempts = 0
        for attempt in range(dep.limits.max_retries + 1):
            attempts += 1
            try:
                async with limiter.slot(est):
                    self.stats.requests += 1
                    reply = await self._within_deadline(request)
                limiter.settle(est, reply.input_tokens + reply.output_tokens)
                break
            except TransientError as exc:
                task = asyncio.current_task()
                if task is not None and task.cancelling():  # a stop (Ctrl-C, SIGTERM) is under way: never retry
                    raise asyncio.CancelledError() from None  # (an SDK may report the cancelled request as an error)
                msg = redact(str(exc), self._secret)
                last = attempt == dep.limits.max_retries
                delay = 0.0 if last else self.backoff(attempt, exc.retry_after)
                events.append(RetryEvent(attempt, exc.kind, exc.status, exc.retry_after, delay, msg))
                self.stats.retry_kinds[exc.kind] = self.stats.retry_kinds.get(exc.kind, 0) + 1
                if last:
                    where = f" (server {dep.base_url})" if exc.kind == "connection" and dep.base_url else ""
                    error = f"gave up after {attempt + 1} attempts; last error {exc.kind}: {msg}{where}"
                    break
                self.stats.retries += 1
                await asyncio.sleep(delay)
            except PermanentError as exc:
                error = f"permanent error: {redact(str(exc), self._secret)}"
                break
        latency = time.perf_counter() - t0
        retries = attempts - 1
        if reply is None:
            self.stats.failures += 1
            trace = CallTrace(
                **base, raw_output=None, input_tokens=0, output_tokens=0, cost_usd=0.0, latency_s=latency,
                cache_hit=False, retries=retries, retry_events=tuple(events), timestamp=utc_now(), error=error,
            )
            raise CallFailed(error or "call failed", trace)
        if self._secret and self._secret != NO_KEY:  # a key echoed in any field: never stored, cached or printed
            reply = redact_reply(reply, self._secret)
        cost = dep.effective_prices.cost(reply.input_tokens, reply.output_tokens)  # batch prices in mode: batch
        self.stats.input_tokens += reply.input_tokens
        self.stats.output_tokens += reply.output_tokens
        self.stats.cost_usd += cost
        kept, cut = cap_reply(reply.text, self.max_reply_chars)  # redacted first, then cut
        if cut:  # paid for, stored cut with a marker, never cached, never parsed: the call fails
            self.stats.failures += 1
            error = (f"reply of {len(reply.text)} characters is over the cap of {self.max_reply_chars}; stored cut "
                     f"({cut} characters dropped), not parsed")
            trace = CallTrace(
                **base, raw_output=kept, input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                cost_usd=cost, latency_s=latency, cache_hit=False, retries=retries, retry_events=tuple(events),
                timestamp=utc_now(), finish_reason=reply.finish_reason, error=error,
            )
            raise CallFailed(error, trace)
        if self.cache is not None:
            record = {
                "text": reply.text, "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                "finish_reason": reply.finish_reason, "model": reply.model, "cost_usd": cost,
            }
            aput = getattr(self.cache, "aput", None)
            if aput is not None:
                await aput(key, record)
            else:
                self.cache.put(key, record, deployment=dep.name, url=dep.base_url)
        return CallTrace(
            **base, raw_output=reply.text, input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
            cost_usd=cost, latency_s=latency, cache_hit=False, retries=retries, retry_events=tuple(events),
            timestamp=utc_now(), finish_reason=reply.finish_reason,
        )

    def _replayed_cost(self, hit: Mapping[str, Any]) -> float:
        """What a cached reply cost when it was paid for: its stored ``cost_usd``, else its tokens at this
        deployment's prices (entries written before the cost was stored)."""
        try:
            return float(hit["cost_usd"])
        except (KeyError, TypeError, ValueError):
            return self.deployment.effective_prices.cost(int(hit.get("input_tokens") or 0),
                                                         int(hit.get("output_tokens") or 0))

    def _offline_miss(self, key: str, base: dict[str, Any], t0: float) -> CallTrace:
        """Offline replay and no cached reply: fail the call (nothing is sent)."""
        self.stats.failures += 1
        self.stats.offline_misses += 1
        where = getattr(self.cache, "path", None) or "no cache (the cache is off)"
        error = f"offline: no cached reply for deployment {self.deployment.name!r} (cache key {key[:16]}) in {where}; nothing was sent"
        trace = CallTrace(
            **base, raw_output=None, input_tokens=0, output_tokens=0, cost_usd=0.0, latency_s=time.perf_counter() - t0,
            cache_hit=False, retries=0, retry_events=(), timestamp=utc_now(), error=error,
        )
        raise CallFailed(error, trace)

    async def aclose(self) -> None:
        """Close the backend, and the response cache when this client opened it from a path (closing its SQLite
        connection checkpoints the write-ahead log into the cache file, so the file alone holds every reply)."""
        await self.backend.aclose()
        if self._owns_cache and self.cache is not None:
            self.cache.close()

    def warm(self) -> None:
        """Import what the first request would (``ChatBackend.warm``)."""
        warm_up(self.backend)

    def describe(self) -> dict[str, Any]:
        return {"deployment": self.deployment.public_dict(), "cache": self.cache.path if self.cache else None}

    def __repr__(self) -> str:
        return f"ChatClient(deployment={self.deployment.name!r}, backend={self.deployment.backend!r})"
