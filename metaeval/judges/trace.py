"""Provenance of one model call (``CallTrace``) and running totals per client (``ClientStats``)."""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class RetryEvent:
    """One failed attempt that was retried (or the last one, when retries ran out)."""

    attempt: int
    kind: str  # rate_limit | server | timeout | connection | bad_response
    status: int | None
    retry_after: float | None
    delay_s: float
    message: str


@dataclass(frozen=True)
class CallTrace:
    """Everything needed to audit or reproduce one call.  No key, no headers.

    ``message_hash`` is the cache key (SHA-256 over deployment, model, messages, params, sample index).
    ``reask`` is 0 for the first call of a judge unit and k for its k-th re-ask.  ``error`` is set when the call
    failed after its retries; ``raw_output`` is then ``None``.
    """

    deployment: str
    backend: str
    model: str
    params: Mapping[str, Any]
    prompt_id: str | None
    prompt_version: str | None
    prompt_sha: str | None
    message_hash: str
    raw_output: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    cache_hit: bool
    retries: int
    retry_events: tuple[RetryEvent, ...]
    timestamp: str
    sample_index: int = 0
    reask: int = 0
    finish_reason: str | None = None
    error: str | None = None
    #: the rendered messages sent (role/content pairs; prompts only, never a key): what a transcript shows
    messages: tuple[Mapping[str, str], ...] = ()
    #: a cache hit: what the replayed reply cost when it was first paid for (``cost_usd`` is 0: nothing spent now)
    replayed_cost_usd: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["params"] = dict(self.params)
        d["retry_events"] = [asdict(e) for e in self.retry_events]
        d["messages"] = [dict(m) for m in self.messages]
        return d


@dataclass
class ClientStats:
    """Running totals for one client (one deployment)."""

    calls: int = 0
    requests: int = 0  # HTTP attempts sent, retries included
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    offline_misses: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    retry_kinds: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
