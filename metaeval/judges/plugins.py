"""Judges plugged in from Python: ``register_judge(name, judge)`` makes ``name`` a registry name.

``judge`` may be

* a ``Judge`` subclass (with the usual ``from_config(config)`` classmethod; ``Judge`` provides none, so a class
  without one is built with no arguments), or
* a ``Judge`` instance, used as it is for every cell that names it (``from_config`` returns that object).

After registration ``resolve_judge(name)``, ``metaeval assign --judge name`` (in the same process) and
``metaeval.sweep(..., judges={name: judge})`` find it like a built-in judge.  Registrations live in this process:
a Ray worker process does not see them, so Python judges run with ``runtime=serial`` (``metaeval.sweep`` sets that
when it is given judges), unless the class is importable by module path (then ``module:Class`` is registered and
any process can build it).
"""

from __future__ import annotations

from typing import Any, Mapping

from metaeval.errors import ConfigError


def register_judge(name: str, judge: Any) -> str:
    """Register ``judge`` (a class or an instance) under registry ``name``; returns ``name``."""
    from metaeval.judges.base import Judge
    from metaeval.judges.registry import register

    if not isinstance(name, str) or not name or ":" in name or "/" in name:
        raise ConfigError(f"judge name {name!r}: use a plain name (letters, digits, '-', '_')")
    if isinstance(judge, type):
        if not issubclass(judge, Judge):
            raise ConfigError(f"register_judge({name!r}): {judge.__name__} is not a metaeval.judges.base.Judge subclass")
        if not hasattr(judge, "from_config"):
            register(name, _no_arg_factory(judge))
        elif judge.__module__ not in ("__main__", "builtins") and "<locals>" not in judge.__qualname__:
            register(name, f"{judge.__module__}:{judge.__qualname__}")  # importable: any process can build it
        else:
            register(name, judge)
    elif isinstance(judge, Judge):
        register(name, _instance_factory(judge))
    else:
        raise ConfigError(f"register_judge({name!r}): expected a Judge subclass or instance, got {type(judge).__name__}")
    return name


def unregister_judge(name: str) -> None:
    """Forget a judge registered here (built-in judges cannot be removed)."""
    from metaeval.judges.registry import unregister

    unregister(name)


def _instance_factory(obj: Any) -> type:
    class _Bound:
        STAGES = getattr(type(obj), "STAGES", getattr(obj, "STAGES", ("relevance", "create", "importance", "assign")))

        @classmethod
        def from_config(cls, config: Mapping[str, Any]) -> Any:
            return obj

        @classmethod
        def check_config(cls, config: Mapping[str, Any]) -> None:
            """A registered object takes no options: nothing to check."""

    _Bound.__name__ = f"Registered[{type(obj).__name__}]"
    return _Bound


def _no_arg_factory(judge_cls: type) -> type:
    class _Factory:
        STAGES = getattr(judge_cls, "STAGES", ("relevance", "create", "importance", "assign"))

        @classmethod
        def from_config(cls, config: Mapping[str, Any]) -> Any:
            return judge_cls()

        @classmethod
        def check_config(cls, config: Mapping[str, Any]) -> None:
            """Built with no arguments: nothing to check."""

    return _Factory
