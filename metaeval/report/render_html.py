"""``report.html``: one self-contained page - inline CSS, the report's SVG figures inline (ids prefixed per figure;
PNG figures as ``data:image/png;base64`` URIs), no script and no external URL, so it opens offline.  All text from
results (cell names, nuggets, answers, config) goes through ``html.escape``; SVG text is matplotlib's (escaped)."""

from __future__ import annotations

import base64
from html import escape

from metaeval.report.model import Block, Detail, Figure, Items, Rendered, Report, Table, Text
from metaeval.report.plots import inline_svg

CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;margin:0;color:#222;background:#fff;line-height:1.45}
main{max-width:1180px;margin:0 auto;padding:1.5em 2em 4em}
h1{font-size:1.7em;margin:.2em 0 .6em;border-bottom:3px solid #1f77b4;padding-bottom:.3em}
h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em;color:#114a7a}
nav{background:#f4f7fb;border:1px solid #d8e2ee;border-radius:6px;padding:.6em 1.2em;margin-bottom:1.2em}
nav ol{margin:.3em 0;padding-left:1.4em;columns:2}
nav a{color:#114a7a;text-decoration:none}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.86em;width:auto;max-width:100%}
caption{caption-side:top;text-align:left;color:#555;font-size:.95em;padding-bottom:.3em}
th,td{border:1px solid #d5d5d5;padding:.25em .55em;vertical-align:top}
th{background:#eef2f7;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr:nth-child(even) td{background:#fafbfc}
figure{margin:1em 0 1.6em}
figure img,figure svg{max-width:100%;height:auto;display:block}
figure{overflow-x:auto}
div.table{overflow-x:auto;max-width:100%}
ul.summary{font-size:1.02em;padding-left:1.3em}ul.summary li{margin:.35em 0}
td{overflow-wrap:break-word}
figcaption{color:#555;font-size:.88em;margin-top:.3em}
details{margin:.5em 0 .8em;border-left:3px solid #d8e2ee;padding-left:.8em}
summary{cursor:pointer;font-weight:600;color:#333}
pre{background:#f6f6f6;border:1px solid #e3e3e3;padding:.8em;overflow-x:auto;font-size:.8em;max-height:40em}
p.note{color:#7a4a00;background:#fff7e6;border-left:3px solid #f0a500;padding:.3em .7em}
.pass{background:#2ca02c;color:#fff;padding:0 .45em;border-radius:3px;font-weight:700}
.fail{background:#d62728;color:#fff;padding:0 .45em;border-radius:3px;font-weight:700}
.skip{background:#999;color:#fff;padding:0 .45em;border-radius:3px}
.banner{font-size:1.1em;padding:.5em .9em;border-radius:6px;margin:.5em 0 1em}
.banner.ok{background:#e8f6e8;border:1px solid #2ca02c}.banner.bad{background:#fdeaea;border:1px solid #d62728}
"""

_BADGE = {"PASS": "pass", "FAIL": "fail", "SKIPPED": "skip"}


def _cell(text: str, numeric: bool, href: str = "") -> str:
    cls = ' class="num"' if numeric else ""
    if text in _BADGE:
        return f'<td><span class="{_BADGE[text]}">{escape(text)}</span></td>'
    if href:
        return f'<td{cls}><a href="{escape(href, quote=True)}">{escape(text)}</a></td>'
    return f"<td{cls}>{escape(text)}</td>"


def _table(t: Table) -> str:
    t = t.shown()
    head = "".join(f"<th>{escape(c)}</th>" for c in t.columns)
    last = len(t.columns) - 1
    body = "".join("<tr>" + "".join(_cell(x, n, t.links[i] if t.links and j == last else "")
                                     for j, (x, n) in enumerate(zip(r, t.numeric))) + "</tr>"
                   for i, r in enumerate(t.rows))
    cap = f"<caption>{escape(t.caption)}</caption>" if t.caption else ""
    # a table wider than the page scrolls inside its own box (the page never scrolls sideways, whatever the fonts)
    return f'<div class="table"><table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _block(b: Block) -> str:
    if isinstance(b, Table):
        return _table(b)
    if isinstance(b, Figure):
        if b.svg:
            img = inline_svg(b.svg, f"fig-{b.name}", b.title)
        else:
            data = base64.b64encode(b.png).decode("ascii")
            img = f'<img alt="{escape(b.title)}" src="data:image/png;base64,{data}">'
        return (f'<figure id="fig-{escape(b.name)}">{img}'
                f"<figcaption><b>{escape(b.title)}.</b> {escape(b.caption)}</figcaption></figure>")
    if isinstance(b, Items):
        return '<ul class="summary">' + "".join(f"<li>{escape(x)}</li>" for x in b.items) + "</ul>"
    if isinstance(b, Detail):
        inner = "".join(_block(x) for x in b.blocks)
        return f"<details{' open' if b.open else ''}><summary>{escape(b.summary)}</summary>{inner}</details>"
    if isinstance(b, Rendered):
        return b.html
    if isinstance(b, Text):
        if b.kind == "pre":
            return f"<pre>{escape(b.text)}</pre>"
        if b.kind in ("pass", "fail"):
            return f'<p class="banner {"ok" if b.kind == "pass" else "bad"}">{escape(b.text)}</p>'
        return f'<p{" class=note" if b.kind == "note" else ""}>{escape(b.text)}</p>'
    raise TypeError(f"unknown block {type(b).__name__}")


def render_html(rep: Report) -> str:
    """The page: title, then the sections in order (the first is the plain-language summary with the verdict and
    its reasons), a contents list after the summary."""
    toc = "".join(f'<li><a href="#{escape(s.id)}">{escape(s.title)}</a></li>' for s in rep.sections)
    parts = []
    for i, s in enumerate(rep.sections):
        parts.append(f'<section id="{escape(s.id)}"><h2>{escape(s.title)}</h2>{"".join(_block(b) for b in s.blocks)}</section>')
        if i == 0:
            parts.append(f"<nav><b>Contents</b><ol>{toc}</ol></nav>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(rep.title)}</title><style>{CSS}</style></head><body><main>"
            f"<h1>{escape(rep.title)}</h1>{''.join(parts)}"
            "<p class=\"note\">Generated by metaeval report. Self-contained: no external resources.</p></main></body></html>\n")
