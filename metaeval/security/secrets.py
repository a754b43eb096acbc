"""Secrets by value: every configured key is known to the redaction, and no configured string carries one.

A key reaches metaeval one way only: the environment variable a deployment names in ``api_key_env`` (read by
``Deployment.api_key``, sent by the provider SDK as the ``Authorization`` header).  Anything else is refused when
the configuration is composed, with one line saying where keys belong:

* :func:`credential_problem` - a deployment whose ``base_url`` carries user info (``http://user:KEY@host``) or a
  credential in its query string, or whose ``params`` (generation parameters, ``extra_headers``, ``headers``,
  ``default_headers``, ``extra_body`` at any depth) hold a credential-named entry (``api_key``, ``token``,
  ``authorization``, ``x-api-key``, ...) or a header value that is a credential (``Bearer ...``, ``Basic ...``);
* :func:`secret_in_config` - the *value* of a configured secret inside any configured string (the results folder
  ``name``, a path, a ``model`` name, a parameter): such a value came from an interpolation such as
  ``name=${oc.env:MY_KEY}`` or was typed on the command line.  The secrets are (:func:`configured_secrets`) the
  values of every ``api_key_env`` variable of the composed judges plus every ``${oc.env:VAR}`` that Hydra resolved
  during the composition whose variable name says it is a credential (``KEY``, ``TOKEN``, ``SECRET``,
  ``PASSWORD``, ``AUTH``, ``CREDENTIAL``) or whose value looks like a key (:func:`looks_like_key`: 16+ characters
  without spaces or path separators mixing letters and digits) - ``${oc.env:HOME}`` is a path, not a secret.
  A string "carries" a secret when it contains the whole value (secrets of at least ``MIN_SCANNED`` = 8
  characters: a shorter one would match ordinary words such as a model name).

Every such value is also registered with the logging redaction (``metaeval.security.redaction.protect_loggers``),
so it is redacted from any log line even where it was not refused.  The refusal names where the value was found
and which variable it came from, never the value.
"""

from __future__ import annotations

import os
import re
import threading
import urllib.parse
from typing import Any, Iterator, Mapping

from metaeval.errors import ConfigError

#: parameter / header names that carry a credential (compared lower-cased, '-' as '_')
CREDENTIAL_NAMES = frozenset({
    "api_key", "apikey", "key", "token", "access_token", "auth_token", "api_token", "id_token", "refresh_token",
    "secret", "client_secret", "password", "passwd", "authorization", "proxy_authorization", "x_api_key",
    "api_secret", "bearer", "auth", "cookie", "x_goog_api_key", "ocp_apim_subscription_key", "anthropic_api_key",
    "openai_api_key",
})
#: parameters whose contents are schemas (property names such as "token" are data, not credentials)
_SCHEMAS = frozenset({"response_format", "tools", "tool_choice", "functions", "guided_json", "json_schema"})
#: a header value that is a credential whatever its name
_CREDENTIAL_VALUE = re.compile(r"^\s*(bearer|basic|token|digest)\s+\S", re.IGNORECASE)
#: an environment variable whose name says it holds a credential
_SECRET_VAR = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH|CREDENTIAL)", re.IGNORECASE)

WHERE_KEYS_BELONG = ("put the key in an environment variable and name it in deployment.api_key_env (the backend "
                     "sends it as the Authorization header); keys are never part of a URL, a parameter, a header "
                     "or any other configured value")

#: the shortest secret searched for in configured strings
MIN_SCANNED = 8


class SecretInConfig(ConfigError):
    """A configured string holds a secret's value."""


_LOCK = threading.Lock()
#: variable -> value of every credential-like ``${oc.env:VAR}`` resolved in this process
_RESOLVED: dict[str, str] = {}


def _norm(name: Any) -> str:
    return str(name).strip().lower().replace("-", "_")


def looks_like_key(value: str) -> bool:
    """A value shaped like an API key: 16+ characters, no whitespace or path separator, letters and digits."""
    v = value.strip()
    return (len(v) >= 16 and not re.search(r"[\s/\\]", v) and bool(re.search(r"[A-Za-z]", v))
            and bool(re.search(r"\d", v)))


def _is_secret(var: str, value: Any) -> bool:
    return isinstance(value, str) and len(value.strip()) >= 4 and (bool(_SECRET_VAR.search(var)) or looks_like_key(value))


def install_env_recorder() -> None:
    """Wrap OmegaConf's ``oc.env`` resolver so every credential-like value it resolves is recorded (and
    registered with the logging redaction).  Idempotent."""
    from omegaconf import OmegaConf
    from omegaconf.resolvers import oc

    with _LOCK:
        if getattr(install_env_recorder, "_done", False):
            return

        def env(key: str, default: Any = oc._DEFAULT_MARKER_) -> Any:  # same signature as oc.env
            value = oc.env(key, default) if default is not oc._DEFAULT_MARKER_ else oc.env(key)
            if _is_secret(str(key), value):
                remember(f"environment variable {key}", str(value).strip())
            return value

        OmegaConf.register_new_resolver("oc.env", env, replace=True)
        install_env_recorder._done = True  # type: ignore[attr-defined]


def remember(source: str, value: str) -> None:
    """Record a secret ``value`` (``source`` names where it comes from) and register it with the log redaction."""
    from metaeval.security.redaction import protect_loggers

    if value and len(value) >= 4:
        with _LOCK:
            _RESOLVED[source] = value
        protect_loggers(value)


def _deployments(config: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    judges = [config.get("judge"), *((config.get("judges") or {}).values() if isinstance(config.get("judges"), Mapping) else ())]
    for j in judges:
        dep = j.get("deployment") if isinstance(j, Mapping) else None
        if isinstance(dep, Mapping):
            yield dep


def configured_secrets(config: Mapping[str, Any] | None = None) -> dict[str, str]:
    """source -> value of every secret this configuration knows: each judge's ``api_key_env`` variable (when set)
    and each credential-like ``${oc.env:VAR}`` resolved so far."""
    out: dict[str, str] = {}
    for dep in _deployments(config or {}):
        var = dep.get("api_key_env")
        value = os.environ.get(str(var), "").strip() if var else ""
        if value and len(value) >= 4:
            out[f"environment variable {var}"] = value
    with _LOCK:
        out.update(_RESOLVED)
    return out


def _strings(obj: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(obj, str):
        yield path, obj
    elif isinstance(obj, Mapping):
        for k, v in obj.items():
            sub = f"{path}.{k}" if path else str(k)
            yield from _strings(str(k), sub)  # a key is a configured string too
            yield from _strings(v, sub)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _strings(v, f"{path}[{i}]")


def secret_in_config(config: Mapping[str, Any], secrets: Mapping[str, str] | None = None) -> None:
    """``ConfigError`` (one line, naming the key and the variable, never the value) when a configured string
    carries a secret's value; registers every secret with the log redaction first."""
    from metaeval.security.redaction import protect_loggers

    secrets = configured_secrets(config) if secrets is None else secrets
    for value in secrets.values():
        protect_loggers(value)
    if not secrets:
        return
    for path, s in _strings(config):
        if path.endswith("api_key_env"):
            continue
        for source, value in secrets.items():
            if len(value) >= MIN_SCANNED and value in s:
                raise SecretInConfig(f"{path or 'config'}: holds the value of {source}, a secret; {WHERE_KEYS_BELONG}")


def credential_problem(base_url: Any, params: Any, where: str = "deployment") -> str | None:
    """Why a deployment carries a credential outside ``api_key_env`` (one line), or None."""
    if base_url:
        try:
            p = urllib.parse.urlsplit(str(base_url))
        except ValueError:
            p = None
        if p is not None and (p.username or p.password or "@" in p.netloc):
            return f"{where}: base_url carries user info (user:password@); {WHERE_KEYS_BELONG}"
        if p is not None and p.query:
            for k, _ in urllib.parse.parse_qsl(p.query, keep_blank_values=True):
                if _norm(k) in CREDENTIAL_NAMES:
                    return f"{where}: base_url carries a credential in its query string ({k}=...); {WHERE_KEYS_BELONG}"
    problem = _param_problem(params, "params")
    return f"{where}: {problem}" if problem else None


def _param_problem(obj: Any, path: str) -> str | None:
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            sub = f"{path}.{k}"
            if _norm(k) in _SCHEMAS:  # a JSON schema's property names are not parameters
                continue
            if _norm(k) in CREDENTIAL_NAMES and v not in (None, "", False):
                return f"{sub}: a credential in the generation parameters or headers is refused; {WHERE_KEYS_BELONG}"
            problem = _param_problem(v, sub)
            if problem:
                return problem
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            problem = _param_problem(v, f"{path}[{i}]")
            if problem:
                return problem
    elif isinstance(obj, str) and _CREDENTIAL_VALUE.match(obj):
        return f"{path}: a credential (an Authorization-style value) is refused; {WHERE_KEYS_BELONG}"
    return None


def refuse_credentials(base_url: Any, params: Any, where: str = "deployment") -> None:
    """``ConfigError`` with :func:`credential_problem`'s line when there is one."""
    problem = credential_problem(base_url, params, where)
    if problem:
        raise ConfigError(problem)
