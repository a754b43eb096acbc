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


def pytest_collection_modifyitems(config, items):
    """``live`` tests (real paid APIs) run only with METAEVAL_LIVE=1."""
    if os.environ.get("METAEVAL_LIVE") == "1":
        return
    skip = pytest.mark.skip(reason="live API test: set METAEVAL_LIVE=1 and the key variables to run it")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)
