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
