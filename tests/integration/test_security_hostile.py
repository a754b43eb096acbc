"""A hostile OpenAI-wire server (``ChatTestServer(echo_key=True)``) echoes the API key in every reply field
(text, ``finish_reason``, ``model``, ``id``, batch output lines) and in every response header.  A sweep with
``-vv`` against it, synchronous, in provider batch mode and on Ray, then ``metaeval report``: no file written
(store, response cache and its WAL, transcripts, batch journal, summaries, reports, the captured logs) holds any
8-character fragment of the key (issue 25 items 1 and 2).

Before the fix the synchronous sweep left 36 fragments in each of ``responses.sqlite``, ``jobs.jsonl``,
``transcripts.jsonl`` (``finish_reason`` / ``model`` were stored raw) and stderr (httpcore's DEBUG header lines).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.testing.server import ChatTestServer

ROOT = Path(__file__).resolve().parents[2]
KEY_ENV = "METAEVAL_HOSTILE_KEY"
BATCH = ["+judge.deployment.mode=batch", "+judge.deployment.batch={window_s:0.5,poll_s:0.2,max_poll_s:0.5}"]


def fragments(key: str, n: int = 8) -> set[bytes]:
    """Every n-character window of the key, as bytes (what a grep for a leak looks for)."""
    return {key[i:i + n].encode() for i in range(len(key) - n + 1)}


def files_with_fragments(folder: Path, key: str) -> dict[str, int]:
    """Relative path -> how many distinct 8-character fragments of ``key`` its raw bytes contain."""
    frags = fragments(key)
    hits, n = {}, 0
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            n += 1
            data = path.read_bytes()
            k = sum(1 for f in frags if f in data)
            if k:
                hits[str(path.relative_to(folder))] = k
    assert n > 5  # the outputs are really there
    return hits


def hostile_sweep(tmp: Path, runtime: str, *extra: str) -> tuple[Path, str]:
    key = f"sk-HOSTILE-{secrets.token_hex(16)}"
    results = tmp / "results"
    env = {**os.environ, KEY_ENV: key}
    with ChatTestServer(expected_key=key, echo_key=True) as srv:
        sw = subprocess.run([sys.executable, "-m", "metaeval", "-vv", "sweep", "--no-progress", f"results_dir={results}",
                             "name=h", f"runtime={runtime}", "grid=single", "judge=testserver", "strategy=auto_auto",
                             f"judge.deployment.base_url={srv.openai_base_url}", f"judge.deployment.api_key_env={KEY_ENV}",
                             "analysis.bootstrap=20", *extra],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
        rejected = srv.counts["401"]
    rep = subprocess.run([sys.executable, "-m", "metaeval", "-vv", "report", str(results / "h")], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=300)
    logs = results / "logs"
    logs.mkdir()
    for name, proc in (("sweep", sw), ("report", rep)):
        (logs / f"{name}.stdout").write_text(proc.stdout, encoding="utf-8")
        (logs / f"{name}.stderr").write_text(proc.stderr, encoding="utf-8")
    assert sw.returncode == 0, sw.stderr[-3000:]
    assert rep.returncode == 0, rep.stderr[-3000:]
    assert rejected == 0  # every request carried the key (the server accepts nothing else)
    assert "DEBUG" in sw.stderr  # -vv was on
    return results, key


def _check(results: Path, key: str) -> None:
    names = {p.name for p in results.rglob("*")}
    assert {"jobs.jsonl", "responses.sqlite", "transcripts.jsonl", "report.html", "summary.json"} <= names
    assert files_with_fragments(results, key) == {}
    # the echoed fields were there to leak: they are stored redacted, and the labels still parsed
    jobs = (results / "h" / "jobs.jsonl").read_text(encoding="utf-8")
    assert "[REDACTED]" in jobs
    import json

    cell = json.loads((results / "h" / "summary.json").read_text(encoding="utf-8"))["cells"][0]
    assert cell["labels"] > 0 and cell["failed_labels"] == 0


def test_hostile_server_sync_leaves_no_key_fragment(tmp_path):
    _check(*hostile_sweep(tmp_path, "serial"))


def test_hostile_server_batch_leaves_no_key_fragment(tmp_path):
    results, key = hostile_sweep(tmp_path, "serial", *BATCH)
    assert list((results / ".cache" / "batches").glob("*.jsonl"))  # the batch journal was written (and is checked)
    _check(results, key)


@pytest.mark.ray
def test_hostile_server_ray_leaves_no_key_fragment(tmp_path):
    _check(*hostile_sweep(tmp_path, "ray_local"))


def test_fragment_grep_finds_a_planted_leak(tmp_path):
    """The grep itself can fail: a file holding 8 characters of the key is reported."""
    key = f"sk-HOSTILE-{secrets.token_hex(16)}"
    for i in range(6):
        (tmp_path / f"f{i}.txt").write_text("nothing here", encoding="utf-8")
    (tmp_path / "leak.txt").write_text(f"model: x{key[5:13]}y", encoding="utf-8")
    assert files_with_fragments(tmp_path, key) == {"leak.txt": 1}
