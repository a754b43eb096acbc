"""What ``metaeval sweep --info`` shows: the config search path (the overlays of ``--config-dir`` and ``./conf``,
then the package's ``metaeval/conf``; the first folder holding a group's option wins) and each group's options.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ConfigInfo:
    """The search path (first wins) and group -> its options (in the order found along the path)."""

    search_path: list
    groups: dict


def config_info(config_dir: Any = None) -> ConfigInfo:
    """The search path of ``config_dir`` (``--config-dir`` values; :func:`metaeval.workflow.hydra_config.overlay_dirs`)
    and the options of every group folder along it."""
    from metaeval.judges.catalog import PACKAGE_CONF
    from metaeval.workflow.hydra_config import overlay_dirs

    dirs = [*overlay_dirs(config_dir), PACKAGE_CONF]
    groups: dict[str, list[str]] = {}
    for g in sorted({p.name for d in dirs for p in Path(d).iterdir() if p.is_dir()}):
        opts: dict[str, str] = {}
        for d in dirs:
            for f in sorted(Path(d, g).glob("*.yaml")):
                opts.setdefault(f.stem, str(d))
        groups[g] = list(opts)
    return ConfigInfo(dirs, groups)
