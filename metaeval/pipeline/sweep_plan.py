"""What a sweep will judge, decided before any job runs: the dataset loaded (with an edited nugget set if given),
the cells that can run on it, each cell's number of samples, and the topics.  Every problem is one
``ConfigError`` line, raised before anything is written (``run_sweep`` calls :func:`plan_sweep` first)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Sequence

from metaeval.errors import ConfigError
from metaeval.pipeline.grid import Cell, check_cells
from metaeval.pipeline.settings import PipelineSettings
from metaeval.types import Topic

log = logging.getLogger(__name__)


@dataclass
class SweepPlan:
    """The loaded dataset, every grid cell (skipped ones say why), the cells that run, their samples, the topics."""

    dataset: Any
    cells: list[Cell]
    active: list[Cell]
    #: cell id -> draws of its assignment calls (``sweep.samples``; 1 for a deterministic judge)
    cell_samples: dict[str, int]
    topics: dict[str, Topic]


def plan_sweep(settings: PipelineSettings, cells: Sequence[Cell]) -> SweepPlan:
    """Check the cells' judges, load the dataset and decide which cells run (see the module docstring)."""
    from metaeval.data.dataset import load_dataset

    sw = settings.sweep
    cells = list(cells)
    # a replay from the response cache (offline) or a dry run sends nothing: no key needed
    check_cells(cells, sw.relevance, need_keys=not (sw.dry_run or sw.offline), single=settings.single)
    active = [c for c in cells if not c.skipped]
    ds_cfg = settings.dataset
    dataset = load_dataset(ds_cfg.source or ds_cfg.name)
    if ds_cfg.nuggets:  # an edited or manual nugget set replaces the dataset's human nuggets
        _replace_nuggets(dataset, ds_cfg.nuggets, warn=any(c.strategy.importance == "human" for c in active))
    if dataset.labels is None and any(c.strategy.nuggets == "human" for c in active):
        raise ConfigError(f"dataset {dataset.name!r} has no human labels; human_* strategies need them")
    active = _skip_creation_without_documents(dataset, active, settings.single)
    cell_samples = {c.id: samples_for(c, sw.samples, settings.single) for c in active}
    for c in active:  # the simulated/replay judges read the dataset's own reference labels
        if c.judge.config.get("reference") == "dataset":
            c.judge = c.judge.with_options(reference=dataset.labels)
    topics = {q: Topic(q, dataset.topics.get(q, "")) for q in dataset.qids}
    return SweepPlan(dataset=dataset, cells=cells, active=active, cell_samples=cell_samples, topics=topics)


def _replace_nuggets(dataset: Any, path: str, warn: bool) -> None:
    from metaeval.io.nuggets import read_nuggets

    nug = read_nuggets(path)
    dataset.nuggets = nug[["qid", "nugget_id", "nugget", "importance"]]
    unlabelled = int((nug["importance"] == "FAILED").sum())
    if unlabelled and warn:
        log.warning("%s: %d nugget(s) have no importance label; they count as FAILED importance "
                    "(use strategy=human_judge_importance to let the judge label importance)", path, unlabelled)


def _skip_creation_without_documents(dataset: Any, active: list[Cell], single: bool) -> list[Cell]:
    """Nugget creation reads documents: on a dataset without any (e.g. the NIST assignment export) the cells that
    create nuggets are skipped, or, when they are all that was asked for, it is an error."""
    if any(len(dataset.documents.get(q, [])) for q in dataset.qids):
        return active
    why = f"dataset {dataset.name!r} has no documents, so nugget creation cannot run"
    creating = [c for c in active if "create" in c.strategy.judge_stages]
    if creating and (single or len(creating) == len(active)):
        raise ConfigError(f"cell {creating[0].id}: {why}; use a human_* strategy")
    for c in creating:
        c.skipped = why
    return [c for c in active if not c.skipped]


def samples_for(c: Cell, k: int, single: bool) -> int:
    """How many draws of its assignment calls cell ``c`` makes: ``sweep.samples`` (``k``) for a sampling judge
    that assigns; 1 for a deterministic judge (it would repeat its labels: said once, in the log; an error for a
    single requested cell) or a human-assigned cell.  An LLM judge at temperature 0 is sampled as asked, with a
    warning (draws then differ only by the server's nondeterminism)."""
    if k == 1 or c.strategy.assignment != "judge":
        return 1
    if not c.judge.sampling:
        if single:
            raise ConfigError(f"sweep.samples={k}: judge {c.judge_name!r} (kind {c.judge.kind!r}) is deterministic, "
                              "so its samples would repeat its labels; use a sampling judge (llm at temperature > 0, simulated)")
        log.info("%s: judge %s is deterministic; sweep.samples=%d does not apply (1 sample)", c.id, c.judge_name, k)
        return 1
    dep = c.judge.deployment
    if dep is not None and float((dep.params or {}).get("temperature", 1.0) or 0.0) == 0.0:
        log.warning("%s: sweep.samples=%d at temperature 0: the draws differ only by the server's nondeterminism "
                    "(set judge.deployment.params.temperature=0.7 or similar to sample the judge)", c.id, k)
    return k
