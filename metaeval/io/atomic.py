"""Atomic file writes: every output file is written to a unique temporary file in the same folder and renamed
over the target in one step (``os.replace``), so a reader sees the old file or the new one, never half of one,
and two processes writing the same path never share (or delete) each other's temporary file.

The temporary name is ``.<name>.<pid>.<random>.tmp`` (``tempfile.mkstemp``, given the umask's mode); it is removed
when the write fails, and an OS error (disk full, read-only file system, a name too long) becomes one
``metaeval.io.outputs.OutputError`` line naming the path.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator


def temp_beside(path: Path) -> tuple[int, str]:
    """A new unique temporary file next to ``path`` (its folder created): ``(fd, name)``, with the mode a file
    created under the umask would get (``metaeval.io.outputs.file_mode``: 0644 under umask 022), not
    ``mkstemp``'s 0600.  OS errors become one-line ``OutputError``s."""
    from metaeval.io.outputs import file_mode, output_errors

    with output_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
        try:
            os.fchmod(fd, file_mode())
        except OSError:
            os.close(fd)
            os.unlink(tmp)
            raise
    return fd, tmp


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", *, encoding: str = "utf-8", newline: str | None = "",
                fsync: bool = False) -> Iterator[IO]:
    """Open a unique temporary file next to ``path`` for writing; on a clean exit rename it over ``path``.

    ``mode`` is ``"w"`` (text) or ``"wb"`` (bytes); a ``.gz`` target is gzip-compressed.  On an exception the
    temporary file is deleted and ``path`` is left as it was.
    """
    if mode not in ("w", "wt", "wb"):
        raise ValueError(f"atomic_open: mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    fd, tmp = temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as raw:
            gz = gzip.GzipFile(fileobj=raw, mode="wb", filename="") if str(path).endswith(".gz") else None
            target: IO = gz if gz is not None else raw
            text = None if "b" in mode else io.TextIOWrapper(target, encoding=encoding, newline=newline)
            yield text if text is not None else target
            if text is not None:
                text.flush()
                text.detach()  # leave the binary file open: it is closed below, after the flush
            if gz is not None:
                gz.close()  # writes the gzip trailer; does not close ``raw`` (fileobj)
            raw.flush()
            if fsync:
                os.fsync(raw.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):  # disk full, read-only...: one line
            from metaeval.io.outputs import OutputError, os_error_line

            raise OutputError(os_error_line(exc, path)) from None
        raise


def atomic_write_text(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (unique temporary file + rename)."""
    with atomic_open(path, "w", encoding=encoding) as fh:
        fh.write(text)

