"""Where things are: the shared real-data folder used by tests and benchmarks, and metaeval's cache."""

from __future__ import annotations

import os
from pathlib import Path

from metaeval.errors import ConfigError

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent


def shared_data_dir(required: bool = True) -> Path:
    """``$METAEVAL_SHARED_DATA`` or ``../shared/data`` beside the repository (the real TREC files, read in place)."""
    env = os.environ.get("METAEVAL_SHARED_DATA")
    path = Path(env) if env else (REPO_ROOT.parent / "shared" / "data")
    if required and not path.is_dir():
        raise ConfigError(
            f"shared data folder not found at {path}; set METAEVAL_SHARED_DATA to the folder holding trec-rag-2024/"
        )
    return path


def cache_dir() -> Path:
    """``$METAEVAL_CACHE`` or ``~/.cache/metaeval``: fetched datasets live here."""
    env = os.environ.get("METAEVAL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "metaeval"


def label_file_name(path: str | os.PathLike) -> str:
    """The name a label file goes by when none is given: its stem (``nist.jsonl`` -> ``nist``), or, for the generic
    ``labels.jsonl`` a sweep writes into each cell folder, that folder's name (the cell id) - the same name whether
    the file reaches ``metaeval analyze``, ``metaeval compare`` or the Python API."""
    p = Path(path)
    stem = p.name.split(".")[0]
    parent = p.resolve().parent.name
    return parent if stem == "labels" and parent else stem
