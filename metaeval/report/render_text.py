"""Plain-text rendering for the terminal (``metaeval report --print``): the verdict and the main tables."""

from __future__ import annotations

import textwrap

from metaeval.report.model import Detail, Items, Report, Table, Text

#: sections printed by ``--print``, in this order
MAIN_SECTIONS = ("summary", "verdict", "usage", "tau", "compare", "leaderboards", "agreement", "calibration")


def text_table(t: Table, max_width: int = 60) -> str:
    def clip(s: str) -> str:
        s = s.replace("\n", " ")
        return s if len(s) <= max_width else s[: max_width - 3] + "..."

    rows = [[clip(x) for x in r] for r in t.rows]
    cols = [clip(c) for c in t.columns]
    w = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w[i]) if t.numeric[i] else c.ljust(w[i]) for i, c in enumerate(cells)).rstrip()

    out = [t.caption] if t.caption else []
    out += [line(cols), "  ".join("-" * x for x in w)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def render_text(rep: Report, sections: tuple[str, ...] = MAIN_SECTIONS, width: int = 110) -> str:
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
                    out.append(text_table(b))
                    out.append("")
                elif isinstance(b, Items):
                    out.extend(textwrap.fill(x, width, initial_indent="- ", subsequent_indent="  ") for x in b.items)
                    out.append("")
                elif isinstance(b, Text) and b.kind != "pre":
                    out.append(textwrap.fill(b.text, width))
                    out.append("")
                elif isinstance(b, Detail):  # closed ones too: the terminal has no toggles
                    out.append(f"[{b.summary}]")
                    emit(b.blocks, depth + 1)

        emit(s.blocks)
    return "\n".join(out).rstrip() + "\n"
