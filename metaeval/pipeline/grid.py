"""Grid cells: judge x prompt x strategy, each holding the typed ``JudgeSpec`` its workers are built from.

The core receives plain dicts and specs (``metaeval.workflow.compose`` composes them with Hydra and resolves every
judge through ``metaeval.judges.catalog``).  In a multi-cell grid a cell whose judge cannot perform a stage its
strategy needs (the judge class's ``STAGES``; e.g. the simulated judge only assigns) is skipped with a stated
reason, as is an optional judge whose extra is not installed; ``check_cells`` makes the same conditions errors for
a single-cell run.  With ``sweep.relevance=judge`` a cell whose strategy creates nuggets also needs the judge's
``relevance`` stage (UMBRELA-style document grading; see ``metaeval.judges.base``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from metaeval.errors import ConfigError
from metaeval.judges.catalog import ALL_STAGES, JudgeSpec, check_available, lacking_stages
from metaeval.hashing import content_hash
from metaeval.pipeline.specs import judge_identity
from metaeval.pipeline.strategies import Strategy, get_strategy

#: sweep.relevance: where nugget creation's documents come from
RELEVANCE_MODES: tuple[str, ...] = ("qrels", "judge")


@dataclass
class Cell:
    id: str
    judge_name: str
    prompt_name: str
    strategy: Strategy
    judge: JudgeSpec
    judge_id: str
    prompt_id: str
    skipped: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def judge_config(self) -> dict[str, Any]:
        """The judge's config as plain data, its deployment written down (``JudgeSpec.public_dict``: provenance)."""
        return self.judge.public_dict()

    @property
    def worker_id(self) -> str:
        return f"{self.judge_name}:{self.judge_id}:{self.prompt_id}"

    def describe(self) -> dict[str, Any]:
        return {"judge": self.judge_name, "prompt": self.prompt_name, "strategy": self.strategy.name,
                "judge_config": self.judge.public_dict(), "judge_id": self.judge_id, "prompt_id": self.prompt_id}


def needed_stages(strategy: Strategy, relevance: str = "qrels") -> tuple[str, ...]:
    """The judge stages a cell runs: its strategy's, with ``relevance`` first when the judge grades documents."""
    if relevance not in RELEVANCE_MODES:
        raise ConfigError(f"sweep.relevance={relevance!r}; expected one of {', '.join(RELEVANCE_MODES)}")
    stages = strategy.judge_stages
    return ("relevance", *stages) if relevance == "judge" and "create" in stages else stages


def make_cell(judge: JudgeSpec, prompt_cfg: dict[str, Any], strategy_name: str, cache_path: str | None,
              relevance: str = "qrels") -> Cell:
    strategy = get_strategy(strategy_name)
    if judge.prompted:
        options: dict[str, Any] = {"prompts": {t: prompt_cfg[t] for t in ALL_STAGES if prompt_cfg.get(t)}}
        if cache_path and "cache" not in judge.config:
            options["cache"] = cache_path
        judge = judge.with_options(**options)
    cfg = judge.config
    prompt_name = str(prompt_cfg.get("name", "default")) if judge.prompted else "none"
    prompt_id = content_hash(cfg.get("prompts", {})) if judge.prompted else "none"
    jid = judge_identity(judge)
    name = judge.name
    cell_id = f"{name}__{prompt_name}__{strategy.name}" if judge.prompted else f"{name}__{strategy.name}"
    cell = Cell(cell_id, name, prompt_name, strategy, judge, jid, prompt_id)
    lacking = lacking_stages(judge, needed_stages(strategy, relevance))
    missing = judge.missing_requirements()
    if missing:
        cell.skipped = f"extra not installed (missing {', '.join(missing)})"
    elif lacking:
        cell.skipped = f"judge {name!r} cannot perform stage(s) {', '.join(lacking)} needed by {strategy.name}"
    return cell


def expand_grid(judges: list[JudgeSpec], prompts: dict[str, dict[str, Any]], strategies: list[str],
                cache_path: str | None = None, relevance: str = "qrels") -> list[Cell]:
    """Every judge x prompt x strategy; non-prompted judges appear once per strategy (prompts do not apply).
    ``relevance`` is ``sweep.relevance`` (``qrels`` | ``judge``)."""
    cells: dict[str, Cell] = {}
    for judge in judges:
        for pcfg in prompts.values():
            for sname in strategies:
                cell = make_cell(judge, pcfg, sname, cache_path, relevance)
                cells.setdefault(cell.id, cell)
    return list(cells.values())


def check_cells(cells: list[Cell], relevance: str = "qrels", *, need_keys: bool = True, single: bool = False) -> None:
    """Driver-side checks before any job runs or anything is written (``ConfigError``, one line):

    * every cell that will run: its judge can do its stages, its extra is installed and (``need_keys``) its
      API-key variable is set;
    * ``single`` (one requested cell, ``grid=single``): a cell that would be skipped is an error instead;
    * a grid in which every cell is skipped is an error.
    """
    for c in cells:
        if c.skipped and single:
            check_available(c.judge, needed_stages(c.strategy, relevance), need_key=False, strategy=c.strategy.name)
            raise ConfigError(f"cell {c.id}: {c.skipped}")
        if not c.skipped:
            check_available(c.judge, needed_stages(c.strategy, relevance), need_key=need_keys, strategy=c.strategy.name)
    if cells and all(c.skipped for c in cells):
        raise ConfigError(f"every cell of the grid is skipped (first: {cells[0].id}: {cells[0].skipped})")


def prune_grid(cells: list[Cell]) -> tuple[list[Cell], list[str]]:
    """The cells of a grid that can run here, and one line per judge left out (``metaeval.workflow.compose``):

    * a judge whose optional extra is not installed: all its cells, named once with the install command
      (``metaeval.judges.catalog.install_hint``) instead of one "skipped" row per cell;
    * a judge that cannot perform a strategy's stages (the simulated judge only assigns) while it can run another
      strategy of the grid: the cells of that strategy ("joins only human_auto").

    A judge none of whose cells could run keeps them (skipped rows; ``check_cells`` makes an all-skipped grid an
    error), so a grid never silently becomes empty."""
    from metaeval.judges.catalog import install_hint

    by_judge: dict[str, list[Cell]] = {}
    for c in cells:
        by_judge.setdefault(c.judge_name, []).append(c)
    dropped: set[str] = set()
    notes: list[str] = []
    for name, own in by_judge.items():
        missing = own[0].judge.missing_requirements()
        if missing:
            notes.append(f"judge {name} is not in this run: its extra is not installed (missing {', '.join(missing)}); "
                         f"{install_hint(missing)}")
            dropped.update(c.id for c in own)
            continue
        runnable = [c for c in own if not c.skipped]
        never = [c for c in own if c.skipped]
        if runnable and never:
            ran = sorted({c.strategy.name for c in runnable})
            notes.append(f"judge {name} joins only {', '.join(ran)}: "
                         + "; ".join(sorted({c.skipped.replace(f'judge {name!r} ', '') for c in never})))
            dropped.update(c.id for c in never)
    kept = [c for c in cells if c.id not in dropped]
    if not kept:  # nothing could run: keep the grid as it was (check_cells names the reason, as an error)
        return list(cells), []
    return kept, notes
