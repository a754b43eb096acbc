"""Chat backends: translate one chat request into one SDK call and the reply back; nothing else.

Caching, limits, retries, accounting and tracing live once in ``metaeval.judges.client.ChatClient``.  A backend
raises ``TransientError`` (429, 5xx, timeout, dropped connection, unreadable body: worth retrying) or
``PermanentError`` (anything else, e.g. 400/401/404) and never retries by itself (the SDKs are built with
``max_retries=0`` so retry counts are ours).  Backends are chosen by registry name, never from a model name.

The registry: a backend class registers itself with ``@register_backend`` (``metaeval.judges.backends.base``) and
declares what the rest of the package asks of a provider - ``http`` (``replicas: auto`` may spread its calls over
several Ray actors), ``structured_output`` (it accepts a per-call JSON schema), ``batch_backend`` (the registry name
of its batch-API backend, for ``deployment.mode: batch``), ``batch_limits`` (a batch backend's request and byte
caps).  The built-in backends are imported on the
first look-up (their modules import no SDK until a request is made); a backend defined outside the package is
registered when its module is imported.  Adding a provider is one new file (a ``ChatBackend`` subclass with
``@register_backend``) plus importing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metaeval.errors import ConfigError
from metaeval.judges.backends.base import (BACKENDS, ChatBackend, ChatReply, ChatRequest, PermanentError, TransientError,
                                           register_backend)

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.judges.config import Deployment


def _builtins() -> dict[str, type[ChatBackend]]:
    """The registry with the built-in backends in it (imported here, lazily: no SDK is imported by this)."""
    from metaeval.judges.backends import anthropic_backend, anthropic_batch, openai_backend, openai_batch  # noqa: F401

    return BACKENDS


def backend_names() -> tuple[str, ...]:
    """Every registered backend name (synchronous and batch)."""
    return tuple(_builtins())


def backend_named(name: str, where: str = "deployment") -> type[ChatBackend]:
    """The backend class registered as ``name``; one ``ConfigError`` line naming the known ones otherwise."""
    reg = _builtins()
    cls = reg.get(name)
    if cls is None:
        known = sorted(n for n, c in reg.items() if not c.is_batch)
        raise ConfigError(f"{where}: unknown backend {name!r}; known: {known}")
    return cls


def backend_class(deployment: "Deployment") -> type[ChatBackend]:
    """The backend class serving ``deployment``: ``deployment.backend``, or in ``mode: batch`` its ``batch_backend``."""
    where = f"deployment {deployment.name!r}"
    cls = backend_named(deployment.backend, where)
    if getattr(deployment, "mode", "sync") != "batch":
        return cls
    if not cls.batch_backend:
        batch = sorted(n for n, c in _builtins().items() if c.batch_backend)
        raise ConfigError(f"{where}: mode 'batch' needs a backend with a batch API ({' or '.join(batch)}), "
                          f"got {deployment.backend!r}")
    return backend_named(cls.batch_backend, where)


def make_backend(deployment: "Deployment", api_key: str) -> ChatBackend:
    return backend_class(deployment)(deployment, api_key)


def import_sdks(deployments) -> None:
    """Import the provider SDKs that ``deployments``' first requests would import (``ChatBackend.import_sdk``)."""
    for dep in deployments:
        backend_class(dep).import_sdk()


__all__ = ["BACKENDS", "backend_class", "backend_named", "backend_names", "import_sdks", "register_backend",
           "ChatBackend", "ChatReply", "ChatRequest", "PermanentError", "TransientError", "make_backend"]
