"""A wire-compatible chat server on 127.0.0.1 for tests and benchmarks (aiohttp; no mocks of SDK internals).

Endpoints: OpenAI ``POST /v1/chat/completions`` and Anthropic ``POST /v1/messages`` (plus ``GET /v1/models``
and ``GET /health``), and both providers' batch APIs (``metaeval.testing.batch_api``: OpenAI files + batches,
Anthropic message batches; ``Faults.batch_delay_s``, ``p_item_failed``, ``p_batch_expired``).  Replies come from a rule (``metaeval.testing.rules``: ``label_rule`` by default, or a
scripted list).  ``Faults`` injects, per request and independently drawn from a seeded RNG, in this order:
429 with ``Retry-After``, 500, a hang (sleeps ``hang_s`` before answering, so the client times out), a dropped
connection (the socket is aborted mid-request), an HTTP 200 whose body is not JSON, a malformed reply (prose),
a wrong-length label list; ``latency_s`` is added to every request.  ``expected_key`` (optional) makes the
server answer 401 to any other key, so tests prove the key reaches the wire (and nothing else stores it).
``echo_key=True`` makes the server hostile: the key each request presented is echoed in every reply field
(text, ``finish_reason`` / ``stop_reason``, ``model``, ``id``, also in batch output lines) and in every response
header (``x-echo-key``, ``openai-organization``), so tests can grep every file written for a fragment of it.

Counters (``server.counts``): ``requests`` and one per outcome (``ok``, ``429``, ``500``, ``hang``, ``drop``,
``bad_json``, ``malformed``, ``wrong_length``, ``401``) and per path.  The listen backlog is 1024.

From tests::

    with ChatTestServer(faults=Faults(p_429=0.2)) as srv:
        srv.openai_base_url   # http://127.0.0.1:PORT/v1
        srv.anthropic_base_url  # http://127.0.0.1:PORT

As a process (benchmarks, so client and server do not share one event loop)::

    python -m metaeval.testing.server --port 8011 --latency 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import hashlib
import json
import random
import sys
import threading
import time
from dataclasses import dataclass, field, fields
from typing import Any

from metaeval.testing.rules import Rule, label_rule, malformed, wrong_length

BACKLOG = 1024


def _fault(default: Any, help: str) -> Any:
    """A ``Faults`` field whose ``help`` is also its command-line help (``python -m metaeval.testing.server``)."""
    return field(default=default, metadata={"help": help})


@dataclass
class Faults:
    """What goes wrong, per request, each drawn independently from a RNG seeded with ``seed`` (in this order)."""

    latency_s: float = _fault(0.0, "seconds added to every request")
    p_429: float = _fault(0.0, "chance of a 429 with Retry-After (--retry-after)")
    p_500: float = _fault(0.0, "chance of a 500")
    p_hang: float = _fault(0.0, "chance of a hang: --hang-s seconds before answering, so the client times out")
    p_drop: float = _fault(0.0, "chance of a dropped connection (the socket aborted mid-request)")
    p_bad_json: float = _fault(0.0, "chance of an HTTP 200 whose body is not JSON")
    p_malformed: float = _fault(0.0, "chance of a malformed reply (prose instead of a label list)")
    p_wrong_length: float = _fault(0.0, "chance of a label list of the wrong length")
    retry_after: str = _fault("1", "the Retry-After header of a 429")
    hang_s: float = _fault(30.0, "seconds a hang lasts")
    seed: int = _fault(0, "seed of the fault draws")
    # provider batch APIs (metaeval.testing.batch_api)
    batch_delay_s: float = _fault(0.5, "batch APIs: seconds until a batch ends")
    p_item_failed: float = _fault(0.0, "batch APIs: chance that an item of a batch fails")
    p_batch_expired: float = _fault(0.0, "batch APIs: chance that a whole batch expires")


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ChatTestServer:
    def __init__(self, rule: Rule | None = None, faults: Faults | None = None, host: str = "127.0.0.1",
                 port: int = 0, expected_key: str | None = None, echo_key: bool = False):
        self.rule = rule or label_rule
        self.echo_key = echo_key
        self._last_key = ""  # the key the latest request presented (echo_key)
        self.faults = faults or Faults()
        self.host, self.port = host, port
        self.expected_key = expected_key
        self.counts: collections.Counter[str] = collections.Counter()
        self.bodies: collections.Counter[str] = collections.Counter()  # sha256 of request body -> times seen
        self.recent: collections.deque[dict] = collections.deque(maxlen=100)  # last parsed JSON bodies (no headers)
        self._rng = random.Random(self.faults.seed)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: Any = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        from metaeval.testing.batch_api import BatchAPI

        self.batch_api = BatchAPI(self)  # OpenAI /v1/files + /v1/batches, Anthropic /v1/messages/batches

    # ------------------------------------------------------------------ urls
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    # ------------------------------------------------------------------ app
    def make_app(self) -> Any:
        _require_aiohttp()
        from aiohttp import web

        app = web.Application(client_max_size=64 * 1024 * 1024,
                               middlewares=[self._echo_headers()] if self.echo_key else [])
        app.router.add_post("/v1/chat/completions", functools.partial(self._answer, api="openai"))
        app.router.add_post("/v1/messages", functools.partial(self._answer, api="anthropic"))
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/health", self._health)
        self.batch_api.routes(app)
        return app

    @staticmethod
    def _presented_key(request: Any) -> str:
        return request.headers.get("Authorization", "").removeprefix("Bearer ") or request.headers.get("x-api-key", "")

    @property
    def _echo(self) -> str:
        return f" {self._last_key}" if self.echo_key and self._last_key else ""

    def _with_echo(self, text: str) -> str:
        """The reply text with the key appended on a line of its own (echo_key)."""
        return f"{text}\nserver note: your key is{self._echo}" if self._echo else text

    def _echo_headers(self) -> Any:  # replaced by an aiohttp middleware in make_app (echo_key)
        from aiohttp import web

        @web.middleware
        async def middleware(request: Any, handler: Any) -> Any:
            key = self._presented_key(request)
            if key:
                self._last_key = key
            resp = await handler(request)
            if key:
                resp.headers["x-echo-key"] = key
                resp.headers["openai-organization"] = f"org-{key}"
            return resp

        return middleware

    async def _health(self, request: Any) -> Any:
        from aiohttp import web

        return web.json_response({"ok": True, "counts": dict(self.counts)})

    async def _models(self, request: Any) -> Any:
        from aiohttp import web

        return web.json_response({"object": "list", "data": [{"id": "test-model", "object": "model"}]})

    def _auth_ok(self, request: Any, flavour: str) -> bool:
        if self.expected_key is None:
            return True
        bearer = request.headers.get("Authorization", "") == f"Bearer {self.expected_key}"
        if flavour == "openai":
            return bearer
        return bearer or request.headers.get("x-api-key", "") == self.expected_key  # SDK versions differ

    async def _common(self, request: Any, flavour: str) -> tuple[Any, dict | None, str | None]:
        """Fault injection shared by both flavours: returns (response-or-None, body, reply-text)."""
        from aiohttp import web

        self.counts["requests"] += 1
        self.counts[f"path:{request.path}"] += 1
        raw = await request.read()
        self.bodies[hashlib.sha256(raw).hexdigest()] += 1
        f = self.faults
        if f.latency_s:
            await asyncio.sleep(f.latency_s)
        if not self._auth_ok(request, flavour):
            self.counts["401"] += 1
            return _error(flavour, 401, "authentication_error", "invalid api key"), None, None
        r = self._rng.random
        if r() < f.p_429:
            self.counts["429"] += 1
            resp = _error(flavour, 429, "rate_limit_error", "rate limited (injected)")
            resp.headers["Retry-After"] = f.retry_after
            return resp, None, None
        if r() < f.p_500:
            self.counts["500"] += 1
            return _error(flavour, 500, "api_error", "internal error (injected)"), None, None
        if r() < f.p_hang:
            self.counts["hang"] += 1
            await asyncio.sleep(f.hang_s)
        if r() < f.p_drop:
            self.counts["drop"] += 1
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError  # aiohttp closes the handler; the client sees a dropped connection
        if r() < f.p_bad_json:
            self.counts["bad_json"] += 1
            return web.Response(status=200, text="{not json", content_type="application/json"), None, None
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self.counts["400"] += 1
            return _error(flavour, 400, "invalid_request_error", "body is not JSON"), None, None
        self.recent.append(body)
        messages = list(body.get("messages") or [])
        if flavour == "anthropic" and body.get("system"):
            messages = [{"role": "system", "content": body["system"]}] + messages
        if r() < f.p_malformed:
            self.counts["malformed"] += 1
            text = malformed(messages)
        elif r() < f.p_wrong_length:
            self.counts["wrong_length"] += 1
            text = wrong_length(messages)
        else:
            self.counts["ok"] += 1
            text = self.rule(messages)
        return None, body, text

    async def _answer(self, request: Any, api: str) -> Any:
        """A chat request of ``api`` (``openai`` or ``anthropic``): the fault it draws, or the rule's reply."""
        from aiohttp import web

        resp, body, text = await self._common(request, api)
        if resp is not None:
            return resp
        reply = self.openai_reply if api == "openai" else self.anthropic_reply
        return web.json_response(reply(body, text))

    def openai_reply(self, body: dict, text: str) -> dict:
        """A chat.completion object answering ``body`` with ``text`` (also the body of a batch output line)."""
        prompt = sum(_tokens(str(m.get("content", ""))) for m in body.get("messages", []))
        text = self._with_echo(text)
        return {
            "id": f"chatcmpl-{self.counts['requests']}{self._echo.strip()}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", "test-model") + self._echo,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop" + self._echo}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": _tokens(text), "total_tokens": prompt + _tokens(text)},
        }

    def anthropic_reply(self, body: dict, text: str) -> dict:
        """A message object answering ``body`` with ``text`` (also a succeeded batch result's message)."""
        prompt = sum(_tokens(json.dumps(m.get("content", ""))) for m in body.get("messages", [])) + _tokens(str(body.get("system", "")))
        text = self._with_echo(text)
        return {
            "id": f"msg_{self.counts['requests']}{self._echo.strip()}", "type": "message", "role": "assistant",
            "model": body.get("model", "test-model") + self._echo, "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn" + self._echo, "stop_sequence": self._echo.strip() or None,
            "usage": {"input_tokens": prompt, "output_tokens": _tokens(text)},
        }

    # ------------------------------------------------------------------ lifecycle
    async def start_async(self) -> None:
        from aiohttp import web

        self._runner = web.AppRunner(self.make_app(), access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=BACKLOG, reuse_address=True)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # port 0 -> the one the OS chose

    async def stop_async(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _thread_main(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self.start_async())
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self.stop_async())
        loop.close()

    def start(self) -> "ChatTestServer":
        self._thread = threading.Thread(target=self._thread_main, name="chat-test-server", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise RuntimeError(f"test server failed to start: {self._error}")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            # cut hung handlers short, then stop
            async def _shutdown() -> None:
                await self.stop_async()

            fut = asyncio.run_coroutine_threadsafe(_shutdown(), self._loop)
            try:
                fut.result(timeout=10)
            except Exception:  # noqa: BLE001 - best effort at teardown
                pass
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._thread = None

    def reset_counts(self) -> None:
        self.counts.clear()
        self.bodies.clear()
        self.recent.clear()

    def __enter__(self) -> "ChatTestServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _require_aiohttp() -> None:
    """aiohttp is a test-only dependency: say how to get it instead of a bare ImportError."""
    import importlib.util

    if importlib.util.find_spec("aiohttp") is None:
        from metaeval.errors import ConfigError

        raise ConfigError("the loopback test server needs aiohttp, a test-only dependency: pip install 'metaeval[test]'")


def _error(flavour: str, status: int, kind: str, message: str) -> Any:
    from aiohttp import web

    if flavour == "anthropic":
        body = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        body = {"error": {"message": message, "type": kind, "code": status}}
    return web.json_response(body, status=status)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m metaeval.testing.server", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8011)
    for f in fields(Faults):
        flag = "--" + f.name.replace("_", "-").replace("-s", "") if f.name == "latency_s" else "--" + f.name.replace("_", "-")
        parser.add_argument(flag, dest=f.name, type=type(f.default), default=f.default, help=f.metadata.get("help"))
    parser.add_argument("--expected-key-env", default=None, help="env var holding the only key accepted")
    parser.add_argument("--sampling", type=float, default=None, metavar="P",
                        help="answer repeats of a prompt like a sampled model: each label redrawn with probability P "
                             "(metaeval.testing.rules.sampling_rule; for sweep.samples)")
    parser.add_argument("--prompt-noise", type=float, default=None, metavar="P",
                        help="answer by the prompt version: word overlap under the JSON prompt (v2_json), and under "
                             "the plain-list prompt (v1) each label replaced at random with probability P "
                             "(metaeval.testing.rules.prompt_rule; for prompt comparisons)")
    args = parser.parse_args(argv)
    import os

    from metaeval.testing.rules import prompt_rule, sampling_rule

    faults = Faults(**{f.name: getattr(args, f.name) for f in fields(Faults)})
    key = os.environ.get(args.expected_key_env) if args.expected_key_env else None
    rule = sampling_rule(args.sampling, seed=faults.seed) if args.sampling is not None else None
    if args.prompt_noise is not None:
        if rule is not None:
            parser.error("--sampling and --prompt-noise are two rules; give one")
        rule = prompt_rule(args.prompt_noise, seed=faults.seed)
    server = ChatTestServer(rule=rule, faults=faults, host=args.host, port=args.port, expected_key=key)

    async def serve() -> None:
        await server.start_async()
        print(f"listening on {server.url}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop_async()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
