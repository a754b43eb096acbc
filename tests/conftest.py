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


def pytest_itemcollected(item):
    """Test tiers: a test marked ray, cluster, browser or soak, or under one of those folders, is also marked
    ``heavy``, which ``addopts = -m 'not heavy'`` leaves out of a plain ``pytest`` (``-m heavy`` runs them).
    Marked as each test is collected, before the -m selection."""
    try:
        rel = Path(str(item.path)).resolve().relative_to(_TESTS)
    except ValueError:  # pragma: no cover - a test outside tests/
        rel = Path(item.nodeid.split("::")[0])
    if rel.parts[0] in HEAVY_FOLDERS or any(item.get_closest_marker(m) for m in HEAVY_MARKERS):
        item.add_marker(pytest.mark.heavy)


def pytest_configure(config):
    """pytest-xdist (``-n 2 --dist loadfile`` in addopts) runs the default tier on two workers, a file's tests on
    one of them.  A selection that may hold heavy tests (any ``-m`` without ``not heavy``: ``-m heavy``, ``-m ""``,
    ``-m ray``) runs in one process instead, so that no two Ray runtimes, clusters or browsers ever share the
    machine.  Runs before xdist's own configure (``trylast``), which then starts no workers."""
    if "not heavy" not in (config.option.markexpr or "") and getattr(config.option, "tx", None):
        config.option.numprocesses, config.option.dist, config.option.tx = 0, "no", []
        config._tiers_serial = True


def pytest_report_header(config):
    if getattr(config, "_tiers_serial", False):
        return "tiers: this selection may hold heavy tests (-m without 'not heavy'): one process, no xdist workers"
    return None


def pytest_collection_modifyitems(config, items):
    """``live`` tests (real paid APIs) run only with METAEVAL_LIVE=1."""
    if os.environ.get("METAEVAL_LIVE") == "1":
        return
    skip = pytest.mark.skip(reason="live API test: set METAEVAL_LIVE=1 and the key variables to run it")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)
