"""`metaeval judge check` and `judge list` as a user runs them (subprocess), against the test server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from metaeval.testing.server import ChatTestServer

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-cli-sentinel-5511"


def metaeval(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "metaeval", *args], capture_output=True, text=True, env=full_env,
                          timeout=120, cwd=ROOT)


def test_check_deployment_file_round_trip_never_prints_key(tmp_path):
    with ChatTestServer(expected_key=KEY) as srv:
        cfg = tmp_path / "judge.yaml"
        cfg.write_text(f"backend: anthropic\nname: check-dep\nmodel: claude-test\nbase_url: {srv.anthropic_base_url}\n"
                       "api_key_env: METAEVAL_CLI_KEY\n")
        out = metaeval("judge", "check", str(cfg), env={"METAEVAL_CLI_KEY": KEY})
        assert srv.counts["requests"] == 1
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "model:    claude-test" in text and "latency:" in text and "from $METAEVAL_CLI_KEY (set)" in text
    assert "round trip: assign 3 nuggets ->" in text and KEY not in text


def test_check_missing_key_is_a_clear_error(tmp_path):
    cfg = tmp_path / "judge.json"
    cfg.write_text('{"backend": "openai", "model": "m", "api_key_env": "METAEVAL_CLI_ABSENT"}')
    env = {k: v for k, v in os.environ.items() if k != "METAEVAL_CLI_ABSENT"}
    out = subprocess.run([sys.executable, "-m", "metaeval", "judge", "check", str(cfg)], capture_output=True, text=True,
                         env={**env, "PYTHONPATH": str(ROOT)}, timeout=120, cwd=ROOT)
    assert out.returncode == 2 and "METAEVAL_CLI_ABSENT is not set" in out.stderr and "Traceback" not in out.stderr


def test_check_builtin_and_list():
    out = metaeval("judge", "check", "lexical")
    assert out.returncode == 0 and "judge:    lexical" in out.stdout and "latency:" in out.stdout
    out = metaeval("judge", "list")
    assert out.returncode == 0 and "assign2@v2-json" in out.stdout and "local-llm" in out.stdout
    out = metaeval("judge", "check", "nonsense")
    assert out.returncode == 2 and "unknown judge 'nonsense'" in out.stderr


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_check_with_no_server_names_the_url_and_sends_nothing():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    out = metaeval("judge", "check", "vllm", "--base-url", url)
    assert out.returncode == 2, out.stdout + out.stderr
    line, = out.stderr.strip().splitlines()
    assert line.startswith(f"metaeval judge: error: judge 'vllm': cannot connect to {url} (127.0.0.1:")
    assert "connection refused: is the server running?" in line and "--base-url URL" in line
    assert "round trip" not in out.stdout and "retries=" not in out.stdout  # no call, so no retries and backoff


def test_check_base_url_reaches_the_server_given(tmp_path):
    with ChatTestServer() as srv:
        out = metaeval("judge", "check", "vllm", "--base-url", srv.openai_base_url)
    assert out.returncode == 0, out.stderr
    assert f"base_url: {srv.openai_base_url}" in out.stdout and "round trip: assign 3 nuggets" in out.stdout
