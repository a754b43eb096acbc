"""Content-addressed response cache in SQLite (WAL mode): safe for several processes, survives a crash.

Key (``cache_key``): SHA-256 of the canonical JSON of ``deployment name, model, rendered messages, generation
params, sample index`` (DESIGN principle 4).  Retries, timeouts and concurrency are *not* part of the key.

Only successful replies are stored: the reply text, token usage, finish reason and the model the server named.
Never headers, never the key.  Every ``put`` is its own transaction, so a process killed mid-run loses at most
the reply it was writing; ``journal_mode=WAL`` + ``busy_timeout`` let several processes (Ray actors, parallel
sweeps) read and write one file.  Connections are opened per process (re-opened after a fork).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence


def cache_key(deployment: str, model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any], sample_index: int = 0) -> str:
    payload = {
        "deployment": deployment,
        "model": model,
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "params": dict(params),
        "sample_index": int(sample_index),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """``get(key) -> dict | None`` and ``put(key, record)`` over one SQLite file."""

    def __init__(self, path: str | os.PathLike):
        self.path = str(path)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self._connect()

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            conn = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)"
            )
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._connect().execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        value = json.dumps(dict(record), ensure_ascii=False, sort_keys=True)
        with self._lock:
            self._connect().execute(
                "INSERT OR REPLACE INTO responses (key, value, created) VALUES (?, ?, ?)", (key, value, time.time())
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __getstate__(self) -> dict[str, Any]:  # picklable for Ray actors: the connection is re-opened there
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])

    def __repr__(self) -> str:
        return f"ResponseCache({self.path!r})"
