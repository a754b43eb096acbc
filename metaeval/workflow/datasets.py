"""The dataset workflow of ``metaeval data``: the registry's datasets with their cache status (files present, size,
checksums recorded and verified), fetching one into the cache, where a cached one lives, and a dataset loaded by name
or path with its counts, file checksums and consistency problems.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DatasetRow:
    """One registered dataset as ``metaeval data list`` shows it: name, file count, cache and checksum status (in
    words) and source."""

    name: str
    files: str
    cached: str
    checksums: str
    source: str


@dataclass(frozen=True)
class DatasetInfo:
    """A loaded dataset: its description, counts (``summary``), file provenance, coverage note and problems."""

    description: str | None
    summary: dict
    files: list
    note: str | None
    problems: list


def dataset_rows() -> list[DatasetRow]:
    """Every registered dataset (``metaeval.data.registry.REGISTRY``) with its cache status now (present files are
    re-hashed: :func:`metaeval.data.fetch.status`)."""
    from metaeval.data.fetch import _human, status
    from metaeval.data.registry import REGISTRY

    rows = []
    for name, entry in REGISTRY.items():
        st = status(name)
        n_have = sum(f.action != "missing" for f in st.files)
        size = sum(f.size for f in st.files)
        if entry.bundled:
            cached = f"bundled ({_human(size)})"
        elif n_have == 0:
            cached = "-"
        elif n_have < len(entry.files):
            cached = f"partial {n_have}/{len(entry.files)} ({_human(size)})"
        else:
            cached = _human(size)
        rows.append(DatasetRow(name, str(len(entry.files)), cached, checksum_status(entry, st), entry.source))
    return rows


def checksum_status(entry: Any, st: Any) -> str:
    """The checksums of a registry entry in words: recorded (all, some, none), a cached file that mismatches, and
    whether every cached file was verified."""
    if entry.bundled:
        return "n/a (bundled)"
    n = len(entry.files)
    recorded = sum(f.has_checksum for f in entry.files)
    bad = sum(f.action == "corrupt" for f in st.files)
    if bad:
        return f"MISMATCH ({bad} cached file(s))"
    if recorded == 0:
        return "NOT RECORDED"
    text = "recorded" if recorded == n else f"recorded {recorded}/{n}"
    have = [f for f in st.files if f.action != "missing"]
    if have and all(f.verified for f in have):
        text += ", cache verified"
    return text


def fetch_dataset(name: str, source: str | None = None, force: bool = False) -> Any:
    """Fetch ``name`` into the cache (:func:`metaeval.data.fetch.fetch`); its report (directory, files, complete)."""
    from metaeval.data.fetch import fetch

    return fetch(name, source=source, force=force)


def dataset_path(name: str) -> Any:
    """The cache folder of ``name``; a dataset with no cached file is one :class:`~metaeval.errors.ConfigError`
    line saying how to fetch it."""
    from metaeval.data.fetch import status
    from metaeval.errors import ConfigError

    st = status(name)
    if not any(f.action != "missing" for f in st.files):
        raise ConfigError(f"dataset {name} is not in the cache ({st.directory}); run: metaeval data fetch {name}")
    return st.directory


def dataset_info(name_or_path: str) -> DatasetInfo:
    """The dataset ``name_or_path`` loaded (:func:`metaeval.data.dataset.load_dataset`) and checked (the runs that
    skip topics are the coverage note, not problems)."""
    from metaeval.data.dataset import load_dataset

    ds = load_dataset(name_or_path)
    return DatasetInfo(ds.description, ds.summary(), list(ds.provenance.get("files", [])), ds.coverage_note(),
                       ds.check(coverage=False))
