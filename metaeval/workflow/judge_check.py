"""The judge workflow of ``metaeval judge check`` and ``metaeval judge list``: resolve a judge exactly as ``metaeval
sweep judge=NAME`` does, build it with the cache off (a check must reach the model), make one assignment round trip
on a fixed example, and list the judge configs, registry kinds and prompt templates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

#: the round trip's example: one topic, one answer, three nuggets (two supported, one not)
EXAMPLE = {
    "qid": "check-1",
    "query": "why do cats purr",
    "answer": "Cats purr by twitching the muscles of the larynx. They purr when content, and also when hurt.",
    "nuggets": ["Cats purr using muscles of the larynx", "Cats also purr when injured", "Purring lowers blood pressure in owners"],
}


@dataclass(frozen=True)
class BuiltJudge:
    """The judge to check: the built judge and the seconds its construction took."""

    judge: Any
    setup_s: float


@dataclass(frozen=True)
class RoundTrip:
    """One assignment call through the judge: its result (labels, status, reason, traces) and wall seconds."""

    result: Any
    wall_s: float
    n_nuggets: int


@dataclass(frozen=True)
class JudgeListing:
    """The judges one can name: ``configs`` (name, path, spec or the error that loading it raised), ``kinds``
    (registry name -> target) and ``prompts`` (``(name, template)`` of the built-in templates)."""

    configs: list
    kinds: dict
    prompts: list


def build_for_check(name: str, *, config_dirs: Sequence[str] = (), prompt: str | None = None,
                    base_url: str | None = None) -> BuiltJudge:
    """The judge ``name`` resolved, checked for the assign stage (stage, extra and API-key variable: one line before
    anything is built), its cache off, ``prompt`` as its assignment template and ``base_url`` as its server when
    given (an unreachable server is one line, :func:`reachable`), then built."""
    import time

    from metaeval.judges import build_judge, check_available, resolve_judge
    from metaeval.judges.catalog import default_config_dirs

    spec = resolve_judge(name, config_dirs=default_config_dirs(config_dirs or ()))
    check_available(spec, ("assign",))
    options = {}
    if "cache" in spec.config:
        options["cache"] = None  # a check must reach the model
    if prompt:
        options["prompts"] = {**spec.prompts, "assign": prompt}
    spec = spec.with_options(**options)
    if base_url:
        spec = spec.with_deployment(base_url=base_url)
    if spec.deployment is not None and spec.deployment.base_url:
        reachable(spec.deployment.base_url, spec.name)  # a refused connection: one line now, not retries
    t0 = time.perf_counter()
    judge = build_judge(spec)
    return BuiltJudge(judge, time.perf_counter() - t0)


def round_trip(judge: Any) -> RoundTrip:
    """One assignment of :data:`EXAMPLE`'s nuggets to its answer through ``judge`` (synchronously)."""
    import time

    from metaeval.judges import SyncJudge
    from metaeval.types import Answer, Topic

    with SyncJudge(judge) as sj:
        t1 = time.perf_counter()
        res = sj.assign(Topic(EXAMPLE["qid"], EXAMPLE["query"]), Answer("check", EXAMPLE["qid"], EXAMPLE["answer"]),
                        EXAMPLE["nuggets"])
        wall = time.perf_counter() - t1
    return RoundTrip(res, wall, len(EXAMPLE["nuggets"]))


def reachable(url: str, judge: str, timeout_s: float = 3.0) -> None:
    """One TCP connection to ``url``'s host and port: a refused or unresolvable address, or nothing answering within
    ``timeout_s``, is one ``ConfigError`` line naming the URL (the client would spend its retries and backoff on
    it, about 10 s for ``max_retries: 4``, and end with the SDK's bare "Connection error.")."""
    import socket
    from urllib.parse import urlsplit

    from metaeval.errors import ConfigError

    parts = urlsplit(url)
    if not parts.hostname:
        raise ConfigError(f"judge {judge!r}: deployment.base_url {url!r} is not a URL (expected http://HOST:PORT/...)")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout_s):
            pass
    except OSError as exc:
        why = ("connection refused: is the server running?" if isinstance(exc, ConnectionRefusedError)
               else f"{type(exc).__name__}: {exc.strerror or exc}")
        raise ConfigError(f"judge {judge!r}: cannot connect to {url} ({parts.hostname}:{port}): {why} (start it, or "
                          "point the judge elsewhere: judge check NAME --base-url URL; in a sweep "
                          f"judge.{judge}.deployment.base_url=URL)") from None


def list_judges(config_dirs: Sequence[str] = ()) -> JudgeListing:
    """Every judge config (``(name, path, spec, None)``, or ``(name, path, None, error)`` for a file that does not
    load: listed with its error, not a traceback), the registry's judge kinds and the prompt templates."""
    from metaeval.judges import JUDGES, resolve_judge
    from metaeval.judges.catalog import default_config_dirs, judge_names
    from metaeval.prompts import list_templates, load_template

    dirs = default_config_dirs(config_dirs or ())
    configs = []
    for name, path in judge_names(dirs).items():
        try:
            configs.append((name, path, resolve_judge(name, config_dirs=dirs), None))
        except Exception as exc:  # a broken user file is listed with its error
            configs.append((name, path, None, exc))
    return JudgeListing(configs, dict(JUDGES), [(name, load_template(name)) for name in list_templates()])
