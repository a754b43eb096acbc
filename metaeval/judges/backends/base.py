"""The backend interface: one async ``complete(request) -> ChatReply``; typed transient/permanent errors."""

from __future__ import annotations

import contextlib

import asyncio
import email.utils
import functools
import time
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping


@dataclass(frozen=True)
class ChatRequest:
    model: str
    messages: tuple[Mapping[str, str], ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    timeout_s: float = 60.0


@dataclass(frozen=True)
class ChatReply:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str | None = None
    model: str | None = None


class TransientError(Exception):
    """Worth retrying.  ``kind``: rate_limit | server | timeout | connection | bad_response."""

    def __init__(self, kind: str, message: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after


class PermanentError(Exception):
    """Not worth retrying (bad request, authentication, unknown model...)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, ``retry-after`` (seconds or an HTTP date); ``None`` if absent."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    val = headers.get("retry-after")
    if not val:
        return None
    try:
        return max(0.0, float(val))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(val)
            return max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError):
            return None


@functools.lru_cache(maxsize=64)
def _param_names(fn: Any) -> frozenset[str]:
    import inspect

    try:
        return frozenset(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return frozenset()


def split_params(fn: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for an SDK method: parameters its signature names pass as they are; the rest go in
    ``extra_body`` (SDK versions differ in which generation parameters they name, the wire format does not)."""
    names = _param_names(getattr(fn, "__func__", fn))
    kwargs = {k: v for k, v in params.items() if k in names}
    extra = {k: v for k, v in params.items() if k not in names}
    if extra:
        kwargs["extra_body"] = {**kwargs.get("extra_body", {}), **extra}
    return kwargs


#: the shortest run of a key's characters that is treated as a leak of that key
MIN_FRAGMENT = 8
REDACTED = "[REDACTED]"


def redact(text: str, secret: str | None, min_fragment: int = MIN_FRAGMENT) -> str:
    """``text`` with the key and every run of >= ``min_fragment`` consecutive characters of it replaced.

    A server may echo a key whole, cut (an error body trimmed mid-key) or split across two messages; each
    maximal stretch of ``text`` covered by ``min_fragment``-character windows that also occur in ``secret``
    becomes ``[REDACTED]``.  Keys shorter than ``min_fragment`` (but at least 4 characters) are replaced whole.
    Cost: one C substring search per fragment; only a text that holds a fragment is scanned in Python
    (O(len(text)) set look-ups).  Redact *before* truncating, or a cut can leave a fragment behind.
    """
    if not text or not secret or len(secret) < 4:
        return text
    if len(secret) < min_fragment:
        return text.replace(secret, REDACTED)
    grams = {secret[i:i + min_fragment] for i in range(len(secret) - min_fragment + 1)}
    if not any(g in text for g in grams):  # the common case, at C speed (a 1 MB reply: ~1 ms per fragment)
        return text
    covered = [False] * len(text)
    hit = False
    for i in range(len(text) - min_fragment + 1):
        if text[i:i + min_fragment] in grams:
            hit = True
            for j in range(i, i + min_fragment):
                covered[j] = True
    if not hit:
        return text
    out, i = [], 0
    while i < len(text):
        if covered[i]:
            while i < len(text) and covered[i]:
                i += 1
            out.append(REDACTED)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def clip(text: str, limit: int = 500) -> str:
    """``text`` cut to ``limit`` characters (with a marker saying how much was cut); call after ``redact``."""
    return text if len(text) <= limit else f"{text[:limit]}... [{len(text) - limit} more characters]"


class ChatBackend(ABC):
    """Holds one SDK client per event loop (SDK HTTP pools are bound to the loop that created them).

    A subclass registers itself with ``@register_backend`` under ``name`` and says, in class attributes, what the
    catalog, the replica planner, the batch layer and the LLM judge ask of a provider (see
    ``metaeval.judges.backends``)."""

    name = "base"
    #: modules the first request imports (the provider SDK): ``warm`` imports them ahead of it
    SDK_MODULES: tuple[str, ...] = ()
    #: its calls go to a server over HTTP: ``replicas: auto`` may spread them over several actors (pipeline.replicas)
    http: bool = False
    #: it accepts a per-call JSON schema as ``response_format`` (``structured_output``: metaeval.judges.llm)
    structured_output: bool = False
    #: registry name of the backend that serves ``deployment.mode: batch`` through the provider's batch API
    batch_backend: str | None = None
    #: a batch-API backend (``metaeval.judges.batch.BatchBackend``): not a ``deployment.backend`` of its own
    is_batch: bool = False

    def __init__(self, deployment: Any, api_key: str):
        self.deployment = deployment
        self._api_key = api_key
        self._clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]" = weakref.WeakKeyDictionary()

    def _sdk(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._make_sdk_client()
        return client

    @classmethod
    def import_sdk(cls) -> None:
        """Import the provider SDK (``SDK_MODULES``) now rather than in the first request."""
        import importlib

        for name in cls.SDK_MODULES:
            importlib.import_module(name)

    def warm(self) -> None:
        """Import the SDK now rather than in the first request (a fresh Ray actor: ~1 s on a small machine, which
        would otherwise hold its first requests while it reports ready)."""
        self.import_sdk()

    def prepare(self) -> None:
        """Import the SDK and build this event loop's SDK client now, outside any request's deadline (the first
        request would otherwise spend its wall-clock deadline on imports)."""
        self.warm()
        self._sdk()

    @abstractmethod
    def _make_sdk_client(self) -> Any: ...

    def _sdk_kwargs(self) -> dict[str, Any]:
        """The provider SDK client's arguments: the key, no SDK retries (the client retries), the deployment's
        timeout and, when set, its ``base_url`` (else the SDK's own default / environment variable applies)."""
        kwargs: dict[str, Any] = {"api_key": self._api_key, "max_retries": 0, "timeout": self.deployment.limits.timeout_s}
        if self.deployment.base_url:
            kwargs["base_url"] = self.deployment.base_url
        batch = getattr(self, "is_batch", False) or getattr(self.deployment, "mode", "sync") == "batch"
        if not batch and self.SDK_MODULES:  # batch result files may be large: not capped
            import importlib

            from metaeval.judges.backends.reading import capped_http_client

            client = capped_http_client(importlib.import_module(self.SDK_MODULES[0]))  # bodies read within a cap
            if client is not None:
                kwargs["http_client"] = client
        return kwargs

    @abstractmethod
    async def complete(self, request: ChatRequest) -> ChatReply: ...

    async def aclose(self) -> None:
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}(deployment={getattr(self.deployment, 'name', '?')!r})"


#: backend name -> class, filled by ``@register_backend`` (read it through ``metaeval.judges.backends.backend_named``)
BACKENDS: dict[str, type["ChatBackend"]] = {}


def register_backend(cls: type["ChatBackend"]) -> type["ChatBackend"]:
    """Class decorator: register a ``ChatBackend`` subclass under its ``name`` (a name is taken once)."""
    from metaeval.errors import ConfigError

    if not isinstance(cls, type) or not issubclass(cls, ChatBackend) or not cls.name or cls.name == "base":
        raise ConfigError(f"register_backend: {cls!r} is not a ChatBackend subclass with its own name")
    old = BACKENDS.get(cls.name)
    if old is not None and old.__qualname__ != cls.__qualname__:
        raise ConfigError(f"backend {cls.name!r} is already registered ({old.__module__}.{old.__qualname__})")
    BACKENDS[cls.name] = cls
    return cls


def sdk_reply(resp: Any, text: str, finish_reason: Any, input_key: str, output_key: str) -> "ChatReply":
    """The ``ChatReply`` of a provider SDK response: ``text``, token counts from ``resp.usage.<input_key>`` /
    ``<output_key>`` (0 when the response carries none), ``finish_reason`` and ``resp.model``."""
    usage = getattr(resp, "usage", None)
    return ChatReply(text=text, input_tokens=usage_count(getattr(usage, input_key, 0), input_key),
                     output_tokens=usage_count(getattr(usage, output_key, 0), output_key), finish_reason=finish_reason,
                     model=getattr(resp, "model", None))


#: the most tokens one reply may claim (a count above is a server's error, not usage)
MAX_USAGE_TOKENS = 10**9


def usage_count(value: Any, what: str = "tokens") -> int:
    """A token count a server reported, as a non-negative int: a negative, non-finite, non-numeric or absurd
    (> ``MAX_USAGE_TOKENS``) count is a server's error and counts 0 (with a warning), never summed into the
    run's usage and cost."""
    import logging
    import math

    if value is None or value == "":
        return 0
    try:
        f = float(value)
        ok = not isinstance(value, bool) and math.isfinite(f) and 0 <= f <= MAX_USAGE_TOKENS
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        logging.getLogger(__name__).warning("the server reported usage %s=%.40r; not a token count: counted as 0",
                                            what, value)
        return 0
    return int(f)


@contextlib.contextmanager
def sdk_errors(sdk: Any, api_key: str | None, timeout_s: float) -> Iterator[None]:
    """Map what a provider SDK (the ``openai`` / ``anthropic`` module ``sdk``) raises around one request to our
    errors, key redacted: timeout / connection / HTTP status (:func:`sdk_transport_error`), an unreadable response
    or a 200 whose body is not the expected JSON (transient ``bad_response``), a call that does not fit this SDK
    version (``TypeError``: permanent, a configuration problem)."""
    from metaeval.judges.backends.reading import ReplyTooLarge

    try:
        yield
    except ReplyTooLarge as exc:  # raised by the capped transport, through the SDK
        raise PermanentError(redact(f"reply not read: {exc}", api_key)) from None
    except (sdk.APITimeoutError, sdk.APIConnectionError, sdk.APIStatusError) as exc:
        too_large = _too_large(exc)
        if too_large is not None:  # a retry would download the same body: the call fails, its reason kept
            raise PermanentError(redact(f"reply not read: {too_large}", api_key)) from None
        raise sdk_transport_error(sdk, exc, api_key, f"timed out after {timeout_s:g}s") from None
    except sdk.APIResponseValidationError as exc:
        raise TransientError("bad_response", redact(f"unreadable response: {exc}", api_key)) from None
    except TypeError as exc:
        raise PermanentError(redact(f"request rejected by the SDK: {exc}", api_key)) from None
    except ValueError as exc:
        raise TransientError("bad_response", redact(f"unreadable response: {exc}", api_key)) from None


def _too_large(exc: BaseException) -> BaseException | None:
    """The ``reading.ReplyTooLarge`` behind an SDK exception (its cause chain), or None."""
    from metaeval.judges.backends.reading import ReplyTooLarge

    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ReplyTooLarge):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def sdk_transport_error(sdk: Any, exc: BaseException, api_key: str | None, timeout_msg: str,
                        prefix: str = "") -> Exception | None:
    """The transient / permanent error for a provider SDK's (``openai`` / ``anthropic`` module ``sdk``) timeout,
    connection or HTTP-status exception ``exc``, key redacted; None for any other exception."""
    if isinstance(exc, sdk.APITimeoutError):
        return TransientError("timeout", timeout_msg)
    if isinstance(exc, sdk.APIConnectionError):
        return TransientError("connection", redact(f"{prefix}connection error: {exc}", api_key))
    if isinstance(exc, sdk.APIStatusError):
        return status_error(exc, api_key)
    return None


def status_error(exc: Any, key: str | None) -> Exception:
    """Map an SDK's HTTP status error to ours: 429 -> rate_limit, 5xx/408/409 (and Anthropic's 529) -> server,
    both transient with the server's Retry-After; anything else is permanent.  The key is redacted."""
    status = int(getattr(exc, "status_code", 0) or 0)
    headers = getattr(getattr(exc, "response", None), "headers", None)
    msg = clip(redact(f"HTTP {status}: {getattr(exc, 'message', '')}", key))  # redact first, then cut
    if status == 429:
        return TransientError("rate_limit", msg, status, parse_retry_after(headers))
    if status >= 500 or status in (408, 409):
        return TransientError("server", msg, status, parse_retry_after(headers))
    return PermanentError(msg, status)
