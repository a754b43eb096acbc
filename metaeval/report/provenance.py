"""Provenance: what produced a results folder, so a reader can reproduce it.

Config (as composed), prompt template ids/versions/hashes the judges used (``stats.prompts`` per cell, e.g.
``assign@v1:3f2a...``), dataset name and per-file checksums (from the dataset's provenance), package versions
(``importlib.metadata`` at report time), seeds, and the git commit of the metaeval checkout (when it is one).
"""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path
from typing import Any

PACKAGES: tuple[str, ...] = ("metaeval", "numpy", "pandas", "scipy", "statsmodels", "matplotlib", "ray", "openai",
                             "anthropic")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """``{"python": "3.x.y", name: version or None (not installed)}``."""
    from importlib import metadata

    out: dict[str, str | None] = {"python": platform.python_version()}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    return out


def git_commit(path: str | Path | None = None) -> dict[str, Any] | None:
    """``{"commit": sha, "dirty": bool}`` of the git checkout holding ``path`` (default: the metaeval package),
    or None when it is not a checkout or git is absent."""
    where = Path(path) if path else Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if sha.returncode != 0:
            return None
        st = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": sha.stdout.strip(), "dirty": bool(st.stdout.strip()) if st.returncode == 0 else None}


def prompts_used(cells: list[dict[str, Any]]) -> list[dict[str, str]]:
    """One row per (cell, template) from ``stats.prompts`` (``id@version:sha``)."""
    rows = []
    for c in cells:
        for p in (c.get("stats") or {}).get("prompts", []) or []:
            ident, _, sha = str(p).partition(":")
            tid, _, ver = ident.partition("@")
            rows.append({"cell": c["cell"], "template": tid, "version": ver, "sha": sha})
    return rows


def seeds(config: dict[str, Any], cells: list[dict[str, Any]]) -> dict[str, Any]:
    """Every ``seed`` in the config groups and in the cells' judge configs."""
    out: dict[str, Any] = {}
    for group in ("sweep", "analysis", "calibration"):
        g = config.get(group) or {}
        if isinstance(g, dict) and "seed" in g:
            out[f"{group}.seed"] = g["seed"]
    for c in cells:
        jc = c.get("judge_config") or {}
        if isinstance(jc, dict) and "seed" in jc:
            out[f"judge {c.get('judge')}.seed"] = jc["seed"]
    return out


def collect(summary: dict[str, Any]) -> dict[str, Any]:
    cells = [c for c in summary.get("cells", []) if not c.get("skipped")]
    ds = summary.get("dataset") or {}
    prov = ds.get("provenance") or {}
    files = [{k: f.get(k) for k in ("filename", "md5", "sha256", "size", "verified")} for f in prov.get("files", []) or []]
    return {
        "experiment": summary.get("experiment"),
        "dataset": {"name": ds.get("name"), "topics": ds.get("topics"), "runs": ds.get("runs"),
                    "answers": ds.get("answers"), "source": prov.get("source"), "license": prov.get("license"),
                    "files": files},
        "prompts": prompts_used(cells),
        "packages": package_versions(),
        "seeds": seeds(summary.get("config") or {}, cells),
        "git": summary.get("git") or git_commit(),
        "config": summary.get("config") or {},
        "elapsed_s": summary.get("elapsed_s"),
        "judging_s": summary.get("judging_s"),
        "runtime_start_s": summary.get("runtime_start_s"),
        "runtime_start": summary.get("runtime_start"),
        "stopped": summary.get("stopped"),
    }
