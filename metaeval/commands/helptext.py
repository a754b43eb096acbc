"""A command's ``--help`` from its module docstring: the text is written once, as the module's documentation.

:func:`command_parser` adds the subparser ``name`` whose description is the docstring made plain for a terminal:
RST literals and roles lose their markup (````x```` and ``:func:`x``` print as ``x``), prose paragraphs are
re-wrapped to the terminal (at most 100 columns), indented blocks (usage lines, examples) are kept as written.
"""

from __future__ import annotations

import inspect
import re
import shutil
import textwrap
from typing import Any

_LITERAL = re.compile(r"``(.+?)``", re.S)
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def plain(text: str) -> str:
    """``text`` without RST markup: ````x```` -> ``x``, ``:func:`x``` -> ``x``; ``::`` ending a line -> ``:``."""
    text = _ROLE.sub(r"\1", _LITERAL.sub(r"\1", text))
    return re.sub(r"::$", ":", text, flags=re.M)


def description(doc: str | None, width: int | None = None) -> str:
    """The docstring ``doc`` as ``--help`` text: plain, prose re-wrapped to ``width``, indented blocks kept."""
    width = width or min(100, shutil.get_terminal_size((100, 24)).columns - 2)
    out = []
    for para in inspect.cleandoc(plain(doc or "")).split("\n\n"):
        if para.startswith(" "):
            out.append(para)
        else:
            out.append(textwrap.fill(" ".join(para.split()), width, break_on_hyphens=False))
    return "\n\n".join(out)


def command_parser(sub: Any, name: str, doc: str | None, **kwargs: Any) -> Any:
    """``sub.add_parser(name, description=<doc made plain>, **kwargs)`` (``help=`` is the one line in the
    ``metaeval --help`` list)."""
    import argparse

    return sub.add_parser(name, description=description(doc), formatter_class=argparse.RawDescriptionHelpFormatter,
                          **kwargs)
