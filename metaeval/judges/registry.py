"""Judges by name: ``make_judge(config)`` builds one from a plain dict (never a Hydra DictConfig).

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
mappings are resolved into typed specs by ``metaeval.judges.catalog.resolve_judge`` (the only resolution path);
each class declares the stages it can perform in ``STAGES``.
"""

from __future__ import annotations

import importlib
from typing import Any

from metaeval.errors import ConfigError
from metaeval.judges.base import Judge

JUDGES: dict[str, str] = {
    "lexical": "metaeval.judges.lexical:LexicalJudge",
    "embedding": "metaeval.judges.embedding:EmbeddingJudge",
    "local-llm": "metaeval.judges.local_llm:LocalLLMJudge",
    "replay": "metaeval.judges.replay:ReplayJudge",
    "simulated": "metaeval.judges.replay:SimulatedJudge",
    "llm": "metaeval.judges.llm:LLMJudge",
}


def judge_class(name: str) -> type[Judge]:
    target = JUDGES.get(name)
    if target is None:
        raise ConfigError(f"unknown judge {name!r}; known: {', '.join(sorted(JUDGES))}")
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


def make_judge(spec: Any) -> Judge:
    """A judge from a name, a mapping or a ``JudgeSpec``, resolved by ``metaeval.judges.catalog`` (the one path)."""
    from metaeval.judges.catalog import build_judge

    return build_judge(spec)
