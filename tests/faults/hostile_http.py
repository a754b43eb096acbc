"""Hostile OpenAI-compatible servers on 127.0.0.1 that break HTTP itself, for the limit tests (issue 33):

* ``slowloris``: sends the status line and headers at once, then the body one byte every ``drip_s`` seconds (a
  client whose timeout is per read never times out);
* ``gzip_bomb``: an HTTP 200 with ``content-encoding: gzip`` whose ~200 KB body expands to ``bomb_mb`` MB of a
  valid-looking chat-completion JSON (a client that decompresses before capping holds it all in memory).

Raw asyncio streams (no web framework), so the bytes on the wire are exactly these.  ``counts['requests']``
counts requests read.  As a process: ``python -m tests.faults.hostile_http MODE PORT``.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import sys
import threading
from typing import Any


def _reply_json(text: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "test-model",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()


def bomb_body(mb: int) -> bytes:
    """A gzip stream of a chat completion whose content is ``mb`` MB of 'a' (compressed ~1000:1)."""
    head = _reply_json("@@")
    pre, post = head.split(b"@@")
    import io

    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz:
        gz.write(pre)
        block = b"a" * (1 << 20)
        for _ in range(mb):
            gz.write(block)
        gz.write(post)
    return buf.getvalue()


class HostileServer:
    def __init__(self, mode: str, port: int = 0, drip_s: float = 0.5, bomb_mb: int = 200):
        self.mode, self.port, self.drip_s = mode, port, drip_s
        self.counts = {"requests": 0}
        self._bomb = bomb_body(bomb_mb) if mode == "gzip_bomb" else b""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: Any = None
        self._ready = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if length:
                    await reader.readexactly(length)
                self.counts["requests"] += 1
                if self.mode == "slowloris":
                    body = _reply_json("[]")
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                                 + str(len(body)).encode() + b"\r\n\r\n")
                    await writer.drain()
                    for i in range(len(body)):
                        writer.write(body[i:i + 1])
                        await writer.drain()
                        await asyncio.sleep(self.drip_s)
                else:
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
                                 b"content-length: " + str(len(self._bomb)).encode() + b"\r\n\r\n" + self._bomb)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
            pass
        finally:
            try:
                writer.close()
            except RuntimeError:  # the loop is closing with the process
                pass

    async def _main(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        async with self._server:
            await self._server.serve_forever()

    def _thread(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._main())
        except asyncio.CancelledError:
            pass

    def start(self) -> "HostileServer":
        threading.Thread(target=self._thread, daemon=True).start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._server is not None:
            self._loop.call_soon_threadsafe(self._server.close)

    def __enter__(self) -> "HostileServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


if __name__ == "__main__":
    srv = HostileServer(sys.argv[1], int(sys.argv[2]))
    srv._thread()
