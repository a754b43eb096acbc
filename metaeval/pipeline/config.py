"""Hydra composition for ``metaeval sweep``: the only place that sees a DictConfig.

``compose_sweep(overrides)`` composes ``conf/config.yaml`` with command-line overrides, resolves it to a plain
dict and expands the grid: ``grid.judges`` / ``grid.prompts`` / ``grid.strategies`` name files of the ``judge``,
``prompt`` and ``strategy`` groups (``null`` = the single choice composed at the top level, so
``grid=single judge=gpt-4o judge.deployment.params.temperature=0.2`` works).  ``grid.optional_judges`` are added
as cells that are skipped, with the reason, when their extra is not installed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from metaeval.errors import ConfigError
from metaeval.paths import REPO_ROOT


def config_dir(explicit: str | None = None) -> Path:
    for cand in (explicit, os.environ.get("METAEVAL_CONF"), REPO_ROOT / "conf"):
        if cand and (Path(cand) / "config.yaml").is_file():
            return Path(cand).resolve()
    raise ConfigError("no Hydra config folder found: pass --config-dir or set METAEVAL_CONF to a folder with config.yaml")


def compose_config(overrides: list[str], config_dir_: str | None = None) -> dict[str, Any]:
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    folder = config_dir(config_dir_)
    try:
        with initialize_config_dir(config_dir=str(folder), version_base=None, job_name="metaeval"):
            cfg = compose(config_name="config", overrides=overrides)
            plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(f"config: {exc}") from None
    plain["_config_dir"] = str(folder)
    return plain


def load_group_option(folder: Path, group: str, name: str) -> dict[str, Any]:
    from omegaconf import OmegaConf

    path = folder / group / f"{name}.yaml"
    if not path.is_file():
        options = sorted(p.stem for p in (folder / group).glob("*.yaml"))
        raise ConfigError(f"unknown {group} {name!r}; available: {', '.join(options)}")
    return OmegaConf.to_container(OmegaConf.load(path), resolve=True)


def compose_sweep(overrides: list[str], config_dir: str | None = None):
    """Return ``(config, cells)``: the plain composed config and the expanded grid."""
    from metaeval.pipeline.grid import expand_grid

    config = compose_config(overrides, config_dir)
    folder = Path(config["_config_dir"])
    grid = config.get("grid") or {}
    judge_names = grid.get("judges")
    if judge_names:
        judges = {n: load_group_option(folder, "judge", n) for n in judge_names}
    else:
        judges = {str(config["judge"].get("name", "judge")): config["judge"]}
    for n in grid.get("optional_judges") or []:
        judges.setdefault(n, load_group_option(folder, "judge", n))
    prompt_names = grid.get("prompts")
    prompts = {n: load_group_option(folder, "prompt", n) for n in prompt_names} if prompt_names else {config["prompt"]["name"]: config["prompt"]}
    strategies = grid.get("strategies") or [config["strategy"]["name"]]
    cache = config.get("cache") or {}
    cache_path = cache.get("path") if cache.get("enabled", True) else None
    relevance = str((config.get("sweep") or {}).get("relevance", "qrels"))
    cells = expand_grid(judges, prompts, list(strategies), cache_path, relevance)
    if not cells:
        raise ConfigError("the grid is empty")
    return config, cells
