"""Registry of named datasets: where each file comes from publicly, and the checksums that pin it.

The entries are data, in ``registry.yaml`` beside this module.  Every entry lists its files with the public download address (``url``; ``None`` where we know of no stable direct
link, in which case ``metaeval data fetch NAME --from PATH`` is the way in), the page that documents the file
(``source``), its format (a name from ``metaeval.io.FORMATS``) and its checksums.  A checksum of ``None`` means
*not recorded*: fetch then says so plainly and prints the computed values so they can be pinned here - it never
pretends a file was verified.

Checksums were computed from the copies in ``../shared/data`` (see ``tests/unit/test_data_registry.py``, which
recomputes them).  Where the public copy at ``url`` was not downloaded here (the machines that built this are
offline), the description says what was and was not checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset.

    Attributes:
        filename: the name it has in the dataset's cache folder (and in a ``--from`` folder).
        format: a ``metaeval.io`` format name (``assignments``, ``answers``, ``nuggets`` ...).
        url: a public direct-download address, or ``None`` when none is known.
        md5, sha256: hex digests, or ``None`` when not recorded.
        size: size in bytes when known.
        source: a page that documents where the file comes from.
    """

    filename: str
    format: str
    url: str | None = None
    md5: str | None = None
    sha256: str | None = None
    size: int | None = None
    source: str = ""

    @property
    def has_checksum(self) -> bool:
        return bool(self.md5 or self.sha256)


@dataclass(frozen=True)
class DatasetEntry:
    """A named dataset.

    ``kind`` picks the loader in ``metaeval.data.dataset.LOADERS``: ``nist`` (a NIST nugget-assignment file: answers,
    human nuggets and human labels), ``folder`` (the demo layout: topics, documents, qrels, runs, nuggets,
    assignments), or ``files`` (each file read by its format into the matching ``Dataset`` field).
    ``bundled`` datasets ship inside the package and are never fetched; ``synthetic`` ones hold made-up labels (the
    demo), which every summary and report says next to its figures.
    """

    name: str
    description: str
    files: tuple[DataFile, ...]
    kind: str = "files"
    source: str = ""
    license: str = ""
    bundled: bool = False
    synthetic: bool = False

    def file(self, filename: str) -> DataFile:
        for f in self.files:
            if f.filename == filename:
                return f
        raise KeyError(filename)


#: the registry's data: one entry a dataset, with its files (fields as in ``DatasetEntry`` / ``DataFile``)
REGISTRY_FILE = Path(__file__).with_name("registry.yaml")


def _entries(path: Path = REGISTRY_FILE) -> tuple[DatasetEntry, ...]:
    """The entries of ``registry.yaml``; a file's ``source`` defaults to its dataset's."""
    import yaml

    out = []
    for raw in yaml.safe_load(path.read_text(encoding="utf-8")):
        entry = dict(raw)
        files = tuple(DataFile(**{"source": entry.get("source", ""), **f}) for f in entry.pop("files"))
        out.append(DatasetEntry(files=files, **entry))
    return tuple(out)


REGISTRY: Mapping[str, DatasetEntry] = {e.name: e for e in _entries()}


#: other names accepted for a dataset (old name -> registry name)
ALIASES: dict[str, str] = {"trec-rag-2024-nist-21": "trec-rag-2024"}


def get_entry(name: str) -> DatasetEntry:
    """The registry entry for ``name`` (or an alias); ``ConfigError`` listing the known names otherwise."""
    try:
        return REGISTRY[ALIASES.get(name, name)]
    except KeyError:
        from metaeval.errors import ConfigError

        raise ConfigError(f"unknown dataset {name!r}; known datasets: {', '.join(REGISTRY)}") from None
