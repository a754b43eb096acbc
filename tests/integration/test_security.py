"""Security: API keys never leave the environment; every server metaeval starts listens on 127.0.0.1 only.

* A sweep against the wire-compatible test server with a random sentinel key (the server accepts only that key,
  so every request that succeeded carried it) and ``-vv`` logging, then ``metaeval report``: the sentinel is in
  no file under the results folder (SQLite cache and WAL included, read as raw bytes), nor in stdout/stderr.
* A server that answers 401 and *echoes the presented key* in its error body (as some providers do): neither
  ``metaeval judge check`` nor a sweep prints or stores it.
* Listening sockets are read from ``/proc/net/tcp`` (the kernel's table), so the test sees what is bound, not
  what a config claims.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metaeval.testing.server import ChatTestServer, _error

ROOT = Path(__file__).resolve().parents[2]
KEY_ENV = "METAEVAL_SENTINEL_KEY"


def _sentinel() -> str:
    return f"sk-SENTINEL-{secrets.token_hex(16)}"


def _metaeval(*args: str, env_key: str | None, timeout: int = 240) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != KEY_ENV}
    if env_key is not None:
        env[KEY_ENV] = env_key
    return subprocess.run([sys.executable, "-m", "metaeval", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env=env)


def _files_containing(folder: Path, needles: list[bytes]) -> list[str]:
    """Every regular file under ``folder`` whose raw bytes contain any needle (the hex part is checked too, so a
    key with its prefix cut or re-encoded would still be found)."""
    hits, n = [], 0
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            n += 1
            data = path.read_bytes()
            if any(nd in data for nd in needles):
                hits.append(str(path.relative_to(folder)))
    assert n > 0
    return hits


def _needles(key: str) -> list[bytes]:
    hexpart = key.rsplit("-", 1)[1]
    return [key.encode(), hexpart.encode(), hexpart.encode("utf-16-le"), hexpart.upper().encode()]


def test_sentinel_key_reaches_the_wire_and_nothing_else(tmp_path):
    key = _sentinel()
    results = tmp_path / "results"
    with ChatTestServer(expected_key=key) as srv:
        res = _metaeval("-vv", "sweep", "--no-progress", f"results_dir={results}", "name=sec", "runtime=serial", "grid=single",
                        "judge=testserver", "strategy=auto_auto", f"judge.deployment.base_url={srv.openai_base_url}",
                        f"judge.deployment.api_key_env={KEY_ENV}", "analysis.bootstrap=50", env_key=key)
        assert res.returncode == 0, res.stderr[-3000:]
        served, rejected = srv.counts["requests"], srv.counts["401"]
    assert served > 50 and rejected == 0  # every request carried the sentinel (the server accepts nothing else)
    rep = _metaeval("-vv", "report", str(results / "sec"), env_key=key)
    assert rep.returncode == 0, rep.stderr[-3000:]
    logs = results / "logs"
    logs.mkdir()
    for name, proc in (("sweep", res), ("report", rep)):
        (logs / f"{name}.stdout").write_text(proc.stdout, encoding="utf-8")
        (logs / f"{name}.stderr").write_text(proc.stderr, encoding="utf-8")
    names = {p.name for p in results.rglob("*")}
    # the outputs the check must cover are really there
    assert {"jobs.jsonl", "summary.json", "summary.md", "report.html", "report.md", "report.json", "responses.sqlite"} <= names
    assert "DEBUG" in res.stderr  # -vv logging was on
    assert len(res.stderr) > 1000
    assert _files_containing(results, _needles(key)) == []
    assert KEY_ENV in (results / "sec" / "summary.json").read_text(encoding="utf-8")  # the variable's *name* is provenance


class EchoingKeyServer(ChatTestServer):
    """Answers 401 to a wrong key and puts the key it was sent into the error message (worst-case provider)."""

    async def _common(self, request, flavour):
        if not self._auth_ok(request, flavour):
            self.counts["requests"] += 1
            self.counts["401"] += 1
            sent = request.headers.get("Authorization", "").removeprefix("Bearer ") or request.headers.get("x-api-key", "")
            return _error(flavour, 401, "invalid_api_key", f"Incorrect API key provided: {sent}"), None, None
        return await super()._common(request, flavour)


@pytest.fixture(scope="module")
def wrong_key_runs(tmp_path_factory) -> dict:
    """``judge check`` and a sweep with a wrong key against the echoing server (run once for the tests below)."""
    tmp = tmp_path_factory.mktemp("wrongkey")
    wrong = _sentinel()
    with EchoingKeyServer(expected_key=_sentinel()) as srv:
        cfg = tmp / "judge.yaml"
        cfg.write_text(
            "judge: llm\nname: echo\ndeployment:\n  name: echo\n  backend: openai\n  model: test-model\n"
            f"  base_url: {srv.openai_base_url}\n  api_key_env: {KEY_ENV}\n  limits: {{max_retries: 1, timeout_s: 5}}\n",
            encoding="utf-8")
        chk = _metaeval("-vv", "judge", "check", str(cfg), env_key=wrong)
        results = tmp / "results"
        sw = _metaeval("-vv", "sweep", "--no-progress", f"results_dir={results}", "name=bad", "runtime=serial", "grid=single",
                       "judge=testserver", "strategy=human_auto", f"judge.deployment.base_url={srv.openai_base_url}",
                       f"judge.deployment.api_key_env={KEY_ENV}", "analysis.bootstrap=0", "calibration.enabled=false",
                       env_key=wrong)
        rejected = srv.counts["401"]
    return {"key": wrong, "check": chk, "sweep": sw, "results": results, "rejected": rejected}


def test_wrong_key_401_never_prints_or_stores_the_key(wrong_key_runs):
    r = wrong_key_runs
    assert r["rejected"] >= 2  # the wrong key did reach the server (and was echoed back in the 401 body)
    for proc in (r["check"], r["sweep"]):
        out = proc.stdout + proc.stderr
        for nd in _needles(r["key"]):
            assert nd.decode("utf-8", "ignore") not in out, out[-3000:]
    chk = r["check"].stdout + r["check"].stderr
    assert "Traceback" not in chk, chk[-3000:]
    assert r["check"].returncode == 1 and "401" in chk  # the failure is reported ...
    assert "[REDACTED]" in chk  # ... with the echoed key scrubbed
    assert r["results"].exists()
    assert _files_containing(r["results"], _needles(r["key"])) == []


def test_sweep_with_every_call_401_ends_without_traceback_and_exits_4(wrong_key_runs):
    """Every label FAILED (all calls 401): the sweep ends cleanly (this once raised KeyError 'cohen_kappa' in the
    agreement table), stores everything and exits 4 (sweep.max_failed_rate)."""
    sw = wrong_key_runs["sweep"]
    out = sw.stdout + sw.stderr
    assert "Traceback" not in out, out[-3000:]
    # every label FAILED: everything is stored, one line names the cell, and the exit status says the run is useless
    assert sw.returncode == 4, (sw.returncode, out[-3000:])
    lines = [x for x in sw.stderr.splitlines() if "labels FAILED" in x]
    assert len(lines) == 1 and "max_failed_rate" in lines[0] and "100%" in lines[0], sw.stderr[-2000:]
    assert (wrong_key_runs["results"] / "bad" / "jobs.jsonl").exists()


def test_missing_key_variable_stops_before_any_request(tmp_path):
    with ChatTestServer(expected_key=_sentinel()) as srv:
        res = _metaeval("sweep", "--no-progress", f"results_dir={tmp_path}", "name=nokey", "runtime=serial", "grid=single",
                        "judge=testserver", "strategy=human_auto", f"judge.deployment.base_url={srv.openai_base_url}",
                        f"judge.deployment.api_key_env={KEY_ENV}", env_key=None)
        assert srv.counts["requests"] == 0
    assert res.returncode == 2 and KEY_ENV in res.stderr and "Traceback" not in res.stdout + res.stderr


# ------------------------------------------------------------------------------------------ loopback binding
def listening_addresses(port: int) -> set[str]:
    """Local IPv4/IPv6 addresses with a socket in LISTEN state on ``port`` (from /proc/net/tcp{,6})."""
    found: set[str] = set()
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            local, state = parts[1], parts[3]
            addr_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            raw = bytes.fromhex(addr_hex)
            if v6:
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                addr = socket.inet_ntop(socket.AF_INET6, raw)
                found.add(addr.removeprefix("::ffff:") if addr.startswith("::ffff:") and "." in addr else addr)  # v4-mapped
            else:
                found.add(socket.inet_ntop(socket.AF_INET, raw[::-1]))
    return found


needs_proc = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp")


@needs_proc
def test_test_server_binds_loopback_only():
    with ChatTestServer() as srv:
        assert listening_addresses(srv.port) == {"127.0.0.1"}


@needs_proc
def test_test_server_command_line_binds_loopback_by_default():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "metaeval.testing.server", "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        line = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, line
        assert listening_addresses(port) == {"127.0.0.1"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_local_llm_server_command_binds_loopback(monkeypatch, tmp_path):
    """The llama.cpp server command line metaeval builds (captured at Popen; no model is loaded)."""
    from metaeval.judges import local_llm

    seen: list[list[str]] = []

    class Stop(Exception):
        pass

    def fake_popen(cmd, **kwargs):
        seen.append(list(cmd))
        raise Stop

    monkeypatch.setattr(local_llm.subprocess, "Popen", fake_popen)
    srv = local_llm.LlamaServer(tmp_path / "model.gguf")
    with pytest.raises(Stop):
        srv.start()
    (cmd,) = seen
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    assert srv.base_url.startswith("http://127.0.0.1:")


@pytest.mark.slow
@needs_proc
def test_local_llm_server_really_listens_on_loopback():
    from metaeval.judges import local_llm

    why = local_llm.extra_missing()
    if why:
        pytest.skip(why)
    srv = local_llm.LlamaServer(local_llm.find_model(), n_ctx=512).start()
    try:
        assert listening_addresses(srv.port) == {"127.0.0.1"}
    finally:
        srv.stop()


def test_init_ray_passes_loopback_and_no_dashboard(monkeypatch):
    """What ``init_ray`` asks Ray for (a stand-in ``ray`` module records the call; the Ray tier checks a real one)."""
    import types

    from metaeval.pipeline.ray_setup import init_ray

    calls: list[dict] = []
    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False
    fake.init = lambda **kw: calls.append(kw)
    monkeypatch.setitem(sys.modules, "ray", fake)
    init_ray()
    (kw,) = calls
    assert kw["_node_ip_address"] == "127.0.0.1" and kw["include_dashboard"] is False and "address" not in kw
    assert os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") == "0"


@pytest.mark.ray
def test_real_ray_runtime_is_on_loopback():
    from metaeval.pipeline.ray_setup import init_ray

    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray

    started = not ray.is_initialized()
    init_ray(num_cpus=2)
    try:
        nodes = ray.nodes()
        assert nodes and {n["NodeManagerAddress"] for n in nodes} == {"127.0.0.1"}
        gcs = ray.get_runtime_context().gcs_address
        assert gcs.split(":")[0] == "127.0.0.1", gcs
        if Path("/proc/net/tcp").exists():
            assert listening_addresses(int(gcs.rsplit(":", 1)[1])) == {"127.0.0.1"}
    finally:
        if started:
            ray.shutdown()
