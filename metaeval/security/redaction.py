"""One redaction for everything a reply carries, and for every logger that might print it.

A hostile or careless server can echo the API key anywhere: in the reply text, in ``finish_reason`` /
``stop_reason``, in the ``model`` it names, in an error body, in a response header.  So:

* :func:`redact_reply` applies ``metaeval.judges.backends.base.redact`` (the key and every run of >= 8 of its
  consecutive characters -> ``[REDACTED]``) to *every* string field of a ``ChatReply`` before the client stores,
  caches, traces or returns any of it;
* text shortened for a message is redacted first, then clipped (``backends.base.status_error``): clipping
  first can cut a key so that fewer than 8 of its characters remain before ``"... ["`` and escape the redaction;
* :func:`cap_reply` bounds what is stored of a reply (``MAX_REPLY_CHARS``): the overflow is dropped and the kept
  text ends with a marker saying how much was cut, and the caller treats the call as failed (a label is never
  parsed from a cut reply without saying so);
* :func:`protect_loggers` puts a :class:`RedactingFilter` on the handlers of the root logger and keeps the HTTP
  libraries' loggers (``httpx``, ``httpcore``, ``openai``, ``anthropic``) at INFO or above: their DEBUG records
  print request and response headers, where a server may echo the key.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from typing import Any

from metaeval.judges.backends.base import REDACTED, redact

#: the most characters of one reply that are stored (cache, transcripts, store); a 512-token reply is ~2,000
MAX_REPLY_CHARS = 1_000_000

#: third-party loggers whose DEBUG output includes HTTP headers (and so possibly an echoed key)
HTTP_LOGGERS = ("httpx", "httpcore", "openai", "anthropic", "hpack", "urllib3", "aiohttp.client")

__all__ = ["MAX_REPLY_CHARS", "REDACTED", "RedactingFilter", "cap_reply", "protect_loggers", "redact",
           "redact_reply"]


def redact_reply(reply: Any, secret: str | None) -> Any:
    """``reply`` (a ``ChatReply`` or any dataclass) with ``redact`` applied to every string field."""
    if not secret or not dataclasses.is_dataclass(reply):
        return reply
    changes = {}
    for f in dataclasses.fields(reply):
        value = getattr(reply, f.name)
        if isinstance(value, str):
            clean = redact(value, secret)
            if clean != value:
                changes[f.name] = clean
    return dataclasses.replace(reply, **changes) if changes else reply


def cap_reply(text: str, limit: int = MAX_REPLY_CHARS) -> tuple[str, int]:
    """``(stored text, characters cut)``: ``text`` itself when within ``limit``, else its first ``limit``
    characters plus a marker ``"... [reply truncated by metaeval: N more characters not stored]"``.
    Redact before capping (``redact_reply``), like any cut."""
    if len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    return f"{text[:limit]}... [reply truncated by metaeval: {cut} more characters not stored]", cut


class RedactingFilter(logging.Filter):
    """Rewrites every record's message with each registered key redacted (``redact``); never drops a record."""

    def __init__(self) -> None:
        super().__init__("metaeval.redaction")
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        try:
            msg = record.getMessage()
        except Exception:  # a record whose arguments do not format: leave it to the handler
            return True
        clean = msg
        for s in self.secrets:
            clean = redact(clean, s)
        if clean != msg:
            record.msg, record.args = clean, None
        return True


_FILTER = RedactingFilter()
_LOCK = threading.Lock()


def protect_loggers(secret: str | None) -> None:
    """Register ``secret`` with the redacting filter, put the filter on every root handler (and on the HTTP
    libraries' loggers), and raise those loggers to INFO when they are set lower (``-vv`` sets the root to DEBUG,
    which would print response headers).  Idempotent; called by every ``ChatClient`` holding a key."""
    with _LOCK:
        if secret and len(secret) >= 4:
            _FILTER.secrets.add(secret)
        root = logging.getLogger()
        for h in root.handlers:
            if _FILTER not in h.filters:
                h.addFilter(_FILTER)
        for name in HTTP_LOGGERS:
            lg = logging.getLogger(name)
            if _FILTER not in lg.filters:
                lg.addFilter(_FILTER)
            if lg.getEffectiveLevel() < logging.INFO:
                lg.setLevel(logging.INFO)
