"""``report.md``: GitHub-flavoured Markdown; figures are SVG (or PNG) files in ``report_files/`` next to it."""

from __future__ import annotations

from metaeval.report.model import Block, Detail, Figure, Items, Rendered, Report, Table, Text


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def _table(t: Table) -> list[str]:
    t = t.shown()
    out = [f"*{_esc(t.caption)}*", ""] if t.caption else []
    out.append("| " + " | ".join(_esc(c) for c in t.columns) + " |")
    out.append("|" + "|".join("---:" if n else "---" for n in t.numeric) + "|")
    for i, r in enumerate(t.rows):
        cells = [_esc(x) for x in r]
        if t.links and t.links[i]:
            cells[-1] = f"[{cells[-1]}]({t.links[i]})"
        out.append("| " + " | ".join(cells) + " |")
    return out + [""]


def _block(b: Block, files_dir: str, level: int) -> list[str]:
    if isinstance(b, Table):
        return _table(b)
    if isinstance(b, Figure):
        return [f"![{_esc(b.title)}]({files_dir}/{b.file_name})", "", f"*{_esc(b.title)}.* {_esc(b.caption)}", ""]
    if isinstance(b, Items):
        return [f"- {_esc(x)}" for x in b.items] + [""]
    if isinstance(b, Detail):
        out = [f"{'#' * level} {_esc(b.summary)}", ""]
        for x in b.blocks:
            out += _block(x, files_dir, level + 1)
        return out
    if isinstance(b, Rendered):
        return [b.md, ""]
    if isinstance(b, Text):
        if b.kind == "pre":
            return ["```", b.text, "```", ""]
        if b.kind in ("pass", "fail"):
            return [f"**{_esc(b.text)}**", ""]
        return [("> " if b.kind == "note" else "") + _esc(b.text), ""]
    raise TypeError(f"unknown block {type(b).__name__}")


def render_md(rep: Report, files_dir: str = "report_files") -> str:
    lines = [f"# {_esc(rep.title)}", ""]
    toc = ["## Contents", ""] + [f"{i}. [{_esc(s.title)}](#{s.id})" for i, s in enumerate(rep.sections, 1)] + [""]
    for k, s in enumerate(rep.sections):
        lines += [f'<a id="{s.id}"></a>', "", f"## {_esc(s.title)}", ""]
        for b in s.blocks:
            lines += _block(b, files_dir, 3)
        if k == 0:
            lines += toc
    return "\n".join(lines).rstrip() + "\n"
