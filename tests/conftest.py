"""Shared fixtures: the real TREC data (read in place from ../shared/data) and small helpers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared real-data folder; fails (not skips) with a clear message where it is missing."""
    from metaeval.paths import shared_data_dir

    return shared_data_dir()


@pytest.fixture(scope="session")
def nist_file(shared_data: Path) -> Path:
    return shared_data / "trec-rag-2024" / "nugget_assignment.20241108.jl"


@pytest.fixture(scope="session")
def nist_labels(nist_file: Path):
    from metaeval.io.assignments import read_assignments

    return read_assignments(nist_file, name="nist")


@pytest.fixture(scope="session")
def nuggetizer_dir(shared_data: Path) -> Path:
    return shared_data / "nuggetizer-interop"


#: the markers of the second tier, and the folders whose every test belongs to it (tests/<folder>/)
HEAVY_MARKERS = ("ray", "cluster", "browser", "soak")
HEAVY_FOLDERS = ("ray", "cluster", "browser", "soak")
_TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before the -m selection, which then sees the heavy marker
def pytest_collection_modifyitems(config, items):
    """Test tiers: a test marked ray, cluster, browser or soak, or under one of those folders, is also marked
    ``heavy``, which ``addopts = -m 'not heavy'`` leaves out of a plain ``pytest`` (``-m heavy`` runs them).
    ``live`` tests (real paid APIs) run only with METAEVAL_LIVE=1."""
    heavy = pytest.mark.heavy
    for item in items:
        try:
            folder = Path(str(item.path)).resolve().relative_to(_TESTS).parts[0]
        except ValueError:  # pragma: no cover - a test outside tests/
            folder = ""
        if folder in HEAVY_FOLDERS or any(item.get_closest_marker(m) for m in HEAVY_MARKERS):
            item.add_marker(heavy)
    if os.environ.get("METAEVAL_LIVE") == "1":
        return
    skip = pytest.mark.skip(reason="live API test: set METAEVAL_LIVE=1 and the key variables to run it")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)
