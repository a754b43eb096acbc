"""One ``ChatClient`` call against a hostile server (``tests.faults.hostile_http``) in this fresh interpreter;
prints one JSON line: outcome, wall seconds of the call, peak RSS of the process (MiB), requests the server read.

    python -m tests.faults.limit_probe slowloris|gzip_bomb
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time

from metaeval.judges.client import CallFailed, ChatClient
from tests.faults.hostile_http import HostileServer


def peak_rss_mib() -> int:
    """This process's peak RSS since its exec (``VmHWM``), in MiB.  Not ``getrusage``'s ``ru_maxrss``: Linux carries
    that across ``execve`` from the forked parent, so a probe started by a large pytest worker reported the worker's
    peak (537 MiB in the full tier, for a client that read 65 KB)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024)
    except OSError:  # pragma: no cover - not Linux
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def main(mode: str) -> dict:
    with HostileServer(mode) as srv:
        client = ChatClient({"name": "hostile-http", "backend": "openai", "model": "test-model",
                             "base_url": srv.base_url, "api_key_env": None,
                             "limits": {"concurrency": 1, "max_retries": 1, "timeout_s": 2, "backoff_base_s": 0.01,
                                        "max_backoff_s": 0.05}})

        async def go() -> tuple[str, float]:
            client.backend.prepare()  # SDK imports (seconds on a loaded machine) before the clock starts
            t0 = time.perf_counter()
            try:
                tr = await client.complete([{"role": "user", "content": "hi"}])
                return f"reply of {len(tr.raw_output or '')} characters", time.perf_counter() - t0
            except CallFailed as exc:
                return f"failed: {str(exc)[:300]}", time.perf_counter() - t0
            finally:
                await client.aclose()

        t_all = time.perf_counter()
        outcome, wall = asyncio.run(go())
        return {"mode": mode, "outcome": outcome, "wall_s": round(wall, 2),
                "process_s": round(time.perf_counter() - t_all, 2),
                "peak_rss_mib": peak_rss_mib(),
                "server_requests": srv.counts["requests"]}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
