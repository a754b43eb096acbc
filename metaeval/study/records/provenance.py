"""What produced a study, recorded when the study runs (not when a report is built): the metaeval version, the
versions of the packages that compute or call (:data:`PACKAGES`; ``None`` when not installed), the git commit of the
metaeval checkout (with whether it had uncommitted changes), the UTC time, the platform and the Python version.

Written into ``summary.json`` and ``study/study.json`` as ``provenance`` (:class:`Provenance`); the report's
provenance section renders it as recorded.
"""

from __future__ import annotations

import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

#: the packages whose versions a study records: the numerics, the executor, the judge SDKs, the config composer
PACKAGES: tuple[str, ...] = ("metaeval", "numpy", "pandas", "scipy", "statsmodels", "matplotlib", "ray", "openai",
                             "anthropic", "hydra-core")


@dataclass(frozen=True)
class GitState:
    """The git checkout metaeval ran from: ``commit`` (HEAD) and ``dirty`` (tracked files changed; None: unknown)."""

    commit: str
    dirty: bool | None


@dataclass(frozen=True)
class Provenance:
    """What produced the study: ``metaeval`` (its version), ``python``, ``platform``, ``recorded_at`` (UTC, ISO
    8601), ``packages`` (name -> version, None when not installed) and ``git`` (None: not a git checkout)."""

    metaeval: str
    python: str
    platform: str
    recorded_at: str
    packages: Mapping[str, str | None]
    git: GitState | None


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """``{name: version or None (not installed)}`` from ``importlib.metadata``."""
    from importlib import metadata

    out: dict[str, str | None] = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    return out


def git_state(path: str | Path | None = None) -> GitState | None:
    """The git checkout holding ``path`` (default: the metaeval package), or None when it is none or git is absent."""
    where = Path(path) if path else Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if sha.returncode != 0:
            return None
        st = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return GitState(commit=sha.stdout.strip(), dirty=bool(st.stdout.strip()) if st.returncode == 0 else None)


def record_provenance() -> Provenance:
    """The provenance of a study run now."""
    import datetime

    from metaeval.version import __version__

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Provenance(metaeval=__version__, python=platform.python_version(), platform=platform.platform(),
                      recorded_at=now, packages=package_versions(), git=git_state())
