"""Small real workers for executor tests (importable by Ray actors in other processes)."""

from __future__ import annotations

import asyncio
import os


class EchoWorker:
    """Sleeps ``payload['sleep']`` seconds and echoes the payload with the worker's pid; counts concurrency."""

    def __init__(self, config):
        self.config = config
        self.active = 0
        self.peak = 0

    async def run(self, stage, payload):
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(payload.get("sleep", 0.0))
            if payload.get("fail"):
                raise RuntimeError(f"job {payload['i']} failed on purpose")
            if payload.get("die") and not os.path.exists(payload["die"]):
                open(payload["die"], "w").close()
                os._exit(1)  # kill the process hosting this worker once
            return {"i": payload["i"], "stage": stage, "pid": os.getpid(), "peak": self.peak, "name": self.config["name"]}
        finally:
            self.active -= 1


def make_echo_worker(config):
    return EchoWorker(config)
