"""Content-addressed response cache in SQLite (WAL mode): safe for several processes, survives a crash.

Key (``cache_key``): SHA-256 of the canonical JSON of ``deployment name (the namespace), backend, model,
deployment revision, rendered messages, generation params, sample index`` (DESIGN principle 4) - what determines
the reply.  Not in the key: the URL (a replay with the endpoint switched off must reproduce everything, as TREC
AutoJudge asks of submissions), retries, timeouts, concurrency.  Two configured deployments never share entries;
one deployment whose server is replaced by a different one (other weights under the same model name) must say so
with an explicit ``deployment.revision``.  The cache records the URL every entry came from and warns when one
deployment name now points at a different server than before.

Only successful replies are stored: the reply text (keys redacted by the client, in every field), token usage,
what it cost (``cost_usd``: a replay counts it as ``replayed_cost_usd``), finish reason, the model the server named
and the URL (user, password and query string stripped).  Never headers, never a key.  ``cache.path`` is vetted
when the cache opens (a folder, a path too long, a read-only folder: one ``OutputError`` line, not a sqlite3
traceback).

Integrity: when the file is opened, ``PRAGMA quick_check`` runs; a file that is not SQLite, is truncated or has
corrupt pages is moved aside to ``<path>.corrupt-<UTC time>`` with a warning naming it, and a fresh cache is
started (the model is asked again).  A row that cannot be read or decoded later is a miss (logged), never a
failed call; a write that fails is logged and skipped (the reply is still returned).

Shared work (``claim`` / ``release``): processes sharing one cache file (two sweeps of different names, Ray
actors) claim a request before sending it - a row of the ``leases`` table (key, host, pid, expiry) written in one
``BEGIN IMMEDIATE`` transaction with the check that no reply is stored - so each distinct request is sent once;
the others poll the file until the reply is stored (``metaeval.judges.client``).  A lease ends when its holder
stores the reply or gives up, when it expires (the holder's longest possible call: every attempt's timeout plus
the backoffs), or at once when its holder is a dead process of this host (``kill -9``).

Every ``put`` is its own transaction, so a process killed mid-run loses at most the reply it was writing;
``journal_mode=WAL`` + ``busy_timeout`` let several processes (Ray actors, parallel sweeps) share one file.
Connections are opened per process (re-opened after a fork).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Mapping, Sequence

log = logging.getLogger(__name__)

#: bump when the key's contents change (old entries simply stop matching)
KEY_SCHEMA = 2

#: ``json.dumps(..., sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)``, built once
_key_json = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str).encode
#: ``json.dumps(..., ensure_ascii=False, sort_keys=True)``, built once
_value_json = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def cache_key(backend: str, model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any],
              sample_index: int = 0, revision: str | None = None, deployment: str | None = None) -> str:
    """SHA-256 over what determines a reply: the deployment's name as its namespace (two configured deployments
    never share entries), backend, model, ``revision``, messages, params, sample index.  Never the URL."""
    payload = {
        "v": KEY_SCHEMA,
        "deployment": deployment,
        "backend": backend,
        "model": model,
        "revision": revision,
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "params": dict(params),
        "sample_index": int(sample_index),
    }
    blob = _key_json(payload)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=256)
def public_url(url: str | None) -> str:
    """The URL without user, password, query or fragment (what the cache may write down); '' for the SDK default."""
    if not url:
        return ""
    try:
        p = urllib.parse.urlsplit(str(url))
    except ValueError:
        return "(unparseable url)"
    host = p.hostname or ""
    if p.port:
        host = f"{host}:{p.port}"
    return urllib.parse.urlunsplit((p.scheme, host, p.path.rstrip("/"), "", ""))


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL, "
    "deployment TEXT, url TEXT)",
    "CREATE TABLE IF NOT EXISTS endpoints (deployment TEXT NOT NULL, url TEXT NOT NULL, first_seen REAL NOT NULL, "
    "last_seen REAL NOT NULL, PRIMARY KEY (deployment, url))",
    # a request on the wire: claimed by one process (host, pid) until it stores the reply or the lease expires
    "CREATE TABLE IF NOT EXISTS leases (key TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, "
    "expires REAL NOT NULL)",
)

#: what ``ResponseCache.claim`` answers
CLAIMED, HELD, CACHED = "claimed", "held", "cached"


#: (cache path, deployment, url) whose endpoint change this process has announced already
_ANNOUNCED: set[tuple[str, str, str]] = set()


def _alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError, TypeError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


class CacheCorrupt(Exception):
    pass


#: SQLite result codes that mean "this file is damaged" (not "busy" or "locked": those are waited out)
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


def _is_corruption(exc: BaseException) -> bool:
    if isinstance(exc, CacheCorrupt):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _CORRUPT_CODES
    msg = str(exc).lower()
    return "malformed" in msg or "not a database" in msg


#: SQLite's own limit on the length of a database file name (``SQLITE_MAX_PATHLEN`` on unix: 512 bytes)
SQLITE_MAX_PATH = 512


def check_cache_path(path: str) -> None:
    """One-line ``OutputError`` when SQLite cannot open ``path`` (its absolute form over ``SQLITE_MAX_PATH``
    bytes) or when it, or its ``-wal`` / ``-shm`` / ``-journal`` companions, is a symbolic link (SQLite would
    write through it)."""
    from metaeval.io.outputs import OutputError
    from metaeval.layout import refuse_links

    n = len(os.fsencode(os.path.abspath(path)))
    if n >= SQLITE_MAX_PATH:
        raise OutputError(f"cache.path={path[:60]}...: {n} bytes as an absolute path, over SQLite's limit of "
                          f"{SQLITE_MAX_PATH - 1}; choose a shorter path")
    for p in (path, path + "-wal", path + "-shm", path + "-journal"):
        refuse_links(p)


class ResponseCache:
    """``get(key) -> dict | None`` and ``put(key, record)`` over one SQLite file."""

    def __init__(self, path: str | os.PathLike):
        from metaeval.io.outputs import check_output, output_errors

        self.path = str(path)
        if self.path != ":memory:":
            check_output(self.path, kind="file", option="cache.path")  # a folder, too long, read-only: one line
            check_cache_path(self.path)
        with output_errors(self.path):
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self.moved_to: str | None = None  # where a corrupt file was moved (this process)
        self.bad_rows = 0
        try:
            self._connect()
        except sqlite3.DatabaseError as exc:  # disk full, no permission, a name SQLite refuses: one line
            from metaeval.io.outputs import OutputError

            raise OutputError(f"cache.path={self.path}: cannot open the response cache ({exc})") from None

    # ------------------------------------------------------------------ opening
    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout=60000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            row = conn.execute("PRAGMA quick_check").fetchone()
            if not row or row[0] != "ok":
                raise CacheCorrupt(str(row[0] if row else "no answer"))
            for stmt in _SCHEMA:
                conn.execute(stmt)
            cols = {r[1] for r in conn.execute("PRAGMA table_info(responses)")}
            for col in ("deployment", "url"):  # a cache written by an older metaeval
                if col not in cols:
                    conn.execute(f"ALTER TABLE responses ADD COLUMN {col} TEXT")
        except (sqlite3.DatabaseError, CacheCorrupt):
            conn.close()
            raise
        return conn

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            try:
                conn = self._open()
            except (sqlite3.DatabaseError, CacheCorrupt) as exc:
                if not _is_corruption(exc):
                    raise
                self._move_aside(exc)
                conn = self._open()
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _move_aside(self, exc: Exception) -> None:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        target = f"{self.path}.corrupt-{stamp}-{os.getpid()}"
        try:
            os.replace(self.path, target)
        except FileNotFoundError:  # another process moved it first
            target = "(already moved by another process)"
        for suffix in ("-wal", "-shm", "-journal"):
            try:
                os.replace(self.path + suffix, f"{self.path}.corrupt-{stamp}-{os.getpid()}{suffix}")
            except FileNotFoundError:
                pass
        self.moved_to = target
        log.warning("response cache %s is unreadable (%s); moved it to %s and started a fresh cache "
                    "(replies not found there are requested again)", self.path, str(exc)[:200], target)

    # ------------------------------------------------------------------ rows
    def get(self, key: str) -> dict[str, Any] | None:
        """The stored reply, or ``None`` (a miss) when absent or unreadable."""
        try:
            with self._lock:
                row = self._connect().execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            rec = json.loads(row[0])
            if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
                raise ValueError("not a reply record")
            return rec
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            self.bad_rows += 1
            log.warning("response cache %s: entry %s unreadable (%s); treated as a miss", self.path, key[:12], str(exc)[:120])
            return None

    def put(self, key: str, record: Mapping[str, Any], *, deployment: str | None = None, url: str | None = None) -> None:
        value = _value_json(dict(record))
        try:
            with self._lock:
                self._connect().execute(
                    "INSERT OR REPLACE INTO responses (key, value, created, deployment, url) VALUES (?, ?, ?, ?, ?)",
                    (key, value, time.time(), deployment, public_url(url)),
                )
        except sqlite3.DatabaseError as exc:
            log.warning("response cache %s: could not store entry %s (%s); the reply is used but not cached",
                        self.path, key[:12], str(exc)[:120])

    def check_endpoint(self, deployment: str, url: str | None) -> list[str]:
        """Record that ``deployment`` is served from ``url``; returns (and warns about) the *other* URLs this
        deployment name pointed at before: their cached replies are reused, since the URL is not in the key."""
        url = public_url(url)
        now = time.time()
        try:
            with self._lock:
                conn = self._connect()
                others = [r[0] for r in conn.execute(
                    "SELECT url FROM endpoints WHERE deployment = ? AND url != ? ORDER BY last_seen", (deployment, url))]
                conn.execute("INSERT INTO endpoints (deployment, url, first_seen, last_seen) VALUES (?, ?, ?, ?) "
                             "ON CONFLICT (deployment, url) DO UPDATE SET last_seen = excluded.last_seen",
                             (deployment, url, now, now))
        except sqlite3.DatabaseError as exc:
            log.warning("response cache %s: could not record the endpoint (%s)", self.path, str(exc)[:120])
            return []
        if others and (self.path, deployment, url) not in _ANNOUNCED:  # once per process, not once per stage
            _ANNOUNCED.add((self.path, deployment, url))
            log.warning("response cache %s: deployment %r now points at %s but pointed at %s before; cached replies "
                        "from there are reused (the URL is not part of the cache key). If the servers differ, set "
                        "the deployment's revision to keep their replies apart.", self.path, deployment,
                        url or "the SDK's default URL", ", ".join(o or "the SDK's default URL" for o in others))
        return others

    # ------------------------------------------------------------------ leases (one request on the wire per key)
    def claim(self, key: str, ttl_s: float) -> str:
        """Claim ``key`` before sending its request: ``CACHED`` when a reply is stored already, ``HELD`` when a
        live process holds an unexpired lease on it (wait, then read the reply: ``get``), else ``CLAIMED`` (a lease
        until ``ttl_s`` from now, ended by ``release``).  A lease whose holder is a dead process on this host, or
        whose time is up, is taken over.  Any SQLite error: ``CLAIMED`` (the request is sent, as without leases)."""
        import socket

        host, pid, now = socket.gethostname(), os.getpid(), time.time()
        try:
            with self._lock:
                conn = self._connect()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    if conn.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None:
                        return CACHED
                    row = conn.execute("SELECT host, pid, expires FROM leases WHERE key = ?", (key,)).fetchone()
                    if row is not None and row[2] > now and not (row[0] == host and row[1] == pid) \
                            and not (row[0] == host and not _alive(row[1])):
                        return HELD
                    conn.execute("INSERT OR REPLACE INTO leases (key, host, pid, expires) VALUES (?, ?, ?, ?)",
                                 (key, host, pid, now + float(ttl_s)))
                    return CLAIMED
                finally:
                    conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            log.warning("response cache %s: could not claim entry %s (%s); sending it", self.path, key[:12], str(exc)[:120])
            return CLAIMED

    def release(self, key: str) -> None:
        """End this process's lease on ``key`` (after its reply was stored, or its call failed)."""
        try:
            with self._lock:
                self._connect().execute("DELETE FROM leases WHERE key = ? AND pid = ?", (key, os.getpid()))
        except sqlite3.DatabaseError as exc:
            log.warning("response cache %s: could not release entry %s (%s)", self.path, key[:12], str(exc)[:120])

    def url_of(self, key: str) -> str | None:
        with self._lock:
            row = self._connect().execute("SELECT url FROM responses WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

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
