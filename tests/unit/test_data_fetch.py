"""fetch: copies or downloads into the cache, verifies checksums, all-or-nothing, idempotent."""

import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from metaeval.data import fetch as F
from metaeval.data.registry import DataFile, DatasetEntry
from metaeval.errors import ConfigError


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("METAEVAL_CACHE", str(d))
    return d


@pytest.fixture()
def small_entry(monkeypatch, tmp_path):
    """A two-file entry over small temp files (so tests need not copy megabytes), registered for the test."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.tsv").write_text("1\tfirst topic\n", encoding="utf-8")
    (src / "b.txt").write_text("1 0 d1 2\n", encoding="utf-8")
    files = []
    for fn, fmt in (("a.tsv", "topics"), ("b.txt", "qrels")):
        md5, sha, size = F.file_digests(src / fn)
        files.append(DataFile(fn, fmt, url=None, md5=md5, sha256=sha, size=size))
    entry = DatasetEntry("tiny", "two tiny files", tuple(files))
    monkeypatch.setitem(F.get_entry.__globals__["REGISTRY"], "tiny", entry)
    return entry, src


def test_fetch_nist_from_shared_folder_then_idempotent(cache, shared_data):
    rep = F.fetch("trec-rag-2024", source=shared_data / "trec-rag-2024")
    (st,) = rep.files
    assert st.action == "fetched" and st.verified and rep.complete
    dest = cache / "datasets" / "trec-rag-2024" / "nugget_assignment.20241108.jl"
    assert dest.is_file() and st.md5 == "918bb96e714eec2e3a0c64d0771a6a6f"
    assert F.dataset_dir("trec-rag-2024") == dest.parent == F.dataset_dir("trec-rag-2024-nist-21")  # alias
    mtime = dest.stat().st_mtime_ns
    again = F.fetch("trec-rag-2024-nist-21", source=shared_data / "trec-rag-2024" / "nugget_assignment.20241108.jl")
    assert again.files[0].action == "present" and dest.stat().st_mtime_ns == mtime
    forced = F.fetch("trec-rag-2024-nist-21", source=shared_data / "trec-rag-2024", force=True)
    assert forced.files[0].action == "fetched" and forced.files[0].verified
    assert not list(dest.parent.glob("*.part"))
    assert '"origin"' in (dest.parent / "fetch.json").read_text()


def test_checksum_mismatch_fails_and_leaves_nothing(cache, shared_data, tmp_path):
    bad = tmp_path / "nugget_assignment.20241108.jl"
    shutil.copyfile(shared_data / "trec-rag-2024" / "nugget_assignment.20241108.jl", bad)
    with open(bad, "ab") as fh:
        fh.write(b"\n")
    with pytest.raises(F.ChecksumError) as err:
        F.fetch("trec-rag-2024-nist-21", source=bad)
    msg = str(err.value)
    assert "expected 918bb96e714eec2e3a0c64d0771a6a6f" in msg and "actual " in msg and "nugget_assignment.20241108.jl" in msg
    assert not (cache / "datasets" / "trec-rag-2024").exists()


def test_mismatch_in_second_file_removes_the_first(cache, small_entry):
    entry, src = small_entry
    (src / "b.txt").write_text("1 0 d1 3\n", encoding="utf-8")  # differs from the recorded digest
    with pytest.raises(F.ChecksumError, match="b.txt"):
        F.fetch("tiny", source=src)
    assert not (cache / "datasets" / "tiny").exists()


def test_partial_folder_and_single_file(cache, small_entry):
    entry, src = small_entry
    only_a = src.parent / "only_a"
    only_a.mkdir()
    shutil.copy(src / "a.tsv", only_a)
    rep = F.fetch("tiny", source=only_a)
    assert [f.action for f in rep.files] == ["fetched", "missing"] and not rep.complete
    rep = F.fetch("tiny", source=src / "b.txt")
    assert [f.action for f in rep.files] == ["present", "fetched"] and rep.complete
    other = src.parent / "other.txt"
    other.write_text("x\n")
    with pytest.raises(F.FetchError, match="not one of the files"):
        F.fetch("tiny", source=other)


def test_unrecorded_checksum_is_reported_not_pretended(cache, shared_data):
    src = shared_data / "trec-rag-2024" / "nugget_assignment.20241108.jl"  # stands in for the 56-topic file
    rep = F.fetch("trec-rag-2024-nist-56", source=src)
    (st,) = rep.files
    assert st.action == "fetched" and st.verified is False
    text = st.describe()
    assert "CHECKSUM NOT RECORDED" in text and "918bb96e714eec2e3a0c64d0771a6a6f" in text and st.sha256 in text
    assert (cache / "datasets" / "trec-rag-2024-nist-56" / "nugget_assignment.20241218.jsonl").is_file()


def test_no_url_recorded_says_use_from(cache):
    with pytest.raises(F.FetchError, match="--from"):
        F.fetch("trec-rag-2024-nist-21")


def test_offline_download_error_is_clear(cache, monkeypatch):
    monkeypatch.setenv("METAEVAL_FETCH_TIMEOUT", "2")
    with pytest.raises(F.FetchError, match="could not download .* --from PATH"):
        F.fetch("trec-rag-2024-nist-56", source="http://127.0.0.1:9/nugget_assignment.20241218.jsonl")
    assert not (cache / "datasets" / "trec-rag-2024-nist-56").exists()


def test_download_over_http_from_local_server(cache, small_entry):
    entry, src = small_entry
    handler = functools.partial(_QuietHandler, directory=str(src))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        rep = F.fetch("tiny", source=base)
        assert [f.action for f in rep.files] == ["fetched", "fetched"] and all(f.verified for f in rep.files)
        assert rep.files[0].origin == base + "a.tsv"
        with pytest.raises(F.FetchError, match="HTTP 404"):
            F.fetch("trec-rag-2024-nist-56", source=base + "missing.jsonl")
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_corrupt_cached_copy_is_detected_and_replaced(cache, small_entry):
    entry, src = small_entry
    F.fetch("tiny", source=src)
    (cache / "datasets" / "tiny" / "a.tsv").write_text("tampered\n")
    assert [f.action for f in F.status("tiny").files] == ["corrupt", "present"]
    from metaeval.data.dataset import load_dataset

    with pytest.raises(ConfigError, match="fail their checksum"):
        load_dataset("tiny")
    rep = F.fetch("tiny", source=src)
    assert rep.files[0].action == "fetched" and rep.files[0].verified
    assert load_dataset("tiny").topics == {"1": "first topic"}


def test_bundled_demo_is_not_fetched(cache):
    with pytest.raises(ConfigError, match="bundled"):
        F.fetch("demo")
    assert F.dataset_dir("demo") == F.DEMO_DIR


def test_missing_source(cache, tmp_path):
    with pytest.raises(F.FetchError, match="no such file or folder"):
        F.fetch("trec-rag-2024-nist-21", source=tmp_path / "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(F.FetchError, match="holds none of the files"):
        F.fetch("trec-rag-2024-nist-21", source=empty)


def test_download_checksum_mismatch_over_http_leaves_nothing(cache, small_entry, tmp_path):
    """pooch downloads; a file whose bytes differ from the recorded digest is refused and nothing stays behind."""
    entry, src = small_entry
    (src / "a.tsv").write_text("1\ttampered topic\n", encoding="utf-8")  # digest recorded before the change
    handler = functools.partial(_QuietHandler, directory=str(src))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        with pytest.raises(F.ChecksumError, match="a.tsv"):
            F.fetch("tiny", source=f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()
        server.server_close()
    assert not (cache / "datasets" / "tiny").exists()  # no partial file, no temporary folder, no new cache folder
