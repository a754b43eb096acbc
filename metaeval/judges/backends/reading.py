"""Reading a reply within limits: the body is decompressed *while* it is read, and reading stops at a cap.

The provider SDKs (``openai``, ``anthropic``) read a reply through their HTTP library (``httpx2``), which
decompresses ``content-encoding: gzip`` / ``deflate`` bodies after reading them and only then hands the text on:
a 200 KB gzip reply expanding to 200 MB is held whole (and then scanned by the redaction) before metaeval's reply
cap (``metaeval.security.redaction.MAX_REPLY_CHARS``) applies.  :class:`CappedTransport` wraps the SDK client's
transport: it reads the raw body chunk by chunk, decompresses each chunk with ``zlib`` asking for at most the bytes
still allowed (``decompressobj(...).decompress(chunk, max_length)``), and stops with :class:`ReplyTooLarge` as
soon as either the bytes on the wire or the decompressed bytes pass :data:`MAX_BODY_BYTES`; the SDK then gets a
plain (already decoded) body.  Encodings other than gzip / deflate / identity pass through unchanged (the HTTP
library decodes them; their raw size is still capped).  ``ReplyTooLarge`` is a permanent error of the call (its
labels FAILED with the reason; a retry would download the same bomb).

The wall-clock deadline of a request (the slowloris case) is the client's (``ChatClient._within_deadline``).
"""

from __future__ import annotations

import zlib
from typing import Any

#: the most bytes of one reply body, on the wire and decompressed: 4 bytes per character of the reply cap
#: (UTF-8's worst case) plus room for the JSON around the text
MAX_BODY_BYTES = 4 * 1_000_000 + (1 << 20)


class ReplyTooLarge(Exception):
    """A reply body over :data:`MAX_BODY_BYTES` (raw or decompressed); reading stopped there."""


def _decoder(encoding: str) -> Any:
    enc = encoding.strip().lower()
    if enc in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if enc == "deflate":
        return zlib.decompressobj(zlib.MAX_WBITS | 32)  # zlib or gzip header, auto-detected
    return None


async def read_capped(stream: Any, encoding: str, limit: int = MAX_BODY_BYTES) -> tuple[bytes, bool]:
    """``(body, decoded)``: the raw ``stream`` (an async iterable of bytes) read and, for gzip / deflate,
    decompressed chunk by chunk; :class:`ReplyTooLarge` as soon as either size passes ``limit``."""
    dec = _decoder(encoding) if encoding else None
    out: list[bytes] = []
    raw_n = n = 0
    async for chunk in stream:
        raw_n += len(chunk)
        if raw_n > limit:
            raise ReplyTooLarge(f"reply body over {limit:,} bytes on the wire; reading stopped")
        if dec is None:
            out.append(chunk)
            continue
        data = chunk
        while data:
            piece = dec.decompress(data, limit - n + 1)
            n += len(piece)
            if n > limit:
                raise ReplyTooLarge(f"reply body expands past {limit:,} bytes ({encoding}, {raw_n:,} bytes on the "
                                    "wire so far); reading stopped")
            out.append(piece)
            data = dec.unconsumed_tail
    if dec is not None:
        tail = dec.flush()
        if n + len(tail) > limit:
            raise ReplyTooLarge(f"reply body expands past {limit:,} bytes ({encoding}); reading stopped")
        out.append(tail)
    return b"".join(out), dec is not None


def capped_transport(httpx: Any, limits: Any = None, limit: int = MAX_BODY_BYTES) -> Any:
    """An ``httpx``-style async transport (``httpx`` is the module: ``httpx2`` for the current SDKs) that reads
    every reply body within ``limit`` (:func:`read_capped`)."""

    class CappedTransport(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx.AsyncHTTPTransport(**({"limits": limits} if limits is not None else {}))

        async def handle_async_request(self, request: Any) -> Any:
            resp = await self.inner.handle_async_request(request)
            encoding = resp.headers.get("content-encoding", "")
            try:
                body, decoded = await read_capped(resp.stream, encoding, limit)
            finally:
                await resp.aclose()
            headers = [(k, v) for k, v in resp.headers.multi_items()
                       if k.lower() not in ("content-length", "transfer-encoding")
                       and not (decoded and k.lower() == "content-encoding")]
            return httpx.Response(resp.status_code, headers=headers, content=body, request=request,
                                  extensions=resp.extensions)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return CappedTransport()


def capped_http_client(sdk: Any) -> Any:
    """The provider SDK's (``openai`` / ``anthropic`` module ``sdk``) default async HTTP client, with every reply
    read within :data:`MAX_BODY_BYTES`; None when the SDK exposes no such client (its own then applies)."""
    import importlib

    client_cls = getattr(sdk, "DefaultAsyncHttpxClient", None)
    base = importlib.import_module(f"{sdk.__name__}._base_client")
    httpx = getattr(base, "httpx2", None) or getattr(base, "httpx", None)
    limits = getattr(importlib.import_module(f"{sdk.__name__}._constants"), "DEFAULT_CONNECTION_LIMITS", None)
    if client_cls is None or httpx is None:
        return None
    return client_cls(transport=capped_transport(httpx, limits))
