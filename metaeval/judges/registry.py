"""Judges by name: the registry of judge classes (registry name -> class).

==========  ==========================================  =====================================================
name        class                                       config fields (besides ``judge``, optional ``name``)
==========  ==========================================  =====================================================
lexical     ``lexical.LexicalJudge``                    support_threshold, partial_threshold, vital_share...
embedding   ``embedding.EmbeddingJudge`` (extra embed)  support_threshold, partial_threshold, model_path
local-llm   ``local_llm.LocalLLMJudge`` (extra local)   model_path, prompts, max_reasks, cache, n_ctx, port
replay      ``replay.ReplayJudge``                      labels (path or LabelSet)
simulated   ``replay.SimulatedJudge``                   reference, confusion (name/matrix/file), seed
llm         ``llm.LLMJudge``                            deployment {backend: openai|anthropic, ...}, prompts,
                                                        max_reasks, cache (SQLite path), seed, sample_index
==========  ==========================================  =====================================================

A config that has ``backend`` but no ``judge`` is a bare deployment and means ``judge: llm``.  Names, files and
mappings are resolved into typed specs by ``metaeval.judges.catalog.resolve_judge`` (the only resolution path) and
built by ``metaeval.judges.catalog.build_judge``; each class declares the stages it can perform in ``STAGES``.
This module imports no other judge module (the catalog reads it, never the other way round).
"""

from __future__ import annotations

import importlib
from typing import Any

from metaeval.errors import ConfigError
from metaeval.judges.base import Judge

#: registry name -> ``"module:Class"`` (importable in any process) or the class itself (registered in this process
#: by ``metaeval.judges.plugins``).  Read it; change it only through ``register`` / ``unregister``.
JUDGES: dict[str, "str | type"] = {
    "lexical": "metaeval.judges.lexical:LexicalJudge",
    "embedding": "metaeval.judges.embedding:EmbeddingJudge",
    "local-llm": "metaeval.judges.local_llm:LocalLLMJudge",
    "replay": "metaeval.judges.replay:ReplayJudge",
    "simulated": "metaeval.judges.replay:SimulatedJudge",
    "llm": "metaeval.judges.llm:LLMJudge",
}
#: the built-in names (never replaced or removed)
BUILTIN: frozenset[str] = frozenset(JUDGES)


def judge_class(name: str) -> type[Judge]:
    target = JUDGES.get(name)
    if target is None:
        raise ConfigError(f"unknown judge {name!r}; known: {', '.join(sorted(JUDGES))}")
    if isinstance(target, type):
        return target
    module, _, cls = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in cls.split("."):  # a nested class path (``Outer.Inner``)
        obj = getattr(obj, part)
    return obj


def register(name: str, target: "str | type") -> None:
    """Add (or replace) the non-built-in registry name ``name``: a ``"module:Class"`` path or a class."""
    if name in BUILTIN:
        raise ConfigError(f"judge name {name!r} is a built-in judge ({JUDGES[name]}); choose another name")
    JUDGES[name] = target


def unregister(name: str) -> None:
    """Forget a registered name (built-in judges cannot be removed)."""
    if name not in BUILTIN:
        JUDGES.pop(name, None)
