"""The dataset registry: entries are well formed and their checksums match the real files in ../shared/data."""

import re
from pathlib import Path

import pytest

from metaeval.data.fetch import file_digests
from metaeval.data.registry import REGISTRY, get_entry
from metaeval.errors import ConfigError
from metaeval.io import format_names

# registry entry -> folder under ../shared/data holding its files
SHARED = {
    "trec-rag-2024": "trec-rag-2024",
    "trec-rag-2024-topics": "trec-rag-2024",
    "trec-rag-2024-qrels-nist": "trec-rag-2024",
    "trec-rag-2024-baselines": "trec-rag-2024/runs",
    "nuggetizer-rag24-mistral": "nuggetizer-interop",
}


@pytest.mark.parametrize("name", sorted(SHARED))
def test_recorded_checksums_match_shared_files(shared_data: Path, name: str):
    entry = REGISTRY[name]
    for f in entry.files:
        path = shared_data / SHARED[name] / f.filename
        md5, sha, size = file_digests(path)
        assert f.md5 == md5, f.filename
        assert f.sha256 == sha, f.filename
        assert f.size == size, f.filename


def test_nist21_md5_is_the_published_one():
    assert get_entry("trec-rag-2024").files[0].md5 == "918bb96e714eec2e3a0c64d0771a6a6f"
    assert get_entry("trec-rag-2024-nist-21") is get_entry("trec-rag-2024")  # the former name is an alias


def test_nist56_has_public_url_and_no_invented_checksum():
    f = get_entry("trec-rag-2024-nist-56").files[0]
    assert f.url == "https://trec.nist.gov/data/rag/nugget_assignment.20241218.jsonl"
    assert f.md5 is None and f.sha256 is None and not f.has_checksum
    assert "NOT RECORDED" in get_entry("trec-rag-2024-nist-56").description


def test_entries_well_formed():
    assert {"trec-rag-2024", "trec-rag-2024-nist-56", "trec-rag-2024-topics", "trec-rag-2024-qrels-nist",
            "trec-rag-2024-baselines", "nuggetizer-rag24-mistral", "demo"} <= set(REGISTRY)
    for name, e in REGISTRY.items():
        assert e.name == name and e.description and e.files
        assert e.kind in ("nist", "folder", "files")
        assert len({f.filename for f in e.files}) == len(e.files)
        for f in e.files:
            assert f.format in format_names(), (name, f.format)
            assert f.url is None or f.url.startswith("https://")
            for digest, n in ((f.md5, 32), (f.sha256, 64)):
                assert digest is None or re.fullmatch(f"[0-9a-f]{{{n}}}", digest), (name, f.filename, digest)
    # every recorded digest is checked against the real file (test_recorded_checksums_match_shared_files)
    assert {name for name, e in REGISTRY.items() if any(f.md5 or f.sha256 for f in e.files)} == set(SHARED)
    assert len(get_entry("trec-rag-2024-baselines").files) == 3
    assert "ILLUSTRATIVE DEMO DATA" in get_entry("demo").description and get_entry("demo").bundled


def test_unknown_name_lists_known_ones():
    with pytest.raises(ConfigError, match="trec-rag-2024-nist-56"):
        get_entry("no-such-dataset")
