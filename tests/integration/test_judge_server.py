"""The test server as a separate process (its CLI), under a burst of simultaneous connections."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from metaeval.testing.server import BACKLOG

ROOT = Path(__file__).resolve().parents[2]


def test_cli_server_handles_a_burst_and_stops_on_sigterm():
    assert BACKLOG >= 128
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "metaeval.testing.server", "--port", str(port), "--latency", "0.05"],
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == f"listening on http://127.0.0.1:{port}"

        async def burst(n: int) -> list[int]:
            import aiohttp

            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            conn = aiohttp.TCPConnector(limit=0)  # every request opens its own connection at once
            async with aiohttp.ClientSession(connector=conn) as session:
                async def one() -> int:
                    async with session.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body) as r:
                        await r.json()
                        return r.status

                return await asyncio.gather(*(one() for _ in range(n)))

        statuses = asyncio.run(burst(300))
        assert statuses == [200] * 300
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
            assert b'"requests": 300' in r.read()
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=120)  # a hang guard, not a speed bound
    assert rc == -signal.SIGTERM
