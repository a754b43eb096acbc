"""What the sweep stores besides the store itself: the stored text of a job that raised (keys redacted) and the
read-only view of the stored jobs a dry run counts against."""

from __future__ import annotations

from typing import Any, Sequence


def job_error(exc: BaseException, secrets: Sequence[str] = ()) -> str:
    """The stored text of a job that raised: ``Type: message`` with every key in ``secrets`` (and any 8+-character
    fragment of one) replaced - the client redacts what it raises, this is the store's own guarantee."""
    from metaeval.judges.backends.base import redact

    text = f"{type(exc).__name__}: {exc}"
    for secret in secrets:
        text = redact(text, secret)
    return text


class ReadOnlyStore:
    """The store a dry run reads: stored job records by key; nothing can be written."""

    def __init__(self, records: dict[str, dict[str, Any]]):
        self._records = records

    def get(self, key: str) -> dict[str, Any] | None:
        return self._records.get(key)

    def transcripts(self, key: str) -> list[dict[str, Any]]:
        out = (self._records.get(key) or {}).get("output")
        return list(out.get("transcripts") or []) if isinstance(out, dict) else []

    def put(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - a dry run dispatches nothing
        raise RuntimeError("a dry run stores nothing")

    def close(self, keep_lock: bool = False) -> None:
        pass

    def release(self) -> None:
        pass
