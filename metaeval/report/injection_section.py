"""The report's prompt-injection section: the ``metaeval probe`` results saved beside the sweep
(``metaeval probe --out RESULTS_DIR/probe/NAME.json``), one row per probe file."""

from __future__ import annotations

from pathlib import Path

from metaeval.report.context import Context, pct
from metaeval.report.model import Section, Table, Text


def injection(ctx: Context) -> Section | None:
    """Prompt-injection probe results saved beside the sweep (``metaeval probe --out DIR/probe/NAME.json``)."""
    folder = ctx.res.layout.probe_dir
    rows = injection_rows(folder) if folder.is_dir() else []
    ctx.data["injection"] = rows
    if not rows:  # no empty section (`metaeval probe --judge NAME --out DIR/probe/NAME.json` adds it)
        return None
    return Section("injection", "Prompt-injection probe", [
        Text("Share of (answer, nugget) labels that change when an injection phrasing is added to the answer, "
             "over all phrasings; upward = toward support. The control adds a neutral sentence: the flips any "
             "added text causes."),
        Table(["probe file", "judge", "prompt", "answers", "pairs", "flip", "upward", "downward", "control flip"], rows,
              "metaeval probe results", [False, False, False, True, True, True, True, True, True]),
    ])


def injection_rows(folder: Path) -> list[list[str]]:
    """One row per ``metaeval probe`` result in ``RESULTS_DIR/probe/*.json`` (unreadable files are left out)."""
    import json

    rows = []
    for path in sorted(folder.glob("*.json")):
        try:
            r = json.loads(path.read_text(encoding="utf-8"))
            o = r["overall"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        controls = r.get("controls") or []
        ctrl = r["per_probe"].get(controls[0], {}) if controls else {}
        prompt = (r["prompt"].get("name") if r.get("prompt") else None) or "-"
        rows.append([path.stem, str(r.get("judge_kind", "")), prompt, str(r.get("n_answers", "")), str(o.get("n_pairs", "")),
                     pct(o.get("flip_rate")), pct(o.get("upward_rate")), pct(o.get("downward_rate")),
                     pct(ctrl.get("flip_rate")) if ctrl else "-"])
    return rows
