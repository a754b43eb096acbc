"""Chat backends: translate one chat request into one SDK call and the reply back; nothing else.

Caching, limits, retries, accounting and tracing live once in ``metaeval.judges.client.ChatClient``.  A backend
raises ``TransientError`` (429, 5xx, timeout, dropped connection, unreadable body: worth retrying) or
``PermanentError`` (anything else, e.g. 400/401/404) and never retries by itself (the SDKs are built with
``max_retries=0`` so retry counts are ours).  Backends are chosen by registry name, never from a model name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from metaeval.errors import ConfigError
from metaeval.judges.backends.base import ChatBackend, ChatReply, ChatRequest, PermanentError, TransientError

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.judges.config import Deployment

#: backend name -> "module:Class" (imported lazily so the SDKs load only when used)
BACKENDS: dict[str, str] = {
    "openai": "metaeval.judges.backends.openai_backend:OpenAIBackend",
    "anthropic": "metaeval.judges.backends.anthropic_backend:AnthropicBackend",
    # deployment.mode: batch -> the provider's batch API (metaeval.judges.batch)
    "openai_batch": "metaeval.judges.backends.openai_batch:OpenAIBatchBackend",
    "anthropic_batch": "metaeval.judges.backends.anthropic_batch:AnthropicBatchBackend",
}


def backend_class(deployment: "Deployment") -> type[ChatBackend]:
    """The backend class serving ``deployment`` (``deployment.backend``, ``_batch`` in batch mode)."""
    name = deployment.backend + ("_batch" if getattr(deployment, "mode", "sync") == "batch" else "")
    target = BACKENDS.get(name)
    if target is None:
        raise ConfigError(f"deployment {deployment.name!r}: unknown backend {deployment.backend!r}; known: {sorted(BACKENDS)}")
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


def make_backend(deployment: "Deployment", api_key: str) -> ChatBackend:
    return backend_class(deployment)(deployment, api_key)


def import_sdks(deployments) -> None:
    """Import the provider SDKs that ``deployments``' first requests would import (``ChatBackend.import_sdk``)."""
    for dep in deployments:
        backend_class(dep).import_sdk()


__all__ = ["BACKENDS", "backend_class", "import_sdks", "ChatBackend", "ChatReply", "ChatRequest", "PermanentError", "TransientError", "make_backend"]
