"""Fetch a registered dataset into the cache, verifying checksums.

``fetch(name, source=None, force=False)`` puts the dataset's files into ``cache_dir()/datasets/NAME/``:

* ``source=None``: each file is downloaded from its registered ``url`` with ``pooch`` (which checks the recorded
  sha256/md5 while it downloads); a file with no known URL is an error that says to use ``--from``.
* ``source`` a local folder: the dataset's files are copied from it by name.
* ``source`` a local file: copied as the file of that name, or as the dataset's only file.
* ``source`` an ``http(s)://`` / ``file://`` URL: the file itself for a one-file dataset, else a base URL to which
  each file name is appended.

Every file is first written to a temporary name inside the cache folder (a local copy is checksummed while it is
copied; a download goes through ``pooch.retrieve`` into a temporary folder next to it) and both recorded digests are
checked before it is renamed into place; on a
mismatch the temporary file is removed, a folder created by this call is removed again, and ``ChecksumError``
names the expected and actual digests - nothing is left in the cache.  A file whose checksum is not recorded in the
registry is kept but reported as *unverified*, with its computed md5/sha256 so it can be pinned.  Fetching a file
that is already present and verifies is a no-op (unless ``force``).  A small ``fetch.json`` manifest records where
each file came from and its digests.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.data.registry import DataFile, DatasetEntry, get_entry
from metaeval.errors import ConfigError, MetaevalError
from metaeval.paths import cache_dir

log = logging.getLogger(__name__)

MANIFEST = "fetch.json"
DEMO_DIR = Path(__file__).resolve().parent / "demo"
_CHUNK = 1 << 20


class ChecksumError(MetaevalError):
    """A fetched file's digest differs from the registry's."""


class FetchError(MetaevalError):
    """A file could not be obtained (missing source, no URL, network failure)."""


@dataclass
class FileStatus:
    filename: str
    path: Path
    action: str  # "fetched", "present" or "missing"
    verified: bool
    md5: str
    sha256: str
    size: int
    origin: str = ""

    def describe(self) -> str:
        if self.action == "missing":
            return f"{self.filename}: missing"
        if self.action == "corrupt":
            return f"{self.filename}: CHECKSUM MISMATCH in the cache (md5={self.md5}); fetch again with --force"
        if self.verified:
            check = "checksum OK"
        else:
            check = f"CHECKSUM NOT RECORDED - not verified; computed md5={self.md5} sha256={self.sha256} (pin these in the registry)"
        return f"{self.filename}: {self.action} ({_human(self.size)}), {check}"


@dataclass
class FetchReport:
    name: str
    directory: Path
    files: list[FileStatus] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every file is there and none fails its checksum."""
        return all(f.action in ("present", "fetched") for f in self.files)


def dataset_dir(name: str) -> Path:
    """Where dataset ``name`` lives: the package's demo folder for bundled data, else the cache folder."""
    entry = get_entry(name)
    if entry.bundled:
        return DEMO_DIR
    d = cache_dir() / "datasets" / entry.name
    if not d.exists():  # a copy fetched under a former name (an alias) is still used
        from metaeval.data.registry import ALIASES

        for old in (a for a, target in ALIASES.items() if target == entry.name):
            if (cache_dir() / "datasets" / old).is_dir():
                return cache_dir() / "datasets" / old
    return d


def file_digests(path: str | os.PathLike) -> tuple[str, str, int]:
    """``(md5, sha256, size)`` of a file, read in 1 MiB chunks."""
    md5, sha = hashlib.md5(), hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            md5.update(chunk)
            sha.update(chunk)
            size += len(chunk)
    return md5.hexdigest(), sha.hexdigest(), size


def check_digests(spec: DataFile, md5: str, sha256: str, where: str) -> bool:
    """True when verified, False when the registry records no checksum; ``ChecksumError`` on a mismatch."""
    bad = []
    if spec.md5 and spec.md5.lower() != md5:
        bad.append(f"md5 expected {spec.md5}, actual {md5}")
    if spec.sha256 and spec.sha256.lower() != sha256:
        bad.append(f"sha256 expected {spec.sha256}, actual {sha256}")
    if bad:
        raise ChecksumError(f"checksum mismatch for {spec.filename} from {where}: {'; '.join(bad)}. Nothing was kept in the cache.")
    return spec.has_checksum


def status(name: str) -> FetchReport:
    """What is in the cache for ``name`` now (present files are re-hashed and checked; nothing is changed)."""
    entry = get_entry(name)
    directory = dataset_dir(name)
    report = FetchReport(entry.name, directory)
    manifest = {} if entry.bundled else _read_manifest(directory)
    for spec in entry.files:
        path = directory / spec.filename
        if path.is_file():
            report.files.append(_present(spec, path, manifest))
        else:
            report.files.append(FileStatus(spec.filename, path, "missing", False, "", "", 0))
    return report


def fetch(name: str, source: str | os.PathLike | None = None, force: bool = False) -> FetchReport:
    """Fetch dataset ``name`` into the cache (see the module docstring); returns what was done per file."""
    entry = get_entry(name)
    if entry.bundled:
        raise ConfigError(f"dataset {name!r} is bundled with metaeval (at {DEMO_DIR}); there is nothing to fetch")
    directory = dataset_dir(name)
    plan = _plan(entry, None if source is None else str(source))
    created = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    report = FetchReport(entry.name, directory)
    manifest = _read_manifest(directory)
    new_files: list[Path] = []
    try:
        for spec in entry.files:
            origin = plan.get(spec.filename)
            dest = directory / spec.filename
            current = _present(spec, dest, manifest) if dest.is_file() else None
            if origin is None:
                report.files.append(current or FileStatus(spec.filename, dest, "missing", False, "", "", 0))
                continue
            if current is not None and current.action == "present" and not force:
                report.files.append(current)
                continue
            existed = dest.is_file()
            st = _get_one(spec, origin, dest, entry.name)
            if not existed:
                new_files.append(dest)
            manifest[spec.filename] = {"origin": origin, "md5": st.md5, "sha256": st.sha256, "size": st.size,
                                       "verified": st.verified, "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            report.files.append(st)
    except BaseException:
        # all or nothing: files this call added are removed again, and so is a folder it created
        for p in new_files:
            p.unlink(missing_ok=True)
        if created and directory.exists() and not any(directory.iterdir()):
            directory.rmdir()
        raise
    _write_manifest(directory, manifest)
    for st in report.files:
        if st.action == "fetched" and not st.verified:
            log.warning("%s: checksum not recorded in the registry; NOT verified. Computed md5=%s sha256=%s", st.filename, st.md5, st.sha256)
    return report


# ---------------------------------------------------------------------------------------------------- internals
def _is_url(s: str) -> bool:
    return s.startswith(("http://", "https://", "file://", "ftp://"))


def _plan(entry: DatasetEntry, source: str | None) -> dict[str, str]:
    """filename -> origin (a local path or a URL) for every file this call should obtain."""
    names = [f.filename for f in entry.files]
    if source is None:
        missing = [f.filename for f in entry.files if not f.url]
        if missing:
            raise FetchError(
                f"no public download URL is recorded for {', '.join(missing)} of dataset {entry.name!r}; "
                f"fetch it from a local copy: metaeval data fetch {entry.name} --from PATH (a file or a folder holding it)"
            )
        return {f.filename: f.url for f in entry.files if f.url}
    if _is_url(source):
        if len(names) == 1:
            return {names[0]: source}
        base = source if source.endswith("/") else source + "/"
        return {n: base + n for n in names}
    p = Path(source).expanduser()
    if p.is_dir():
        found = {n: str(p / n) for n in names if (p / n).is_file()}
        if not found:
            raise FetchError(f"{p} holds none of the files of dataset {entry.name!r} ({', '.join(names)})")
        return found
    if p.is_file():
        if p.name in names:
            return {p.name: str(p)}
        if len(names) == 1:
            return {names[0]: str(p)}
        raise FetchError(f"{p.name} is not one of the files of dataset {entry.name!r} ({', '.join(names)}); pass the folder holding them")
    raise FetchError(f"--from {source}: no such file or folder")


def _present(spec: DataFile, dest: Path, manifest: dict) -> FileStatus:
    """Status of a cached file: ``present`` (verified or unrecorded) or ``corrupt`` (digest mismatch)."""
    md5, sha, size = file_digests(dest)
    origin = (manifest.get(spec.filename) or {}).get("origin", "")
    try:
        ok = check_digests(spec, md5, sha, str(dest))
    except ChecksumError:
        return FileStatus(spec.filename, dest, "corrupt", False, md5, sha, size, origin)
    return FileStatus(spec.filename, dest, "present", ok, md5, sha, size, origin)


def _get_one(spec: DataFile, origin: str, dest: Path, name: str) -> FileStatus:
    if _is_url(origin) and not origin.startswith("file://"):
        return _download(spec, origin, dest, name)
    if origin.startswith("file://"):
        from urllib.parse import unquote, urlparse

        origin = unquote(urlparse(origin).path)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.part")  # unique per process: concurrent fetches do not collide
    md5, sha = hashlib.md5(), hashlib.sha256()
    size = 0
    try:
        try:
            src = open(origin, "rb")
        except OSError as exc:
            raise FetchError(f"cannot read {origin}: {exc.strerror}") from None
        with src, open(tmp, "wb") as out:
            for chunk in iter(lambda: src.read(_CHUNK), b""):
                md5.update(chunk)
                sha.update(chunk)
                size += len(chunk)
                out.write(chunk)
        md5_hex, sha_hex = md5.hexdigest(), sha.hexdigest()
        ok = check_digests(spec, md5_hex, sha_hex, origin)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
    return FileStatus(spec.filename, dest, "fetched", ok, md5_hex, sha_hex, size, origin)


def _download(spec: DataFile, url: str, dest: Path, name: str) -> FileStatus:
    """Download with ``pooch.retrieve`` into a temporary folder beside ``dest`` (pooch checks one recorded digest
    while downloading; both are checked again here), then rename into place."""
    import pooch
    import requests

    pooch.get_logger().setLevel(logging.WARNING)  # no "Downloading data from ..." lines of its own
    known = f"sha256:{spec.sha256}" if spec.sha256 else (f"md5:{spec.md5}" if spec.md5 else None)
    timeout = float(os.environ.get("METAEVAL_FETCH_TIMEOUT", "60"))
    downloader = pooch.HTTPDownloader(progressbar=False, timeout=timeout, headers={"User-Agent": "metaeval-data-fetch"})
    tmpdir = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        try:
            got = Path(pooch.retrieve(url, known_hash=known, fname=dest.name, path=tmpdir, downloader=downloader))
        except requests.HTTPError as exc:
            code = exc.response.status_code if exc.response is not None else "?"
            reason = exc.response.reason if exc.response is not None else ""
            raise FetchError(f"download of {url} failed: HTTP {code} {reason}") from None
        except requests.RequestException as exc:
            raise FetchError(
                f"could not download {url} ({type(exc).__name__}). If this machine is offline, copy the file here "
                f"another way and use: metaeval data fetch {name} --from PATH"
            ) from None
        except ValueError as exc:  # pooch: the downloaded file's hash differs from known_hash (file removed)
            raise ChecksumError(f"checksum mismatch for {spec.filename} from {url}: {exc}. Nothing was kept in the cache.") from None
        md5_hex, sha_hex, size = file_digests(got)
        ok = check_digests(spec, md5_hex, sha_hex, url)
        os.replace(got, dest)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return FileStatus(spec.filename, dest, "fetched", ok, md5_hex, sha_hex, size, url)


def _read_manifest(directory: Path) -> dict:
    p = directory / MANIFEST
    if p.is_file():
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            log.warning("%s unreadable; rewriting it", p)
    return {}


def _write_manifest(directory: Path, manifest: dict) -> None:
    if not manifest:
        return
    from metaeval.io.atomic import atomic_write_text

    atomic_write_text(directory / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def remove(name: str) -> bool:
    """Delete a fetched dataset from the cache; True if something was removed."""
    entry = get_entry(name)
    if entry.bundled:
        raise ConfigError(f"dataset {name!r} is bundled and cannot be removed")
    d = dataset_dir(name)
    if d.exists():
        shutil.rmtree(d)
        return True
    return False
