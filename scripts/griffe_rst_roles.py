"""A griffe extension for the API reference (mkdocs.yml's mkdocstrings options): the package's docstrings are
written for readers of the source, with Sphinx roles (``:func:`calibrate```, ``:class:`~metaeval.types.LabelSet```)
and reST's ``::`` before a literal block.  The reference renders docstrings as Markdown, where those would show
as ``:func: calibrate``; this rewrites them as code spans (``calibrate``, ``LabelSet``: a leading ``~`` keeps the
last name, as Sphinx does) and ``::`` as ``:``, in the rendered copy only (the source is not touched)."""

from __future__ import annotations

import re
from typing import Any

try:
    from griffe import Extension
except ImportError:  # only the docs build needs griffe; markdown_docstring is plain Python, tested without it
    Extension = object  # type: ignore[assignment,misc]

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|obj|exc|const|ref|doc):`(~?)([^`<]+?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"(?<=\S)::[ \t]*$", re.MULTILINE)


def markdown_docstring(text: str) -> str:
    """``text`` with Sphinx roles turned into code spans and a paragraph-ending ``::`` into ``:``."""

    def code(m: re.Match) -> str:
        target = m.group(2).strip()
        return f"`{target.rsplit('.', 1)[-1] if m.group(1) else target}`"

    return _LITERAL.sub(":", _ROLE.sub(code, text))


class RstRoles(Extension):
    """Rewrites every object's docstring with :func:`markdown_docstring` as griffe loads it."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
