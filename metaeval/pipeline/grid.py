"""Grid cells: judge x prompt x strategy, with the judge configs the workers are built from.

The core receives plain dicts (``metaeval.commands.sweep`` composes them with Hydra).  A cell whose judge cannot
perform a stage its strategy needs (e.g. the simulated judge only assigns) is skipped with a stated reason, as
is an optional judge whose extra is not installed.  With ``sweep.relevance=judge`` a cell whose strategy creates
nuggets also needs the judge's ``relevance`` stage (UMBRELA-style document grading; see
``metaeval.judges.base``): the replay, simulated and embedding judges cannot grade relevance, so such a cell is
skipped with the reason.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from metaeval.pipeline.specs import content_hash, judge_identity
from metaeval.pipeline.strategies import Strategy, get_strategy

#: judge kinds whose output depends on the prompt templates
PROMPTED = {"llm", "local-llm"}
#: stages each judge kind can perform (default: ``ALL_STAGES``)
ALL_STAGES: tuple[str, ...] = ("relevance", "create", "importance", "assign")
JUDGE_STAGES: dict[str, tuple[str, ...]] = {"replay": ("importance", "assign"), "simulated": ("assign",),
                                            "embedding": ("create", "importance", "assign")}
#: sweep.relevance: where nugget creation's documents come from
RELEVANCE_MODES: tuple[str, ...] = ("qrels", "judge")


@dataclass
class Cell:
    id: str
    judge_name: str
    prompt_name: str
    strategy: Strategy
    judge_config: dict[str, Any]
    judge_id: str
    prompt_id: str
    skipped: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def worker_id(self) -> str:
        return f"{self.judge_name}:{self.judge_id}:{self.prompt_id}"

    def describe(self) -> dict[str, Any]:
        from metaeval.judges.config import Deployment

        cfg = {k: v for k, v in self.judge_config.items() if k not in ("reference",)}
        if isinstance(cfg.get("deployment"), dict):
            cfg["deployment"] = Deployment.from_dict(cfg["deployment"]).public_dict()
        return {"judge": self.judge_name, "prompt": self.prompt_name, "strategy": self.strategy.name,
                "judge_config": cfg, "judge_id": self.judge_id, "prompt_id": self.prompt_id}


def missing_requirements(judge_config: dict[str, Any]) -> list[str]:
    """Modules named in ``requires`` that are not importable."""
    return [m for m in judge_config.get("requires", []) or [] if importlib.util.find_spec(m) is None]


def needed_stages(strategy: Strategy, relevance: str = "qrels") -> tuple[str, ...]:
    """The judge stages a cell runs: its strategy's, with ``relevance`` first when the judge grades documents."""
    if relevance not in RELEVANCE_MODES:
        from metaeval.errors import ConfigError

        raise ConfigError(f"sweep.relevance={relevance!r}; expected one of {', '.join(RELEVANCE_MODES)}")
    stages = strategy.judge_stages
    return ("relevance", *stages) if relevance == "judge" and "create" in stages else stages


def lacking_stages(judge_config: dict[str, Any], strategy: Strategy, relevance: str = "qrels") -> list[str]:
    """The stages a cell needs that its judge cannot perform (``supports`` in the config, else ``JUDGE_STAGES``)."""
    kind = str(judge_config.get("judge", "llm" if "deployment" in judge_config else "?"))
    can = tuple(judge_config.get("supports") or JUDGE_STAGES.get(kind, ALL_STAGES))
    return [s for s in needed_stages(strategy, relevance) if s not in can]


def make_cell(judge_name: str, judge_cfg: dict[str, Any], prompt_cfg: dict[str, Any], strategy_name: str,
              cache_path: str | None, relevance: str = "qrels") -> Cell:
    strategy = get_strategy(strategy_name)
    cfg = dict(judge_cfg)
    kind = str(cfg.get("judge", "llm" if "deployment" in cfg else "?"))
    prompted = kind in PROMPTED
    if prompted:
        cfg["prompts"] = {t: prompt_cfg[t] for t in ALL_STAGES if prompt_cfg.get(t)}
        if cache_path and "cache" not in cfg:
            cfg["cache"] = cache_path
    prompt_name = str(prompt_cfg.get("name", "default")) if prompted else "none"
    prompt_id = content_hash(cfg.get("prompts", {})) if prompted else "none"
    identity = {k: v for k, v in cfg.items() if k not in ("prompts", "cache", "supports", "requires", "label")}
    jid = judge_identity(identity)
    cell_id = f"{judge_name}__{prompt_name}__{strategy.name}" if prompted else f"{judge_name}__{strategy.name}"
    cell = Cell(cell_id, judge_name, prompt_name, strategy, cfg, jid, prompt_id)
    lacking = lacking_stages(cfg, strategy, relevance)
    missing = missing_requirements(cfg)
    if missing:
        cell.skipped = f"extra not installed (missing {', '.join(missing)})"
    elif lacking:
        cell.skipped = f"judge {judge_name!r} cannot perform stage(s) {', '.join(lacking)} needed by {strategy.name}"
    return cell


def expand_grid(judges: dict[str, dict[str, Any]], prompts: dict[str, dict[str, Any]], strategies: list[str],
                cache_path: str | None = None, relevance: str = "qrels") -> list[Cell]:
    """Every judge x prompt x strategy; non-prompted judges appear once per strategy (prompts do not apply).
    ``relevance`` is ``sweep.relevance`` (``qrels`` | ``judge``)."""
    cells: dict[str, Cell] = {}
    for jname, jcfg in judges.items():
        for pname, pcfg in prompts.items():
            for sname in strategies:
                cell = make_cell(jname, jcfg, pcfg, sname, cache_path, relevance)
                cells.setdefault(cell.id, cell)
    return list(cells.values())
