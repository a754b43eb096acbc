"""Typed exceptions.  Every input error names the file, the line and the field."""

from __future__ import annotations


class MetaevalError(Exception):
    """Base class for errors metaeval reports to users (the CLI prints them without a traceback)."""


class FormatError(MetaevalError, ValueError):
    """An input file that cannot be read as the expected format.

    Attributes:
        path: the file.
        line: 1-based line number (0 when the problem concerns the whole file).
        field: the offending field, or "" when the line itself is unreadable.
    """

    def __init__(self, path: str, line: int, field: str, message: str):
        self.path = str(path)
        self.line = int(line)
        self.field = field
        self.message = message
        where = f"{self.path}:{self.line}" if self.line else self.path
        what = f" field {field!r}:" if field else ""
        super().__init__(f"{where}:{what} {message}")


class ConfigError(MetaevalError, ValueError):
    """A configuration or argument that cannot be used."""
