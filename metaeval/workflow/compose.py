"""The sweep's configuration, composed once: ``compose_sweep(overrides)`` returns the typed settings tree and the
grid's cells.

* ``compose_config`` / the Hydra edge: :mod:`metaeval.workflow.hydra_config` (the package conf overlaid by
  ``./conf`` and ``--config-dir``; Hydra's public compose API only);
* the grid's judges and prompts: :mod:`metaeval.workflow.grid_judges` (``judge.*`` overrides reach every judge);
* ``-m`` (Hydra's sweep syntax as ONE grid sweep): :mod:`metaeval.workflow.multirun`;
* here: the grid expanded into cells (``metaeval.pipeline.grid``), what cannot run here left out (said once),
  and the results folder's default name.
"""

from __future__ import annotations

from typing import Any, Sequence

from metaeval.errors import ConfigError
from metaeval.workflow.grid_judges import (check_grid_names, grid_judges_and_prompts, judge_paths,
                                           one_server_per_deployment, split_judge_overrides)
from metaeval.workflow.hydra_config import compose_checked, compose_config
from metaeval.workflow.multirun import ignored_choices, multirun_overrides

__all__ = ["compose_sweep", "compose_config", "multirun_overrides", "default_name", "log_grid_notes"]


def compose_sweep(overrides: Sequence[str], config_dir: Any = None):
    """Return ``(settings, cells)``: the typed settings tree (``metaeval.workflow.settings.RunSettings``; its
    ``document`` is the plain composed config with ``name`` filled in and ``judges``: the resolved judge configs of
    the grid) and the expanded grid of cells holding typed ``JudgeSpec``s."""
    from metaeval.workflow.settings import build_settings
    from metaeval.pipeline.grid import expand_grid

    judge_paths(overrides)
    overrides, per_judge = split_judge_overrides(list(overrides), config_dir)
    config, sections = _compose_top(overrides, config_dir)
    grid = sections["grid"]
    check_grid_names(grid)
    ignored_choices(overrides, grid, str(config["_choices"].get("grid") or "grid"))
    judge_names = list(grid.judges or [])
    optional = [n for n in grid.optional_judges or [] if n not in judge_names]
    judges, prompts = grid_judges_and_prompts(config, grid, overrides, config_dir, [*judge_names, *optional],
                                               per_judge)
    strategies = grid.strategies or [config["strategy"]["name"]]
    cells = expand_grid(judges, prompts, list(strategies), sections["cache"].active_path, sections["sweep"].relevance)
    if not cells:
        raise ConfigError("the grid is empty")
    one_server_per_deployment(judges)
    config["judges"] = {j.name: j.public_dict() for j in judges}
    from metaeval.security.secrets import secret_in_config

    secret_in_config(config)  # every grid judge's key known; none of them in any configured string
    config["_grid_overridden"] = any(o.split("=", 1)[0].lstrip("+~").startswith("grid.") for o in overrides)
    config["_single"] = not (judge_names or optional) and not grid.prompts and not grid.strategies
    if not config["_single"]:  # only cells that can run here; what was left out is said once per judge
        cells, config["_grid_notes"] = _pruned(cells, config)
    if config.get("name") in (None, ""):
        config["name"] = default_name(config, cells)
    return build_settings(config, sections, single=config["_single"]), cells


def _compose_top(overrides: list[str], config_dir: Any):
    """``_compose_checked`` of the top-level config.  In a grid, ``judge.*`` overrides are for the grid's judges
    (applied to each in ``_group_node``), not for the top-level ``judge`` choice, which a grid does not run: when
    they fail on it, the config is composed without them, and if it then has no grid judges the first error
    stands (with how to aim an override at one judge)."""
    from metaeval.security.secrets import SecretInConfig

    try:
        return compose_checked(overrides, config_dir, hydra=True)
    except SecretInConfig:
        raise
    except ConfigError as first:
        judge_ovs = [o for o in overrides if o.split("=", 1)[0].lstrip("+~").startswith("judge.")]
        if not judge_ovs:
            raise
        try:
            config, sections = compose_checked([o for o in overrides if o not in judge_ovs], config_dir, hydra=True)
        except ConfigError:
            raise first from None
        if not sections["grid"].judges:
            raise ConfigError(f"{first} (to override one judge of a grid only: judge.<NAME>.KEY=VALUE)") from None
        return config, sections


def _pruned(cells: list, config: dict[str, Any]) -> tuple[list, list[str]]:
    """``metaeval.pipeline.grid.prune_grid``; its lines are logged once by the driver after its checks
    (:func:`log_grid_notes`), so an error stays one line."""
    from metaeval.pipeline.grid import prune_grid

    return prune_grid(cells)


def log_grid_notes(document: dict[str, Any]) -> None:
    """The grid lines of ``compose_sweep`` (``_grid_notes``) in the log at info level (``-v``); the terminal shows
    them once, in the summary table's header (``summary.md``) or under the dry-run table."""
    import logging

    log = logging.getLogger("metaeval.grid")
    for line in document.get("_grid_notes") or ():
        log.info(line)


def default_name(config: dict[str, Any], cells: Sequence[Any]) -> str:
    """The results folder name when ``name`` is not given: ``demo`` for the demo dataset with its default grid,
    else ``<dataset>-<grid>`` (``<dataset>-<judge>-<prompt>-<strategy>`` for one cell; the grid's axes, see
    :func:`_axes_name`, when the grid was changed on the command line), so different datasets never share a
    folder."""
    from metaeval.layout import slugify
    from metaeval.hashing import content_hash

    choices = config.get("_choices") or {}
    ds = str((config.get("dataset") or {}).get("name") or choices.get("dataset") or "dataset")
    grid_choice = str(choices.get("grid") or "grid")
    if config.get("_single") and len(cells) == 1:
        c = cells[0]
        parts = [ds, c.judge_name, *([c.prompt_name] if c.prompt_name != "none" else []), c.strategy.name]
        return slugify("-".join(parts))
    if ds == "demo" and grid_choice == "demo_offline" and not config.get("_grid_overridden"):
        return "demo"
    if not config.get("_grid_overridden"):
        return slugify(f"{ds}-{grid_choice}")
    return slugify(_axes_name(ds, cells) or f"{ds}-{grid_choice}-" + content_hash(sorted(c.id for c in cells))[:8])


def _axes_name(ds: str, cells: Sequence[Any], max_len: int = 80) -> str | None:
    """``<dataset>-<judges>-<prompts>-<strategies>`` for a grid typed on the command line (``-m`` or ``grid.*=``),
    each axis its values in grid order joined by ``.`` (``demo-lexical.lexical_strict-human_auto``); the same
    cells always give the same name.  None when that is longer than ``max_len`` (then a short hash names it)."""
    def axis(values: Any) -> str:
        return ".".join(dict.fromkeys(str(v) for v in values if v != "none"))

    parts = [ds, axis(c.judge_name for c in cells), axis(c.prompt_name for c in cells),
             axis(c.strategy.name for c in cells)]
    name = "-".join(p for p in parts if p)
    return name if len(name) <= max_len else None
