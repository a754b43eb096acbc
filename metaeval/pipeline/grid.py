"""Grid cells: judge x prompt x strategy, with the judge configs the workers are built from.

The core receives plain dicts (``metaeval.commands.sweep`` composes them with Hydra).  A cell whose judge cannot
perform a stage its strategy needs (e.g. the simulated judge only assigns) is skipped with a stated reason, as
is an optional judge whose extra is not installed.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from metaeval.pipeline.specs import content_hash, judge_identity
from metaeval.pipeline.strategies import Strategy, get_strategy

#: judge kinds whose output depends on the prompt templates
PROMPTED = {"llm", "local-llm"}
#: stages each judge kind can perform (default: all three)
JUDGE_STAGES: dict[str, tuple[str, ...]] = {"replay": ("importance", "assign"), "simulated": ("assign",)}


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


def make_cell(judge_name: str, judge_cfg: dict[str, Any], prompt_cfg: dict[str, Any], strategy_name: str,
              cache_path: str | None) -> Cell:
    strategy = get_strategy(strategy_name)
    cfg = dict(judge_cfg)
    kind = str(cfg.get("judge", "llm" if "deployment" in cfg else "?"))
    prompted = kind in PROMPTED
    if prompted:
        cfg["prompts"] = {t: prompt_cfg[t] for t in ("create", "importance", "assign") if prompt_cfg.get(t)}
        if cache_path and "cache" not in cfg:
            cfg["cache"] = cache_path
    prompt_name = str(prompt_cfg.get("name", "default")) if prompted else "none"
    prompt_id = content_hash(cfg.get("prompts", {})) if prompted else "none"
    identity = {k: v for k, v in cfg.items() if k not in ("prompts", "cache", "supports", "requires", "label")}
    jid = judge_identity(identity)
    cell_id = f"{judge_name}__{prompt_name}__{strategy.name}" if prompted else f"{judge_name}__{strategy.name}"
    cell = Cell(cell_id, judge_name, prompt_name, strategy, cfg, jid, prompt_id)
    can = tuple(cfg.get("supports") or JUDGE_STAGES.get(kind, ("create", "importance", "assign")))
    lacking = [s for s in strategy.judge_stages if s not in can]
    missing = missing_requirements(cfg)
    if missing:
        cell.skipped = f"extra not installed (missing {', '.join(missing)})"
    elif lacking:
        cell.skipped = f"judge {judge_name!r} cannot perform stage(s) {', '.join(lacking)} needed by {strategy.name}"
    return cell


def expand_grid(judges: dict[str, dict[str, Any]], prompts: dict[str, dict[str, Any]], strategies: list[str],
                cache_path: str | None = None) -> list[Cell]:
    """Every judge x prompt x strategy; non-prompted judges appear once per strategy (prompts do not apply)."""
    cells: dict[str, Cell] = {}
    for jname, jcfg in judges.items():
        for pname, pcfg in prompts.items():
            for sname in strategies:
                cell = make_cell(jname, jcfg, pcfg, sname, cache_path)
                cells.setdefault(cell.id, cell)
    return list(cells.values())
