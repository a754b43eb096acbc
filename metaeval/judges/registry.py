"""Judges by name: ``make_judge(config)`` builds one from a plain dict (never a Hydra DictConfig).

==========  ==========================================  =====================================================
name        class                                       config fields (besides ``judge``, optional ``name``)
==========  ==========================================  =====================================================
lexical     ``lexical.LexicalJudge``                    support_threshold, partial_threshold, vital_min_docs..
embedding   ``embedding.EmbeddingJudge`` (extra embed)  support_threshold, partial_threshold, model_path
local-llm   ``local_llm.LocalLLMJudge`` (extra local)   model_path, prompts, max_reasks, cache, n_ctx, port
replay      ``replay.ReplayJudge``                      labels (path or LabelSet)
simulated   ``replay.SimulatedJudge``                   reference, confusion (name/matrix/file), seed
llm         ``llm.LLMJudge``                            deployment {backend: openai|anthropic, ...}, prompts,
                                                        max_reasks, cache (SQLite path), seed, sample_index
==========  ==========================================  =====================================================

A config that has ``backend`` but no ``judge`` is a bare deployment and means ``judge: llm``.
``resolve_judge_config(spec)`` accepts a registry name or a YAML/JSON file path.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Mapping

from metaeval.errors import ConfigError
from metaeval.judges.base import Judge
from metaeval.judges.config import load_config_file

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


def resolve_judge_config(spec: str | Mapping[str, Any]) -> dict[str, Any]:
    """A plain judge config from a mapping, a registry name or a YAML/JSON file."""
    if isinstance(spec, Mapping):
        config = dict(spec)
    elif isinstance(spec, str) and spec in JUDGES:
        config = {"judge": spec}
    elif isinstance(spec, str) and Path(spec).suffix in (".yaml", ".yml", ".json"):
        config = load_config_file(spec)
    else:
        raise ConfigError(f"judge {spec!r}: not a known judge ({', '.join(sorted(JUDGES))}) nor a .yaml/.json config file")
    if "judge" not in config:
        if "backend" in config:
            config = {"judge": "llm", "deployment": config}
        else:
            raise ConfigError(f"judge config {spec if isinstance(spec, str) else ''} needs a 'judge' field or a 'backend'")
    return config


def make_judge(spec: str | Mapping[str, Any]) -> Judge:
    config = resolve_judge_config(spec)
    return judge_class(str(config["judge"])).from_config(config)
