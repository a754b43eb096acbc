"""Plain-text rendering for the terminal: ``metaeval report --print`` (the verdict and the main tables) and
:func:`fit_table`, the aligned tables that ``metaeval sweep`` prints (fitted to the terminal's width with rich)."""

from __future__ import annotations

import textwrap

from metaeval.report.model import Detail, Items, Report, Table, Text

#: sections printed by ``--print``, in this order
MAIN_SECTIONS = ("summary", "verdict", "usage", "tau", "compare", "leaderboards", "agreement", "calibration")


def text_table(t: Table, width: int | None = None) -> str:
    """A report table for the terminal: its caption, then :func:`fit_table` (nothing clipped; long names shortened
    with an ellipsis and given in full in a legend)."""
    t = t.shown()
    rows = [[x.replace("\n", " ") for x in r] for r in t.rows]
    cols = [c.replace("\n", " ") for c in t.columns]
    body = fit_table(cols, rows, list(t.numeric), width) if rows else ""
    return "\n".join(([t.caption] if t.caption else []) + ([body] if body else []))


#: the ellipsis that marks a shortened name (its full form is in the legend under the table)
ELLIPSIS = "…"
#: a name column is never shortened below this many characters (nor below a quarter of the width)
MIN_NAME = 16
_GAP = 3  # between two columns: one space of padding on each side of a blank rule


def terminal_width(default: int = 100) -> int:
    """Columns of the terminal (``COLUMNS`` when set; ``default`` when the output is not a terminal)."""
    import shutil

    return max(40, shutil.get_terminal_size((default, 24)).columns)


def _differ_at(names: list[str]) -> int:
    """Where the names start to differ, moved back to the start of that word (after the last ``_ . - /`` of
    their common prefix): ``testserver__v1__x`` and ``testserver__v2_json__x`` -> 12 (``v1`` / ``v2_json``).  A
    column of one name (compare's ``A`` column) keeps all but its first word: ``testserver__v1__x`` -> 12."""
    import os
    import re

    if len(names) == 1:
        first = re.match(r"[^_.\-/]+[_.\-/]+", names[0])
        return first.end() if first else 0
    prefix = os.path.commonprefix(names)
    return max((prefix.rfind(c) for c in "_.-/"), default=-1) + 1


def shorten(names: list[str], width: int) -> dict[str, str]:
    """``{name: short}`` for the names longer than ``width``, unique.  The cut goes into the part every name shares
    just before the word where they differ (a lone name: into its first word), so that part stays readable
    (``testserver…v1__human_auto`` and ``tests…v2_json__human_auto``, not ``testserver__…__human_auto``); when that
    leaves no head, head and tail are joined by an ellipsis in the middle."""
    out: dict[str, str] = {}
    taken: set[str] = set(n for n in names if len(n) <= width)
    distinct = list(dict.fromkeys(names))
    differ = _differ_at(distinct) if distinct else 0
    for n in distinct:
        if len(n) <= width:
            continue
        cut = differ - (len(n) - (width - 1))  # the removed span ends where the names start to differ
        s = n[:cut] + ELLIPSIS + n[differ:] if cut >= 1 else ""
        if not s or s in taken:
            head = (width - 1 + 1) // 2
            for h in range(head, width - 1):  # move the cut until the short form is unique
                s = n[:h] + ELLIPSIS + n[len(n) - (width - 1 - h):]
                if s not in taken:
                    break
        out[n] = s
        taken.add(s)
    return out


def _wrap_head(head: str, width: int) -> str:
    """The header broken into lines at spaces, each at most ``width`` (a longer word keeps its line)."""
    import textwrap

    return "\n".join(textwrap.wrap(head, max(width, 1), break_long_words=False)) or head


def _longest_word(s: str) -> int:
    return max((len(w) for w in s.split()), default=0)


def fit_table(columns: list[str], rows: list[list[str]], numeric: list[bool], width: int | None = None) -> str:
    """An aligned plain-text table (rich) fitted to ``width`` terminal columns, the same columns as the Markdown.

    Numbers are never cut: a numeric column is as wide as its widest cell (its header wraps at spaces).  Text
    columns wrap at spaces, never inside a word.  The first column names the rows: when the table is still too wide
    its names are shortened with an ellipsis (:func:`shorten`) and a legend under the table gives each in full.  If the
    columns do not fit even then, they are printed in several blocks (each repeating the name column), as pandas
    does.  A row whose cells after the second are all empty (``skipped: ...``) is printed as a line under the table.
    """
    from io import StringIO

    from rich import box
    from rich.console import Console
    from rich.table import Table as RichTable

    width = width or terminal_width()
    notes = [r for r in rows if len(r) > 2 and not any(x.strip() for x in r[2:])]
    rows = [r for r in rows if r not in notes]
    n = len(columns)
    names = [r[0] for r in rows]
    # the narrowest each column can be: numbers whole, words whole; headers may wrap at spaces
    need = [max([len(r[i]) if numeric[i] else _longest_word(r[i]) for r in rows] + [_longest_word(columns[i])])
            for i in range(n)]
    natural = [max([len(r[i]) for r in rows] + [len(columns[i])]) for i in range(n)]
    full_name = natural[0]

    def total(ws: list[int]) -> int:
        return sum(ws) + _GAP * (len(ws) - 1)

    name_w = full_name
    if total([full_name] + need[1:]) > width:  # too wide: names up to a quarter of the width, then blocks
        name_w = min(full_name, max(MIN_NAME, width - total(need[1:]) - _GAP, width // 4))
    short = shorten(names, name_w) if name_w < full_name else {}
    # blocks of columns that fit beside the name column
    blocks: list[list[int]] = [[]]
    for i in range(1, n):
        if blocks[-1] and total([name_w] + [need[j] for j in blocks[-1]] + [need[i]]) > width:
            blocks.append([])
        blocks[-1].append(i)
    out = StringIO()
    console = Console(file=out, width=width, color_system=None, force_terminal=False, legacy_windows=False,
                      soft_wrap=False, emoji=False, markup=False, highlight=False)
    for k, block in enumerate(blocks):
        if k:
            console.print()
        cols = [0] + block
        spare = width - total([name_w] + [need[j] for j in block])
        widths = {0: name_w}
        for j in block:  # give the text columns room up to their natural width, numbers exactly theirs
            grow = min(natural[j] - need[j], max(spare, 0))
            widths[j] = need[j] + grow
            spare -= grow
        t = RichTable(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, show_edge=False, expand=False)
        for j in cols:
            t.add_column(_wrap_head(columns[j], widths[j]), justify="right" if numeric[j] else "left",
                         width=widths[j], no_wrap=numeric[j] or j == 0, overflow="fold")
        for r in rows:
            t.add_row(*[short.get(r[0], r[0]) if j == 0 else r[j] for j in cols])
        console.print(t)
    text = out.getvalue().rstrip("\n").splitlines()
    text = [ln.rstrip() for ln in text]
    for r in notes:
        text.append(f"{r[0]}: {' '.join(x for x in r[1:] if x.strip())}")
    if short:
        text.append(f"names shortened ({ELLIPSIS}):")
        text += [f"  {s} = {full}" for full, s in short.items()]
    return "\n".join(text)


def render_text(rep: Report, sections: tuple[str, ...] = MAIN_SECTIONS, width: int | None = None) -> str:
    """The report as plain text ``width`` columns wide (default: the terminal's, 100 when not a terminal)."""
    width = width or terminal_width()
    out = [rep.title, "=" * len(rep.title), ""]
    by_id = {s.id: s for s in rep.sections}
    if "summary" not in sections or "summary" not in by_id:  # the summary section carries the verdict line itself
        v = rep.verdict
        out[-1:] = [f"VERDICT: {'PASS' if v['passed'] else 'FAIL'} ({v['n_passed']} pass, {v['n_failed']} fail)", ""]
    for sid in sections:
        s = by_id.get(sid)
        if s is None:
            continue
        out += [s.title, "-" * len(s.title)]

        def emit(blocks, depth=0):
            for b in blocks:
                if isinstance(b, Table):
                    out.append(text_table(b, width))
                    out.append("")
                elif isinstance(b, Items):
                    out.extend(textwrap.fill(x, width, initial_indent="- ", subsequent_indent="  ", break_long_words=False,
                                              break_on_hyphens=False) for x in b.items)
                    out.append("")
                elif isinstance(b, Text) and b.kind != "pre":
                    out.append(textwrap.fill(b.text, width, break_long_words=False, break_on_hyphens=False))
                    out.append("")
                elif isinstance(b, Detail):  # closed ones too: the terminal has no toggles
                    out.append(f"[{b.summary}]")
                    emit(b.blocks, depth + 1)

        emit(s.blocks)
    return "\n".join(out).rstrip() + "\n"
