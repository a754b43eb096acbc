"""The one place that vets output paths and turns OS errors on writing into one-line messages.

Every command that writes calls :func:`check_output` on each output path *before* any work or any write, so a
hostile ``--out`` is refused with one line (exit 2) and nothing is half-written:

* ``''`` (or only spaces) - an empty path would silently mean the working directory;
* a path over the system's limits (``PATH_MAX`` bytes in all, ``NAME_MAX`` bytes per component: ENAMETOOLONG);
* a path inside ``/proc``, ``/sys`` or ``/dev`` (kernel file systems: writes there fail or do harm);
* a folder where a file is meant, a file where a folder is meant;
* a path under a file (``report.html/x``: some component of it is a file);
* a folder that cannot be written (read-only mount, or no write permission for this user).

Errors that only the write itself can reveal (disk full, a mount turned read-only mid-run, a name refused by the
file system) are turned into :class:`OutputError` by :func:`output_errors` / :func:`os_error_line`, naming the
path and the cause in words.  Writes themselves are atomic (``metaeval.io.atomic``), so a failed write leaves
the old file (or none), never a half-written one.

Layering: core + ``io`` only (``metaeval.errors``).
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import Iterator, Literal

from metaeval.errors import MetaevalError

#: kernel file systems nothing should be written into
KERNEL_ROOTS = ("/proc", "/sys", "/dev")

#: what each errno means to someone writing an output file (the rest keep the OS's own words)
_CAUSES = {
    errno.ENOSPC: "no space left on the device (disk full)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENAMETOOLONG: "file name too long",
    errno.ENOTDIR: "a component of the path is a file, not a folder",
    errno.EISDIR: "is a folder, not a file",
    errno.EEXIST: "a file of that name is in the way",
    errno.ENOENT: "no such file or folder",
    errno.EIO: "input/output error (failing disk?)",
    errno.EFBIG: "file too large for the file system",
}


class OutputError(MetaevalError):
    """An output path that cannot be written (checked up front, or an OS error while writing)."""


def _shown(path: str | os.PathLike, limit: int = 120) -> str:
    s = os.fspath(path)
    return s if len(s) <= limit else f"{s[:limit - 30]}...{s[-25:]} ({len(s)} characters)"


def os_error_line(exc: OSError, path: str | os.PathLike | None = None) -> str:
    """``exc`` as one line naming the path and the cause in words (``path`` when the exception names none)."""
    # the output the caller named, not the temporary file beside it; else what the OS names
    where = path if path not in (None, "") else exc.filename
    cause = _CAUSES.get(exc.errno or -1) or (exc.strerror or str(exc)).strip() or type(exc).__name__
    return f"{_shown(where)}: {cause}" if where not in (None, "") else f"cannot write: {cause}"


@contextlib.contextmanager
def output_errors(path: str | os.PathLike | None = None) -> Iterator[None]:
    """Turn an ``OSError`` raised inside the block into an :class:`OutputError` with one line (see module doc)."""
    try:
        yield
    except OutputError:
        raise
    except BrokenPipeError:  # a reader that went away is not a write error (the CLI ends quietly)
        raise
    except OSError as exc:
        raise OutputError(os_error_line(exc, path)) from None


def _limits(base: str) -> tuple[int, int]:
    try:
        return os.pathconf(base, "PC_PATH_MAX"), os.pathconf(base, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 4096, 255


def _exists(p: Path) -> bool:
    try:
        return p.exists()
    except OSError:  # ENAMETOOLONG and the like: it cannot exist
        return False


def _existing_ancestor(p: Path) -> Path:
    q = p
    while not _exists(q) and q != q.parent:  # False for a path under a file (ENOTDIR) too: go up
        q = q.parent
    return q


def check_output(path: str | os.PathLike | None, *, kind: Literal["file", "dir"] = "file",
                 option: str = "--out") -> Path:
    """``path`` as a ``Path`` when it can be written as a ``kind``; otherwise :class:`OutputError`, one line.

    Creates nothing.  ``option`` names the argument in the message (``--out``, ``--transcripts``, ``cache.path``).
    """
    raw = "" if path is None else os.fspath(path)
    if not raw.strip():
        return _fail(option, raw, "an empty path (it would mean the working folder); name a "
                     + ("file" if kind == "file" else "folder"))
    if "\x00" in raw:
        return _fail(option, raw, "a path cannot contain a NUL character")
    p = Path(raw)
    absolute = Path(os.path.abspath(raw))
    path_max, name_max = _limits(str(_existing_ancestor(absolute)))
    if len(os.fsencode(str(absolute))) >= path_max:
        return _fail(option, raw, f"the path is {len(os.fsencode(str(absolute)))} bytes long, over the system's "
                     f"limit of {path_max - 1}")
    for part in absolute.parts:
        if len(os.fsencode(part)) > name_max:
            return _fail(option, raw, f"a name in the path is {len(os.fsencode(part))} bytes long, over the file "
                         f"system's limit of {name_max} ({_shown(part, 40)})")
    real = os.path.realpath(absolute)
    for root in KERNEL_ROOTS:
        if real == root or real.startswith(root + "/"):
            return _fail(option, raw, f"inside {root}, a kernel file system; choose a folder of your own")
    if kind == "file" and p.is_dir():
        return _fail(option, raw, "is a folder; name a file")
    if kind == "dir" and p.exists() and not p.is_dir():
        return _fail(option, raw, "is a file; name a folder")
    # the folder the output goes into (a file) or is made under (a folder): its nearest existing ancestor
    target = _existing_ancestor(absolute.parent if kind == "file" else absolute)
    if not target.is_dir():
        return _fail(option, raw, f"{_shown(target, 80)} is a file, so nothing can be written under it")
    if _read_only(target):
        return _fail(option, raw, f"{_shown(target, 80)} is on a read-only file system")
    if not os.access(target, os.W_OK | os.X_OK):
        return _fail(option, raw, f"{_shown(target, 80)} is not writable (permission denied)")
    return p


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _fail(option: str, raw: str, why: str) -> Path:
    shown = repr(raw) if not raw.strip() else _shown(raw)
    raise OutputError(f"{option} {shown}: {why}")


def file_mode() -> int:
    """The mode a newly created file gets under this process' umask (``0o666 & ~umask``: 0644 under 022).

    ``tempfile.mkstemp`` creates 0600 files whatever the umask; the atomic writers set this mode on their
    temporary file before it is renamed into place, so outputs are as readable as any file the user creates."""
    return 0o666 & ~_umask()


def _umask() -> int:
    try:  # Linux: read it without changing it (os.umask is process-wide and not thread-safe to flip)
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether paths ``a`` and ``b`` name one file: the same inode when both exist (hard links, symbolic links,
    ``./x`` and ``x``), else the same resolved path."""
    try:
        sa, sb = os.stat(a), os.stat(b)
        return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
    except OSError:
        try:
            return Path(a).resolve() == Path(b).resolve()
        except (OSError, RuntimeError):
            return os.path.abspath(a) == os.path.abspath(b)


def check_not_input(path: str | os.PathLike | None, inputs: "Iterator[str | os.PathLike] | list", *,
                    option: str = "--out", input_option: str = "an input") -> None:
    """One-line :class:`OutputError` when the output ``path`` is one of ``inputs`` (the command would replace
    what it reads).  Nothing is written before this check."""
    if path is None or not os.fspath(path).strip():
        return
    for src in inputs:
        if src is not None and os.fspath(src).strip() and same_file(path, src):
            raise OutputError(f"{option} {_shown(path)} is {input_option} of this command ({_shown(src)}); "
                              "writing it would replace the input: name another output file")
