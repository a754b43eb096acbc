"""Datasets: a registry of named public datasets with checksums, fetching into the cache, loading.

``REGISTRY`` / ``get_entry(name)`` (``metaeval.data.registry``), ``fetch(name, source, force)`` /
``status(name)`` / ``dataset_dir(name)`` (``metaeval.data.fetch``), and ``load_dataset(name_or_path) -> Dataset``
(``metaeval.data.dataset``; the ``Dataset`` class: ``metaeval.data.collection``).  The bundled ``demo`` dataset lives in ``metaeval/data/demo/``.

Attributes are imported lazily so that importing this package stays cheap.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "REGISTRY": "metaeval.data.registry",
    "DataFile": "metaeval.data.registry",
    "DatasetEntry": "metaeval.data.registry",
    "get_entry": "metaeval.data.registry",
    "fetch": "metaeval.data.fetch",
    "status": "metaeval.data.fetch",
    "dataset_dir": "metaeval.data.fetch",
    "file_digests": "metaeval.data.fetch",
    "ChecksumError": "metaeval.data.fetch",
    "FetchError": "metaeval.data.fetch",
    "Dataset": "metaeval.data.collection",
    "load_dataset": "metaeval.data.dataset",
    "demo_dir": "metaeval.data.dataset",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'metaeval.data' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(mod), name)
