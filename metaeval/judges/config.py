"""Deployment configuration: plain frozen dataclasses built from plain dicts (never a Hydra DictConfig).

A deployment is one model behind one backend::

    name: gpt-4o-mini            # used in cache keys and traces
    backend: openai              # a registered backend (metaeval.judges.backends): openai | anthropic | ...
    model: gpt-4o-mini
    base_url: null               # optional; absent -> the SDK's OPENAI_BASE_URL / ANTHROPIC_BASE_URL apply
    api_key_env: OPENAI_API_KEY  # the *name* of the environment variable holding the key (null: no key needed)
    params: {temperature: 0, max_tokens: 512}                  # generation parameters (part of the cache key)
    limits: {concurrency: 8, rpm: 500, tpm: 200000, max_retries: 6, timeout_s: 60,
             backoff_base_s: 0.5, max_backoff_s: 30}           # not part of the cache key
    prices: {input_per_1m: 0.15, output_per_1m: 0.60}          # USD per million tokens
                                   # (+ batch_input_per_1m / batch_output_per_1m; default half)
    replicas: auto               # Ray actors serving it (limits split across them); auto: pipeline.replicas.auto_replicas
    resources: {}                # Ray resources per actor, e.g. {num_gpus: 1}; a list = one per replica
    mode: sync                   # sync | batch (the provider's batch API: metaeval.judges.batch)
    batch: {}                    # batch settings (max_requests, window_s, poll_s, max_poll_s, journal)

The key itself is read only by ``Deployment.api_key()``, only from the named variable, and is never stored on
the dataclass, so ``asdict(deployment)`` / ``public_dict()`` can go into traces and results.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Mapping

from metaeval.errors import ConfigError

#: key used when ``api_key_env`` is null (local OpenAI-compatible servers ignore it, the SDK wants a string).
NO_KEY = "no-key-needed"


@dataclass(frozen=True)
class Limits:
    """Client-side limits.  ``max_backoff_s`` caps every wait, including a server's Retry-After."""

    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None
    max_retries: int = 6
    timeout_s: float = 60.0
    backoff_base_s: float = 0.5
    max_backoff_s: float = 30.0
    jitter: float = 0.25

    def __post_init__(self) -> None:
        for name in ("timeout_s", "backoff_base_s", "max_backoff_s", "jitter", "rpm", "tpm"):  # nan, inf, "x"
            val = getattr(self, name)
            if val is not None and (isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val)):
                raise ConfigError(f"{name} must be a finite number >= 0, got {val!r}")
            if name in ("backoff_base_s", "max_backoff_s", "jitter") and val < 0:
                raise ConfigError(f"{name} must be >= 0, got {val!r}")
        for name in ("concurrency", "max_retries"):
            val = getattr(self, name)
            if isinstance(val, bool) or not isinstance(val, int):
                raise ConfigError(f"{name} must be an integer, got {val!r}")
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.timeout_s <= 0:
            raise ConfigError(f"timeout_s must be > 0, got {self.timeout_s}")
        for name in ("rpm", "tpm"):
            val = getattr(self, name)
            if val is not None and val <= 0:
                raise ConfigError(f"{name} must be > 0 or null, got {val}")


@dataclass(frozen=True)
class Prices:
    """USD per million input / output tokens."""

    input_per_1m: float = 0.0
    output_per_1m: float = 0.0
    #: provider batch API prices (``deployment.mode: batch``); None -> half the synchronous price, the published
    #: discount of both OpenAI's Batch API and Anthropic's Message Batches
    batch_input_per_1m: float | None = None
    batch_output_per_1m: float | None = None

    def __post_init__(self) -> None:
        for name in ("input_per_1m", "output_per_1m", "batch_input_per_1m", "batch_output_per_1m"):
            val = getattr(self, name)
            if val is None and name.startswith("batch_"):
                continue
            if isinstance(val, bool) or not isinstance(val, (int, float)) or not val >= 0:
                raise ConfigError(f"{name} must be >= 0, got {val!r}")  # a negative price defeats the budget
            if not math.isfinite(val):  # "$inf" in the summary, Infinity in the JSONL
                raise ConfigError(f"{name} must be a finite number >= 0, got {val!r}")

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_1m + output_tokens * self.output_per_1m) / 1e6

    def for_mode(self, mode: str) -> "Prices":
        """The prices a call pays in ``mode`` (``sync`` -> these; ``batch`` -> the batch prices)."""
        if mode != "batch":
            return self
        bi = self.input_per_1m * 0.5 if self.batch_input_per_1m is None else self.batch_input_per_1m
        bo = self.output_per_1m * 0.5 if self.batch_output_per_1m is None else self.batch_output_per_1m
        return Prices(bi, bo, bi, bo)


#: ``Deployment.IDENTITY_FIELDS``
IDENTITY_FIELDS: tuple[str, ...] = ("name", "backend", "model", "params", "revision")
#: ``Deployment`` fields that are not settings (never read from a config, never written down)
_INTERNAL: frozenset[str] = frozenset({"given"})


@dataclass(frozen=True)
class Deployment:
    name: str
    backend: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    prices: Prices = field(default_factory=Prices)
    #: explicit deployment revision / namespace: part of the response-cache key (the URL is not); set it when one
    #: model name is served by different servers or weights, so their replies never share cache entries
    revision: str | None = None
    #: Ray actors serving this deployment (the limits are shared: split across them, see pipeline/replicas.py);
    #: ``"auto"`` (default): ``metaeval.pipeline.replicas.auto_replicas`` - one, unless an HTTP deployment has
    #: many requests in flight on a Ray runtime with CPUs to spare
    replicas: int | str = "auto"
    #: Ray resources per actor ({num_gpus: 1, ...}); a list gives one mapping per replica (pins replicas to nodes)
    resources: Any = field(default_factory=dict)
    #: "sync" (one request per call) or "batch" (the provider's batch API, metaeval.judges.batch)
    mode: str = "sync"
    #: batch-mode settings (metaeval.judges.batch.BatchSettings): max_requests, window_s, poll_s, journal, ...
    batch: Mapping[str, Any] = field(default_factory=dict)
    #: the fields the config named (``from_dict``); not a setting: see ``identity``
    given: frozenset[str] = field(default=frozenset(IDENTITY_FIELDS), compare=False, repr=False)

    #: the fields that change a reply, hence a job's identity (``identity``; the response cache's key is built from
    #: the same fields by ``metaeval.judges.client``): not where or how calls are made (base_url, limits: retries,
    #: timeouts, concurrency; replicas, resources, mode, batch), what they cost (prices) or the key's variable
    IDENTITY_FIELDS: ClassVar[tuple[str, ...]] = IDENTITY_FIELDS

    def __post_init__(self) -> None:
        if self.revision is not None and (not isinstance(self.revision, str) or not self.revision):
            raise ConfigError(f"deployment {self.name!r}: revision must be a non-empty string or null, got {self.revision!r}")
        if self.replicas != "auto" and (isinstance(self.replicas, bool) or not isinstance(self.replicas, int)
                                        or self.replicas < 1):
            raise ConfigError(f"deployment {self.name!r}: replicas must be an integer >= 1 or 'auto', got {self.replicas!r}")
        if self.replicas == "auto" and isinstance(self.resources, (list, tuple)) and len(self.resources) > 1:
            object.__setattr__(self, "replicas", len(self.resources))  # one replica per listed mapping
        res = self.resources
        if isinstance(res, Mapping):
            res = [res]
        if not isinstance(res, (list, tuple)) or not all(isinstance(r, Mapping) for r in res):
            raise ConfigError(f"deployment {self.name!r}: resources must be a mapping or a list of mappings")
        if isinstance(self.resources, (list, tuple)) and len(self.resources) not in (1, self.replicas):
            raise ConfigError(f"deployment {self.name!r}: resources lists {len(self.resources)} mappings for "
                              f"{self.replicas} replicas (give one per replica, or one mapping for all)")
        for r in res:
            for k, v in r.items():
                if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                    raise ConfigError(f"deployment {self.name!r}: resources.{k} must be a number >= 0, got {v!r}")
        if self.mode not in ("sync", "batch"):
            raise ConfigError(f"deployment {self.name!r}: mode must be 'sync' or 'batch', got {self.mode!r}")
        from metaeval.judges.backends import backend_class

        backend_class(self)  # the backend is registered (and has a batch API in batch mode), else one line
        if not isinstance(self.batch, Mapping):
            raise ConfigError(f"deployment {self.name!r}: batch must be a mapping of batch settings")
        from metaeval.security.secrets import refuse_credentials

        refuse_credentials(self.base_url, self.params, f"deployment {self.name!r}")  # keys only via api_key_env

    @property
    def effective_prices(self) -> Prices:
        """The prices this deployment's calls pay (batch prices in ``mode: batch``)."""
        return self.prices.for_mode(self.mode)

    def replica_resources(self, i: int) -> dict[str, float]:
        """Ray resources of replica ``i``."""
        res = self.resources
        if isinstance(res, (list, tuple)):
            res = res[i] if len(res) > 1 else res[0]
        return dict(res or {})

    def identity(self) -> dict[str, Any]:
        """The ``IDENTITY_FIELDS`` the config named, with their values (a job key hashes this, so the key of a config
        that leaves ``revision`` or ``name`` out stays what it was before they existed; ``name`` defaults to the
        model, ``revision`` to null, ``params`` to none, and a field left at its default changes no reply)."""
        return {k: dict(v) if k == "params" else v for k in self.IDENTITY_FIELDS if k in self.given
                for v in (getattr(self, k),)}

    def replaced(self, **changes: Any) -> "Deployment":
        """``dataclasses.replace`` whose changed fields count as named by the config (``identity``); a change to
        ``limits`` may be a mapping of the ``Limits`` fields to replace (a replica's share)."""
        import dataclasses

        if isinstance(changes.get("limits"), Mapping):
            changes["limits"] = dataclasses.replace(self.limits, **changes["limits"])
        return dataclasses.replace(self, **changes, given=self.given | set(changes))

    @classmethod
    def from_dict(cls, obj: "Mapping[str, Any] | Deployment", where: str = "deployment") -> "Deployment":
        if isinstance(obj, cls):  # already typed (the catalog's): never parsed twice
            return obj
        if not isinstance(obj, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {type(obj).__name__}")
        obj = dict(obj)
        if "api_key" in obj:
            raise ConfigError(f"{where}: put the key in an environment variable and name it in api_key_env")
        known = {f.name for f in fields(cls)} - _INTERNAL
        unknown = sorted(set(obj) - known)
        if unknown:
            raise ConfigError(f"{where}: unknown field(s) {unknown}; known: {sorted(known)}")
        for key in ("backend", "model"):
            if not isinstance(obj.get(key), str) or not obj[key]:
                raise ConfigError(f"{where}: field {key!r} is required (a non-empty string)")
        given = frozenset(k for k in IDENTITY_FIELDS if k in obj)  # before any default is filled in
        obj.setdefault("name", obj["model"])
        obj["limits"] = _sub(Limits, obj.get("limits"), f"{where}.limits")
        obj["prices"] = _sub(Prices, obj.get("prices"), f"{where}.prices")
        params = obj.get("params") or {}
        if not isinstance(params, Mapping):
            raise ConfigError(f"{where}.params: expected a mapping")
        obj["params"] = dict(params)
        if isinstance(obj.get("resources"), (list, tuple)):
            obj["resources"] = tuple(dict(r) if isinstance(r, Mapping) else r for r in obj["resources"])
            obj.setdefault("replicas", len(obj["resources"]))
        elif isinstance(obj.get("resources"), Mapping):
            obj["resources"] = dict(obj["resources"])
        if isinstance(obj.get("batch"), Mapping):
            obj["batch"] = dict(obj["batch"])
        return cls(**obj, given=given)

    def api_key(self) -> str:
        """The key from the environment variable named in ``api_key_env``; a clear error when it is not set."""
        if not self.api_key_env:
            return NO_KEY
        value = os.environ.get(self.api_key_env, "")
        if not value.strip():
            raise ConfigError(
                f"deployment {self.name!r}: environment variable {self.api_key_env} is not set "
                f"(it must hold the API key for backend {self.backend!r})"
            )
        return value.strip()

    def public_dict(self) -> dict[str, Any]:
        """Everything about the deployment that may be written down (no key: the dataclass never holds it)."""
        d = asdict(self)
        for k in _INTERNAL:
            d.pop(k, None)
        d["params"] = dict(self.params)
        return d


def _sub(cls: type, obj: Any, where: str) -> Any:
    if obj is None:
        return cls()
    if isinstance(obj, cls):
        return obj
    if not isinstance(obj, Mapping):
        raise ConfigError(f"{where}: expected a mapping, got {type(obj).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(obj) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {unknown}; known: {sorted(known)}")
    try:
        return cls(**dict(obj))
    except TypeError as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    except ConfigError as exc:  # a field's rule: named in full (deployment.prices.input_per_1m ...)
        raise ConfigError(f"{where}.{exc}") from None


def estimate_tokens(obj: Any) -> int:
    """Tokens of a text or JSON-able object at about 4 characters per token (the dry-run model; Nothing is sent)."""
    import math

    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, default=str)
    return math.ceil(len(text) / 4)


def load_config_file(path: str | os.PathLike) -> dict[str, Any]:
    """A judge or deployment config from a YAML or JSON file (a plain dict)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such config file")
    from metaeval.errors import FormatError
    from metaeval.io.yamlsafe import load_yaml, read_yaml_text

    text = read_yaml_text(p)  # size-checked UTF-8: one line otherwise
    try:
        if p.suffix == ".json":
            obj = json.loads(text)
        else:
            obj = load_yaml(text, str(p))  # alias expansion bounded, duplicated keys refused
    except FormatError:
        raise
    except Exception as exc:  # yaml.YAMLError / json.JSONDecodeError
        raise ConfigError(f"{p}: cannot parse config ({exc})") from exc
    if not isinstance(obj, dict):
        raise ConfigError(f"{p}: a config must be a mapping")
    return obj
