"""In-process checks of the round-three guards (issue 33): links in a results folder, secrets by value, YAML
bounds, line caps, usage counts, the usable-output rule, finite limits and prices, API caps, cache leases, Ray's
cluster probe and the quarantine warning.  The CLI side of each attack is in
``tests/integration/test_bad_inputs_round3.py``; servers that break HTTP in ``tests/faults/test_faults_round3.py``."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metaeval.errors import ConfigError, FormatError
from metaeval.io.outputs import OutputError

KEEP = b"KEEP\n"


# ------------------------------------------------------------------ row 1: nothing written through a link
@pytest.mark.parametrize("name", ["jobs.jsonl", "jobs.quarantine.jsonl", ".lock"])
def test_store_refuses_a_linked_file(tmp_path, name):
    from metaeval.pipeline.store import ResultsStore

    victim = tmp_path / "victim"
    victim.write_bytes(KEEP)
    folder = tmp_path / "results" / "x"
    folder.mkdir(parents=True)
    os.symlink(victim, folder / name)
    with pytest.raises(OutputError, match="is a symbolic link"):
        ResultsStore(folder)
    assert victim.read_bytes() == KEEP


def test_a_link_made_after_the_check_is_refused_by_the_kernel(tmp_path):
    """``open_nofollow`` opens with O_NOFOLLOW: the kernel refuses a link even when the check did not see it."""
    from metaeval.layout import open_nofollow

    victim = tmp_path / "victim"
    victim.write_bytes(KEEP)
    os.symlink(victim, tmp_path / "jobs.jsonl")
    with pytest.raises(OutputError, match="symbolic link"):
        open_nofollow(tmp_path / "jobs.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    assert victim.read_bytes() == KEEP


def test_a_linked_folder_below_the_results_folder_is_refused(tmp_path):
    from metaeval.layout import link_in_path

    (tmp_path / "elsewhere").mkdir()
    root = tmp_path / "r"
    root.mkdir()
    os.symlink(tmp_path / "elsewhere", root / "cells")
    assert link_in_path(root / "cells" / "c" / "labels.jsonl", root) == root / "cells"
    assert link_in_path(root / "x.json", root) is None


def test_a_linked_cache_file_is_refused(tmp_path):
    from metaeval.judges.cache import ResponseCache

    victim = tmp_path / "victim"
    victim.write_bytes(KEEP)
    os.symlink(victim, tmp_path / "c.sqlite")
    with pytest.raises(OutputError, match="symbolic link"):
        ResponseCache(tmp_path / "c.sqlite")
    assert victim.read_bytes() == KEEP


def test_a_cache_path_over_sqlites_limit_is_one_line(tmp_path):
    from metaeval.judges.cache import ResponseCache

    with pytest.raises(OutputError, match="SQLite's limit"):
        ResponseCache(tmp_path / ("d" * 250) / ("e" * 250) / "x.sqlite")


# ------------------------------------------------------------------ row 5: an output that is an input
def test_same_file_sees_links_and_dots(tmp_path):
    from metaeval.io.outputs import check_not_input, same_file

    a = tmp_path / "a.jsonl"
    a.write_text("x\n")
    os.link(a, tmp_path / "hard")
    os.symlink(a, tmp_path / "soft")
    assert same_file(a, tmp_path / "hard") and same_file(a, tmp_path / "soft") and same_file(a, tmp_path / "." / "a.jsonl")
    assert not same_file(a, tmp_path / "b.jsonl")
    with pytest.raises(OutputError, match="is an input"):
        check_not_input(tmp_path / "hard", [a])
    check_not_input(tmp_path / "b.jsonl", [a])


# ------------------------------------------------------------------ rows 2-4: secrets by value
def test_credentials_outside_api_key_env_are_refused():
    from metaeval.security.secrets import credential_problem

    assert "user info" in credential_problem("http://u:sk-x@127.0.0.1:9/v1", {})
    assert "query string" in credential_problem("http://h/v1?api_key=abc", {})
    assert "params.api_key" in credential_problem(None, {"api_key": "x"})
    assert "extra_headers.X-Api-Key" in credential_problem(None, {"extra_headers": {"X-Api-Key": "x"}})
    assert "Authorization-style" in credential_problem(None, {"extra_headers": {"X-A": "Bearer abc"}})
    assert credential_problem("http://127.0.0.1:8000/v1", {"temperature": 0, "max_tokens": 5}) is None
    schema = {"response_format": {"type": "json_schema", "json_schema": {"schema": {"properties": {"token": {}}}}}}
    assert credential_problem(None, schema) is None  # a schema's property names are data


def test_deployment_refuses_a_key_in_its_url_or_params():
    from metaeval.judges.config import Deployment

    with pytest.raises(ConfigError, match="user info"):
        Deployment.from_dict({"backend": "openai", "model": "m", "base_url": "http://u:p@h/v1"})
    with pytest.raises(ConfigError, match="params.extra_headers.authorization"):
        Deployment.from_dict({"backend": "openai", "model": "m", "params": {"extra_headers": {"authorization": "k"}}})


def test_a_secret_value_in_any_configured_string_is_refused_without_printing_it(monkeypatch):
    from metaeval.security.secrets import SecretInConfig, configured_secrets, secret_in_config

    key = "sk-unit-round3-0123456789abcdef"
    monkeypatch.setenv("R3_UNIT_KEY", key)
    config = {"name": f"run-{key}", "judge": {"deployment": {"api_key_env": "R3_UNIT_KEY", "model": "m"}}}
    assert configured_secrets(config)["environment variable R3_UNIT_KEY"] == key
    with pytest.raises(SecretInConfig) as err:
        secret_in_config(config)
    assert "name: holds the value of environment variable R3_UNIT_KEY" in str(err.value) and key not in str(err.value)
    secret_in_config({**config, "name": "run"})  # the variable's name is fine


def test_oc_env_values_that_are_credentials_become_known_secrets(monkeypatch):
    from omegaconf import OmegaConf

    from metaeval.security import secrets

    secrets.install_env_recorder()
    monkeypatch.setenv("R3_TOKEN", "tok-abcdef0123456789")
    monkeypatch.setenv("R3_HOME", "/home/someone")
    cfg = OmegaConf.create({"a": "${oc.env:R3_TOKEN}", "b": "${oc.env:R3_HOME}", "c": "${oc.env:R3_MISSING,dflt}"})
    assert OmegaConf.to_container(cfg, resolve=True) == {"a": "tok-abcdef0123456789", "b": "/home/someone", "c": "dflt"}
    known = secrets.configured_secrets({})
    assert known.get("environment variable R3_TOKEN") == "tok-abcdef0123456789"
    assert "environment variable R3_HOME" not in known  # a path is not a secret


def test_known_secrets_are_redacted_from_logs(monkeypatch, caplog):
    from metaeval.security.secrets import remember

    remember("environment variable R3_LOG", "sk-log-redact-0123456789")
    handler = logging.StreamHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        from metaeval.security.redaction import protect_loggers

        protect_loggers(None)
        rec = logging.LogRecord("x", logging.WARNING, __file__, 1, "echo %s", ("sk-log-redact-0123456789",), None)
        for f in handler.filters:
            f.filter(rec)
        assert "sk-log-redact" not in rec.getMessage()
    finally:
        root.removeHandler(handler)


def test_redaction_of_a_clean_megabyte_is_fast_and_unchanged():
    from metaeval.judges.backends.base import redact

    text = "a" * 1_000_000
    t0 = time.perf_counter()
    assert redact(text, "sk-redact-speed-0123456789") is text
    assert time.perf_counter() - t0 < 1.0  # the old Python loop took ~0.5 s here at no load; this is a bound
    assert redact("x sk-redact-speed-0123456789 y", "sk-redact-speed-0123456789") == "x [REDACTED] y"


# ------------------------------------------------------------------ rows 10, 13, 16: YAML and line bounds
def _laughs(depth: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, depth + 1)]
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_and_small_aliases_pass():
    from metaeval.io.yamlsafe import load_yaml

    with pytest.raises(FormatError, match="billion laughs"):
        load_yaml(_laughs(6), "bomb.yaml")
    assert load_yaml(_laughs(2), "ok.yaml")["a2"][0][0][0] == "x"  # 9^3 = 729 leaves: fine
    with pytest.raises(FormatError, match="appears twice"):
        load_yaml("a: 1\nb: 2\na: 3\n", "dup.yaml")
    with pytest.raises(FormatError, match=r"dup2.yaml:3.*not valid YAML"):
        load_yaml("a: [1,\nb: 2\nc: d: e\n", "dup2.yaml")


def test_judge_file_readers_share_the_bounds(tmp_path):
    from metaeval.judges.config import load_config_file

    (tmp_path / "bomb.yaml").write_text("judge: lexical\n" + _laughs(6), encoding="utf-8")
    with pytest.raises(FormatError, match="billion laughs"):
        load_config_file(tmp_path / "bomb.yaml")
    (tmp_path / "latin.yaml").write_bytes(b"judge: lexical\n# caf\xe9\n")
    with pytest.raises(FormatError, match="latin.yaml:2.*not UTF-8"):
        load_config_file(tmp_path / "latin.yaml")


def test_a_line_without_end_is_read_at_most_to_the_cap(tmp_path, monkeypatch):
    from metaeval.io import jsonl

    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 1000)
    (tmp_path / "x.jsonl").write_bytes(b"{}\n" + b"0" * 5000)
    with pytest.raises(FormatError, match=r"x.jsonl:2.*line longer than 1,000 bytes"):
        list(jsonl.iter_lines(tmp_path / "x.jsonl"))


# ------------------------------------------------------------------ row 15: numbers finite and non-negative
@pytest.mark.parametrize("usage,expected", [(12, 12), (-2500, 0), (float("nan"), 0), (float("inf"), 0), ("x", 0),
                                            (None, 0), (10**12, 0), (True, 0)])
def test_usage_counts(usage, expected):
    from metaeval.judges.backends.base import usage_count

    assert usage_count(usage) == expected


@pytest.mark.parametrize("field,value", [("timeout_s", float("nan")), ("timeout_s", float("inf")),
                                         ("jitter", float("nan")), ("rpm", float("inf"))])
def test_limits_must_be_finite(field, value):
    from metaeval.judges.config import Limits

    with pytest.raises(ConfigError, match=f"{field} must be a finite number"):
        Limits(**{field: value})


def test_prices_must_be_finite():
    from metaeval.judges.config import Prices

    with pytest.raises(ConfigError, match="finite"):
        Prices(input_per_1m=float("inf"))


# ------------------------------------------------------------------ row 14: usable output
def test_every_label_failed_or_nothing_judged_is_never_a_success():
    from metaeval.pipeline.health import failed_rate_problems

    all_failed = [{"cell": "c", "strategy": "human_auto", "labels": 496, "failed_labels": 496}]
    assert any("every label FAILED" in p for p in failed_rate_problems(all_failed, 1.0))
    nothing = [{"cell": "c", "strategy": "human_auto", "labels": 0, "failed_labels": 0}]
    assert any("nothing was judged" in p for p in failed_rate_problems(nothing, 1.0))
    fine = [{"cell": "c", "strategy": "human_auto", "labels": 496, "failed_labels": 400}]
    assert failed_rate_problems(fine, 1.0) == []


# ------------------------------------------------------------------ row 16: API caps
def test_api_caps_and_sources():
    import metaeval

    demo = Path(metaeval.__file__).parent / "data" / "demo" / "assignments.jsonl"
    with pytest.raises(ValueError, match="100,000"):
        metaeval.analyze(demo, demo, n_boot=10**9)
    with pytest.raises(TypeError, match="integer"):
        metaeval.analyze(demo, demo, n_boot=1.5)
    for bad in (None, 123):
        with pytest.raises(TypeError, match="load\\(\\) takes a path"):
            metaeval.load(bad)


# ------------------------------------------------------------------ row 6: leases
_HOLD = """
import sys, time
from metaeval.judges.cache import ResponseCache
c = ResponseCache(sys.argv[1])
print(c.claim("k", 60.0), flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_a_lease_is_held_across_processes_and_freed_when_its_holder_dies(tmp_path):
    from metaeval.judges.cache import CACHED, CLAIMED, HELD, ResponseCache

    path = str(tmp_path / "c.sqlite")
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, path, "30"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == CLAIMED
        mine = ResponseCache(path)
        assert mine.claim("k", 60.0) == HELD  # another live process is sending it
        proc.kill()
        proc.wait()
        assert mine.claim("k", 60.0) == CLAIMED  # its holder died: taken over at once
        mine.put("k", {"text": "t"})
        mine.release("k")
        assert mine.claim("k", 60.0) == CACHED
    finally:
        if proc.poll() is None:
            proc.kill()


def test_an_expired_lease_is_taken_over(tmp_path):
    from metaeval.judges.cache import CLAIMED, ResponseCache

    path = str(tmp_path / "c.sqlite")
    c = ResponseCache(path)
    c._connect().execute("INSERT INTO leases (key, host, pid, expires) VALUES ('k', 'elsewhere', 1, ?)", (time.time() - 1,))
    assert c.claim("k", 60.0) == CLAIMED


# ------------------------------------------------------------------ row 17: an unreachable cluster
def test_an_unreachable_cluster_address_is_one_line_at_once():
    from metaeval.pipeline.ray_setup import reachable_address

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match="cannot reach a Ray cluster"):
        reachable_address(f"127.0.0.1:{port}")
    assert time.monotonic() - t0 < 10
    assert reachable_address("auto") is None


# ------------------------------------------------------------------ row 18: the quarantine warning
def test_quarantine_warning_gives_each_line_its_own_reason():
    from metaeval.pipeline.store import quarantine_reasons

    bad = [{"line": 2, "reason": "not JSON"}, {"line": 5, "reason": "no string field 'key'"}, {"line": 9, "reason": "not JSON"}]
    assert quarantine_reasons(bad) == "lines 2, 9: not JSON; line 5: no string field 'key'"


def test_a_non_ascii_key_is_refused_before_any_request(monkeypatch):
    from metaeval.judges.client import ChatClient

    monkeypatch.setenv("R3_NA_KEY", "sk-abc\u2013def0123456789")
    with pytest.raises(ConfigError, match="non-ASCII"):
        ChatClient({"name": "n", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                    "api_key_env": "R3_NA_KEY"})
