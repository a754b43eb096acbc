"""Append-only results store: one JSON line per finished job, so a rerun skips what is done and a crashed run
resumes where it stopped.

Layout: ``<results_dir>/<experiment>/jobs.jsonl``.  Each line is ``{"key", "spec", "status", "output",
"stats", "finished_at"}``.  Only the driver writes (executors hand results back), every record is flushed as it
arrives (it survives ``kill -9`` of the process) and fsynced at most once a second.  A line cut short by a crash
is dropped (and logged) when the store is reopened; the job it described simply runs again.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any, Iterator

from metaeval.pipeline.specs import JobSpec

log = logging.getLogger(__name__)


class ResultsStore:
    """Job results keyed by ``JobSpec.key``.  Use as a context manager or call ``close()``."""

    def __init__(self, folder: str | os.PathLike, fsync_interval_s: float = 1.0):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / "jobs.jsonl"
        self._records: dict[str, dict[str, Any]] = {}
        self._load()
        self._fh = open(self.path, "a", encoding="utf-8")
        self._fsync_interval = fsync_interval_s
        self._last_sync = time.monotonic()
        self.written = 0

    # ---------------------------------------------------------------- reading
    def _load(self) -> None:
        if not self.path.exists():
            return
        good_bytes = 0
        with open(self.path, "rb") as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    log.warning("%s: dropping a line cut short by an interrupted run (%d bytes)", self.path, len(raw))
                    break
                try:
                    rec = json.loads(raw)
                except json.JSONDecodeError:
                    log.warning("%s: dropping an unreadable line at byte %d", self.path, good_bytes)
                    break
                self._records[rec["key"]] = rec
                good_bytes += len(raw)
        if good_bytes != self.path.stat().st_size:
            with open(self.path, "r+b") as fh:
                fh.truncate(good_bytes)

    def __contains__(self, key: str) -> bool:
        return key in self._records

    def get(self, key: str) -> dict[str, Any] | None:
        return self._records.get(key)

    def __len__(self) -> int:
        return len(self._records)

    def records(self) -> Iterator[dict[str, Any]]:
        return iter(self._records.values())

    # ---------------------------------------------------------------- writing
    def put(self, spec: JobSpec, status: str, output: Any, stats: dict[str, Any] | None = None) -> dict[str, Any]:
        """Append one finished job (``status`` is ``done`` or ``failed``); returns the record."""
        rec = {
            "key": spec.key,
            "spec": spec.as_dict(),
            "status": status,
            "output": output,
            "stats": stats or {},
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        self._fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        self._fh.flush()
        now = time.monotonic()
        if now - self._last_sync >= self._fsync_interval:
            os.fsync(self._fh.fileno())
            self._last_sync = now
        self._records[spec.key] = rec
        self.written += 1
        return rec

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
