"""Progress display for long commands: a tqdm bar per stage on a terminal, one plain line per stage otherwise.

A log file or CI output then gets ``create: 16 jobs in 10.2 s (cache hits 0, failed 0, retries 0, cost $0.0000)``
instead of hundreds of ``\\r``-separated bar redraws.  Used as the sweep's ``ProgressFactory``:
``stage_progress(stage, total)`` returns an object with ``update(n, **live)`` and ``close()``.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


#: set by ``metaeval -q``: no progress output at all
QUIET = False


def stage_progress(stage: str, total: int, stream: TextIO | None = None) -> Any:
    """A bar when ``stream`` (default stderr) is a terminal, else a ``LineProgress``; nothing under ``-q``."""
    if QUIET:
        return NoProgress()
    stream = stream or sys.stderr
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return BarProgress(stage, total, stream)
    return LineProgress(stage, total, stream)


def _live_text(live: dict[str, Any]) -> str:
    return (f"cache hits {live.get('cache_hits', 0)}, failed {live.get('failures', 0)}, "
            f"retries {live.get('retries', 0)}, cost ${live.get('cost_usd', 0.0):.4f}")


class BarProgress:
    """A tqdm bar per stage (on a terminal)."""

    def __init__(self, stage: str, total: int, stream: TextIO):
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc=f"{stage:<10}", unit="job", leave=True, mininterval=0.2, file=stream)

    def update(self, n: int = 1, **live: Any) -> None:
        if live:
            self.bar.set_postfix(hits=live.get("cache_hits", 0), failed=live.get("failures", 0),
                                 retries=live.get("retries", 0), cost=f"${live.get('cost_usd', 0.0):.4f}", refresh=False)
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


class LineProgress:
    """No redraws: one line when the stage ends (done/total, time, the last live counters)."""

    def __init__(self, stage: str, total: int, stream: TextIO):
        self.stage, self.total, self.stream = stage, total, stream
        self.done, self.live, self.t0 = 0, {}, time.monotonic()

    def update(self, n: int = 1, **live: Any) -> None:
        self.done += n
        if live:
            self.live = live

    def close(self) -> None:
        dt = time.monotonic() - self.t0
        extra = f" ({_live_text(self.live)})" if self.live else ""
        self.stream.write(f"{self.stage}: {self.done}/{self.total} jobs in {dt:.1f} s{extra}\n")
        self.stream.flush()


class NoProgress:
    def update(self, n: int = 1, **live: Any) -> None:
        pass

    def close(self) -> None:
        pass
