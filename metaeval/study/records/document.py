"""A versioned results document: a record written as one JSON file with its ``format`` and ``schema_version``.

``RESULTS_SCHEMA`` is the version of the results schema that this metaeval writes and reads (the records of
``metaeval.study.records``; one number for the folder's ``summary.json`` and ``study/study.json``, since the study
writes both together).  A file of another version, or one written before the schema was declared (no
``schema_version``: results schema 0), is refused with ONE :class:`ResultsSchemaError` line naming the file, its
version and the command that rewrites it.  Change the version when a field is renamed, removed or changes type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, TypeVar

from metaeval.errors import FormatError
from metaeval.study.records.codec import decode, encode
from metaeval.version import __version__

#: the results schema this metaeval writes and reads (0: files written before the schema had a version)
RESULTS_SCHEMA = 1

D = TypeVar("D", bound="Document")


class ResultsSchemaError(FormatError):
    """A results file of another schema version than this metaeval reads (the CLI prints it as one line, exit 2)."""


class Document:
    """Mixin of a frozen record that is a whole file: ``FORMAT`` (the ``format`` written into it) and
    ``SCHEMA_VERSION``; :meth:`to_json` / :meth:`from_json` add and check both before the fields."""

    FORMAT: ClassVar[str]
    SCHEMA_VERSION: ClassVar[int] = RESULTS_SCHEMA

    def to_json(self) -> dict[str, Any]:
        """The file's JSON object: ``format``, ``schema_version``, then the fields."""
        return {"format": self.FORMAT, "schema_version": self.SCHEMA_VERSION, **encode(self)}

    @classmethod
    def from_json(cls: type[D], doc: Any, path: str | Path, rerun: str = "") -> D:
        """The record of a parsed file; a wrong ``format``, another ``schema_version`` or a field that does not fit
        its declaration raises one ``FormatError`` naming ``path`` (and ``rerun``, the command that rewrites it)."""
        path = str(path)
        if not isinstance(doc, dict):
            raise FormatError(path, 0, "", f"expected a JSON object ({cls.FORMAT}), got {type(doc).__name__}")
        fmt = doc.get("format")
        if fmt != cls.FORMAT:
            raise FormatError(path, 0, "format", f"expected {cls.FORMAT!r}, got {fmt!r} (not a {cls.__name__} file)")
        version = doc.get("schema_version", 0)
        if version != cls.SCHEMA_VERSION:
            when = " (from before the results schema had a version)" if version == 0 else ""
            how = f"rerun {rerun} (judging is cached)" if rerun else "rerun the sweep that wrote it (judging is cached)"
            raise ResultsSchemaError(path, 0, "", f"written with results schema {version}{when}; metaeval "
                                     f"{__version__} reads results schema {cls.SCHEMA_VERSION}; {how} to rewrite it")
        body = {k: v for k, v in doc.items() if k not in ("format", "schema_version")}
        return decode(cls, body, path)
