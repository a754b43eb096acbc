"""Append-only results store: one JSON line per finished job, so a rerun skips what is done and a crashed run
resumes where it stopped.

Layout: ``<results_dir>/<experiment>/jobs.jsonl``.  Each line is ``{"key", "spec", "status", "output",
"stats", "finished_at"}``.  Only the driver writes (executors hand results back); every record is flushed as it
arrives (it survives ``kill -9`` of the process) and fsynced at most once a second.

Reading never loses a good record:

* the *latest* record of a key wins (a job that failed and was retried by a rerun has a later ``done`` record);
* blank lines are skipped;
* a line that is not a JSON record (garbage, a line cut short by a crash, JSON that is not an object with
  ``key``/``spec``/``status``/``output``) is moved to ``jobs.quarantine.jsonl`` as ``{"line", "reason", "raw",
  "source", "quarantined_at"}`` and every other line is kept byte for byte: the store is rewritten without the
  bad lines (unique temporary file + atomic rename, after the quarantine file is synced), never truncated.  The
  job a bad line described simply runs again.

``jobs.jsonl``, ``jobs.quarantine.jsonl`` and ``.lock`` are opened without following links: one of them (or a
folder on the way) that is a symbolic link is refused with one line before anything is read or written.

The store holds the folder's ``RunLock`` (``.lock``) from opening until ``close()`` (or, with
``close(keep_lock=True)``, until ``release()``), so two sweeps never append to one ``jobs.jsonl``.

Memory: the records kept in memory (``get``) are the file's records without ``output["transcripts"]`` (the
prompts and replies, most of a record's size with an LLM judge); ``transcripts(key)`` reads them back from the
record's line in ``jobs.jsonl`` (its byte offset is kept), so the driver's memory grows with the labels and
stats of stored jobs, not with their transcripts.  The file's records are unchanged.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any, Iterator

from metaeval.layout import open_nofollow, refuse_links
from metaeval.pipeline.lock import RunLock
from metaeval.pipeline.specs import JobSpec

log = logging.getLogger(__name__)

STATUSES = ("done", "failed")

#: ``json.dumps(rec, ensure_ascii=False)`` without building an encoder per record (same output)
_encode = json.JSONEncoder(ensure_ascii=False).encode


def record_problem(rec: Any) -> str | None:
    """Why a decoded line is not a job record (``None`` when it is one)."""
    if not isinstance(rec, dict):
        return f"not a JSON object ({type(rec).__name__})"
    if not isinstance(rec.get("key"), str) or not rec["key"]:
        return "no string field 'key'"
    if rec.get("status") not in STATUSES:
        return f"field 'status' is {rec.get('status')!r}, not one of {', '.join(STATUSES)}"
    if not isinstance(rec.get("spec"), dict):
        return "no object field 'spec'"
    if "output" not in rec:
        return "no field 'output'"
    if not isinstance(rec["output"], dict):  # e.g. "output": null: well-formed JSON, not a job's result
        return f"field 'output' is {type(rec['output']).__name__}, not an object"
    if not isinstance(rec.get("stats", {}), dict):
        return "field 'stats' is not an object"
    return None


#: stage -> (output field holding one value per item, its name in messages)
_ITEM_FIELDS = {"assign": ("labels", "labels"), "importance": ("importance", "importance labels"),
                "relevance": ("grades", "grades")}


def output_problem(stage: str, output: Any, n_items: int) -> str | None:
    """Why a stored ``done`` output cannot be reused for a job of ``n_items`` items (``None`` when it can): a
    list of per-item values that is missing, not a list, or of another length (a record edited or written by
    another version).  Such a record is set aside (``ResultsStore.set_aside``) and its job runs again, rather
    than its missing items silently becoming FAILED labels."""
    if not isinstance(output, dict):
        return f"output is {type(output).__name__}, not an object"
    spec = _ITEM_FIELDS.get(stage)
    if spec is None:
        return None if isinstance(output.get("nuggets", []), list) else "field 'nuggets' is not a list"
    field, what = spec
    values = output.get(field)
    if not isinstance(values, list):
        return f"field {field!r} is {type(values).__name__}, not a list"
    if len(values) != n_items:
        return f"{len(values)} {what} for {n_items} items"
    return None


def _append(path: Path, folder: Path, text: bool = False) -> Any:
    """``path`` opened for appending without following links (a link is a one-line ``OutputError``)."""
    fd = open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644, root=folder)
    return os.fdopen(fd, "a", encoding="utf-8") if text else os.fdopen(fd, "ab")


def quarantine_reasons(bad: list[dict[str, Any]], shown: int = 10) -> str:
    """The bad lines grouped by reason: ``line 3, 9: not JSON (...); line 5: no string field 'key'`` (each line
    under its own reason, at most ``shown`` line numbers in all)."""
    groups: dict[str, list[int]] = {}
    for b in bad:
        groups.setdefault(str(b.get("reason")), []).append(int(b.get("line") or 0))
    parts, n = [], 0
    for reason, lines in groups.items():
        if n >= shown:
            parts.append("...")
            break
        head = lines[: shown - n]
        n += len(head)
        more = " ..." if len(head) < len(lines) else ""
        parts.append(f"line{'s' if len(lines) > 1 else ''} {', '.join(map(str, head))}{more}: {reason}")
    return "; ".join(parts)


class ResultsStore:
    """Job results keyed by ``JobSpec.key``.  Use as a context manager or call ``close()`` then ``release()``.

    ``folder`` is a results folder or a ``metaeval.layout.ResultsLayout`` (its ``jobs``, ``quarantine`` and
    ``lock`` paths are used).
    ``lock=False`` opens without the folder lock (read-only inspection by tools and tests).
    """

    def __init__(self, folder: "str | os.PathLike | Any", fsync_interval_s: float = 1.0, *, jobs_path: str | os.PathLike | None = None,
                 quarantine_path: str | os.PathLike | None = None, lock_path: str | os.PathLike | None = None,
                 lock: bool = True):
        if hasattr(folder, "jobs") and hasattr(folder, "root"):  # a metaeval.layout.ResultsLayout
            layout = folder
            folder = layout.root
            jobs_path, quarantine_path, lock_path = (jobs_path or layout.jobs, quarantine_path or layout.quarantine,
                                                     lock_path or layout.lock)
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = Path(jobs_path) if jobs_path else self.folder / "jobs.jsonl"
        self.quarantine_path = Path(quarantine_path) if quarantine_path else self.folder / "jobs.quarantine.jsonl"
        self.lock = RunLock(lock_path or self.folder / ".lock")
        for own in (self.path, self.quarantine_path):  # ours alone: a link is refused before anything is read
            refuse_links(own, self.folder)
        if lock:
            self.lock.acquire()  # before reading: a second sweep stops here with one line
        self._records: dict[str, dict[str, Any]] = {}
        #: key -> (byte offset, length) of its latest record's line in jobs.jsonl (for ``transcripts``)
        self._where: dict[str, tuple[int, int]] = {}
        self.quarantined: list[dict[str, Any]] = []
        self.lines_read = 0
        self._load()
        self._fh = _append(self.path, self.folder)  # UTF-8 bytes, "\n" line ends: the bytes text mode wrote on POSIX
        self._end = self._fh.seek(0, os.SEEK_END)
        self._rfh: Any = None
        self._fsync_interval = fsync_interval_s
        self._last_sync = time.monotonic()
        self.written = 0

    # ---------------------------------------------------------------- reading
    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        keep: list[bytes] = []
        bad: list[dict[str, Any]] = []
        lines = data.split(b"\n")
        last = len(lines) - 1  # after the final "\n" split() yields b"" (or the cut-short tail of a crash)
        pos = 0  # byte offset of the current line
        for i, raw in enumerate(lines):
            lineno = i + 1
            start, pos = pos, pos + len(raw) + 1
            if i == last and not raw:
                break
            if not raw.strip():
                keep.append(raw)
                continue
            reason = None
            rec: Any = None
            if i == last:
                reason = "line cut short (no line end: an interrupted write)"
            else:
                try:
                    rec = json.loads(raw)
                except (ValueError, RecursionError) as exc:  # ValueError covers JSONDecodeError and UnicodeDecodeError
                    reason = f"not JSON ({str(exc)[:120]})"
                else:
                    reason = record_problem(rec)
            if reason is not None:
                bad.append({"line": lineno, "reason": reason, "raw": raw.decode("utf-8", "replace")})
                continue
            self.lines_read += 1
            keep.append(raw)
            self._keep(rec, start, len(raw))  # the latest record of a key wins
        if bad:
            self._quarantine(bad, keep)
            self._records.clear()
            self._where.clear()
            self.lines_read = 0
            self._load()  # the rewritten file: every line good, offsets from there

    def _keep(self, rec: dict[str, Any], offset: int, length: int) -> None:
        """Hold ``rec`` in memory without its transcripts; remember where its line is."""
        out = rec.get("output")
        if isinstance(out, dict) and "transcripts" in out:
            rec = {**rec, "output": {k: v for k, v in out.items() if k != "transcripts"}}
        self._records[rec["key"]] = rec
        self._where[rec["key"]] = (offset, length)

    def _quarantine(self, bad: list[dict[str, Any]], keep: list[bytes]) -> None:
        """Append the bad lines to the quarantine file (synced), then atomically replace the store by its good
        lines.  A crash between the two steps leaves the bad lines in both files; nothing is ever lost."""
        from metaeval.io.atomic import atomic_open

        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with _append(self.quarantine_path, self.folder, text=True) as q:
            for b in bad:
                q.write(json.dumps({**b, "source": str(self.path), "quarantined_at": stamp}, ensure_ascii=False) + "\n")
            q.flush()
            os.fsync(q.fileno())
        with atomic_open(self.path, "wb", fsync=True) as fh:
            for raw in keep:
                if raw.strip():
                    fh.write(raw + b"\n")
        self.quarantined.extend(bad)
        log.warning("%s: %d unreadable line(s) (%s) moved to %s; their jobs will run again; %d record(s) kept",
                    self.path, len(bad), quarantine_reasons(bad), self.quarantine_path, self.lines_read)

    def set_aside(self, key: str, reason: str) -> None:
        """Copy ``key``'s latest record to the quarantine file with ``reason`` and forget it, so its job runs again
        (the new record supersedes the old line in ``jobs.jsonl``, which is kept byte for byte)."""
        rec = self._records.pop(key, None)
        if rec is None:
            return
        where = self._where.pop(key, None)
        raw = ""
        if where is not None:
            with open(self.path, "rb") as fh:
                fh.seek(where[0])
                raw = fh.read(where[1]).decode("utf-8", "replace")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with _append(self.quarantine_path, self.folder, text=True) as q:
            q.write(json.dumps({"key": key, "reason": reason, "raw": raw, "source": str(self.path),
                                "quarantined_at": stamp}, ensure_ascii=False) + "\n")
            q.flush()
            os.fsync(q.fileno())
        self.quarantined.append({"key": key, "reason": reason})
        log.warning("%s: stored job %s (%s %s) cannot be reused: %s; set aside in %s, the job runs again", self.path,
                    key[:12], (rec.get("spec") or {}).get("stage"), (rec.get("spec") or {}).get("qid"), reason,
                    self.quarantine_path)

    @property
    def interrupted_runs(self) -> list[dict[str, Any]]:
        """Earlier sweeps of this folder killed while running (``kill -9``, a crash): requests they had in flight
        were sent but never stored, so the folder's request/token/cost totals are lower bounds when non-empty."""
        return list(self.lock.interrupted_runs)

    def __contains__(self, key: str) -> bool:
        return key in self._records

    def get(self, key: str) -> dict[str, Any] | None:
        return self._records.get(key)

    def __len__(self) -> int:
        return len(self._records)

    def records(self) -> Iterator[dict[str, Any]]:
        """The latest record of every key, as held in memory (without ``output["transcripts"]``)."""
        return iter(self._records.values())

    def transcripts(self, key: str) -> list[dict[str, Any]]:
        """``output["transcripts"]`` of ``key``'s latest record, read back from its line in jobs.jsonl ([] when
        there is no such record or it has none)."""
        where = self._where.get(key)
        if where is None:
            return []
        if self._rfh is None:
            self._rfh = open(self.path, "rb")
        self._rfh.seek(where[0])
        rec = json.loads(self._rfh.read(where[1]))
        out = rec.get("output") if isinstance(rec, dict) else None
        return list(out.get("transcripts") or []) if isinstance(out, dict) else []

    # ---------------------------------------------------------------- writing
    def put(self, spec: JobSpec, status: str, output: Any, stats: dict[str, Any] | None = None) -> dict[str, Any]:
        """Append one finished job (``status`` is ``done`` or ``failed``); returns the record."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
        rec = {
            "key": spec.key,
            "spec": spec.as_dict(),
            "status": status,
            "output": output,
            "stats": stats or {},
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        line = (_encode(rec) + "\n").encode("utf-8")
        self._fh.write(line)
        self._fh.flush()
        now = time.monotonic()
        if now - self._last_sync >= self._fsync_interval:
            os.fsync(self._fh.fileno())
            self._last_sync = now
        self._keep(rec, self._end, len(line) - 1)
        self._end += len(line)
        self.written += 1
        return rec

    def close(self, keep_lock: bool = False) -> None:
        """Flush, sync and close ``jobs.jsonl`` and drop the folder lock (``keep_lock=True``: hold it until
        ``release()``, e.g. while the labels are written)."""
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
        if self._rfh is not None:
            self._rfh.close()
            self._rfh = None
        if not keep_lock:
            self.lock.release()

    def release(self) -> None:
        """Close the file (if open) and drop the folder lock."""
        self.close()

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
