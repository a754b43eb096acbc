"""The report's assessor-plan section, rendered from ``plan.json`` (``metaeval.study.assessor_plan.plan_study``).

Rendering only: no data loading, fitting or resampling.  ``render_markdown(plan)`` / ``render_html(plan)``
return the section; ``write_plot(plan, path)`` draws the width-vs-topics curves (SVG, or PNG at 200 dpi).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metaeval.io.latex import latex_text

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.report.context import Context
    from metaeval.report.model import Section, Table
    from metaeval.report.render_latex import Names


def plan_table(plan: dict[str, Any], metric: str | None = None, names: "Names | None" = None) -> "Table":
    """The precision table for ``metric`` (default: the plan's primary metric): per number of human-labelled topics
    the assessor hours, the half-widths of the PPI-calibrated run mean (analytic, resampled, plug-in), the plug-in
    interval's coverage, tau and the swap rate; the paper (``plan.tex``) shows topics, hours, the two half-widths and
    the coverage."""
    from metaeval.report.model import Num, Paper, Table

    metric = metric or plan["metric"]
    c = plan["curves"][metric]
    g = f"{plan['target_half_width']:g}" if f"{plan['target_half_width']:g}" in c["rows"][0]["swap"] else f"{c['gaps'][0]:g}"
    head = ["labelled topics", "assessor hours", "half-width analytic", "half-width resampled", "plug-in half-width",
            "plug-in coverage", "tau (mean)", f"tau {plan['level']:.0%} range", f"swap rate, gap >= {g} (resampled / analytic)"]
    rows = []
    for r in c["rows"]:
        sw = r["swap"][g]
        rows.append([str(r["n"]), f"{r['hours']:.0f}", Num(r["analytic_half"]["median"]),
                     Num(r["empirical_half"]["median"]), Num(r["plugin_half"]["median"]),
                     Num(r["plugin_coverage"]["median"], 2), Num(r["tau_mean"]),
                     f"{Num(r['tau_lo'])}-{Num(r['tau_hi'])}", f"{Num(sw['empirical'])} / {Num(sw['analytic'])}"])
    paper = None
    if names is not None:
        from metaeval.measures import find_measure
        from metaeval.report.render_latex import CITE_PPI

        pilot, level = plan["pilot"], float(plan["level"])
        known = find_measure(str(metric))
        tex = known.latex if known is not None else latex_text(plan.get("metric_name") or metric)
        paper = Paper("plan", f"Human-labelled topics needed: {100 * level:g}\\% half-width of the PPI "
                              f"\\citep{{{CITE_PPI}}} {tex} run mean over {pilot['total_topics']} topics.",
                      f"Assessor plan (metaeval plan): for each number of human-labelled topics, the assessor hours, "
                      f"the {100 * level:g}% half-width of the PPI-calibrated run mean of "
                      f"{plan.get('metric_name') or metric} over the track's {pilot['total_topics']} topics (median "
                      f"over runs) analytic and by topic resampling ({c.get('reps', '?')} worlds, seed "
                      f"{plan.get('seed')}), and the coverage of the plug-in interval. Pilot: {pilot['topics']} topics "
                      f"labelled by {plan.get('reference')} and {plan.get('judge')}, {pilot['runs']} runs. "
                      f"{plan.get('recommendation') or ''}", layout="column")
    return Table(head, rows, numeric=[True] * 9,
                 tex_columns=["topics", "hours", "analytic", "resampled", "", "cover", "", "", ""],
                 where=["", "", "", "", "report", "", "report", "report", "report"], paper=paper)


def curve_table(plan: dict[str, Any], metric: str | None = None) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the precision table for ``metric`` (default: the plan's primary metric) as the report and
    ``plan.md`` show it (:func:`plan_table`)."""
    t = plan_table(plan, metric).shown()
    return t.columns, t.rows


def _what(plan: dict[str, Any]) -> str:
    p = plan["pilot"]
    return (f"Computed on the pilot: {p['topics']} topics with labels from {plan['reference']} and {plan['judge']}, "
            f"{p['runs']} runs; the judge labelled {p['judge_topics']} topics and the plan assumes a track of "
            f"{p['total_topics']} judged topics. Half-widths are {plan['level']:.0%} and medians over runs, for the error of "
            f"the PPI-calibrated run mean against the human run mean on the same topics; resampled = topic bootstrap "
            f"({plan['curves'][plan['metric']]['reps']} worlds, seed {plan['seed']})."
            + (f" {plan['curves'][plan['metric']]['runs_dropped']} run(s) without an answer on every pilot topic are left out "
               f"of the curves." if plan['curves'][plan['metric']].get('runs_dropped') else ""))


def _budget_line(plan: dict[str, Any]) -> str:
    b = plan["budget"]
    return (f"Assessor time: {plan['pilot']['labels_per_topic']:.0f} labels per topic x {b['seconds_per_label']:g} s "
            f"({b['seconds_source']}) + {b['nugget_hours_per_topic']:g} h nugget work per topic.")


PLOT = "study/plan_curves.svg"  # where ``metaeval plan --results`` draws it, relative to the results folder


def _separate(plan: dict[str, Any]) -> str:
    """The line on how many topics tell the best pilot runs apart ('' for a plan written before it existed)."""
    by_metric = plan.get("need")  # a plan written before it has none
    need = by_metric.get(plan.get("metric")) if by_metric else None
    return str(need.get("separate_line") or "") if need else ""


def render_markdown(plan: dict[str, Any], heading: bool = False, plot: str | None = PLOT) -> str:
    """The plan section as Markdown (``heading``: start with "## Assessor plan"; ``plot``: relative link to the
    curves drawn by :func:`write_plot`, None for none)."""
    out = (["## Assessor plan", ""] if heading else []) + [f"**{plan['recommendation']}**", "", _what(plan), "",
                                                          _budget_line(plan), ""]
    if _separate(plan):
        out += [_separate(plan), ""]
    if plot:
        out += [f"![labelled topics vs half-width]({plot})", ""]
    head, rows = curve_table(plan)
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    out += ["", f"Analytic vs resampled width: {plan['agreement']['line']}.", ""]
    nt = plan["next_topics"]
    if nt["list"]:
        out += [f"Next topics for the assessors ({nt['strategy']} order; {nt['note']}):", ""]
        out += ["| rank | topic | size | pi at rank | cumulative hours |", "|---|---|---|---|---|"]
        out += [f"| {r['rank']} | {r['qid']} | {r['size']:.3f} | {r['pi_at_rank']:.2f} | {r['hours_cumulative']:.0f} |"
                for r in nt["list"][:20]]
        out.append("")
    else:
        out += [f"Next topics: {nt['note']}.", ""]
    if plan.get("replay"):
        rp = plan["replay"]
        out += [f"Replay of the labelling loop on {rp['topics']} human-labelled topics ({rp['pilot']}-topic pilot, the rest "
                f"held back; judge redrawn per replay: {'yes' if rp['judge_redrawn'] else 'no'}):", ""]
        out += [f"- {line}" for line in rp["lines"]]
        out.append("")
    if plan.get("consistency"):
        from metaeval.report.consistency_section import as_consistency, calibration_caption, consistency_rows

        cons = as_consistency(plan["consistency"], "study/plan.json: consistency")
        out += ["### Judge self-consistency", "", cons.line + ".", ""]
        head, rows = consistency_rows(cons)
        if rows:
            out += [calibration_caption(cons) + ":", "", "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
            out += ["| " + " | ".join(r) + " |" for r in rows]
            out.append("")
    return "\n".join(out)


def render_html(plan: dict[str, Any], heading: bool = False, plot: str | None = PLOT) -> str:
    """The plan section as an HTML fragment (escaped); arguments as :func:`render_markdown`."""
    e = html.escape
    parts = ["<section id='plan'>" + ("<h2>Assessor plan</h2>" if heading else ""),
             f"<p><strong>{e(plan['recommendation'])}</strong></p>", f"<p>{e(_what(plan))}</p>",
             f"<p>{e(_budget_line(plan))}</p>"]
    if _separate(plan):
        parts.append(f"<p>{e(_separate(plan))}</p>")
    if plot:
        parts.append(f"<p><img src='{e(plot)}' alt='labelled topics vs half-width' style='max-width:100%'></p>")
    head, rows = curve_table(plan)
    parts.append("<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr></thead><tbody>")
    parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows]
    parts.append("</tbody></table>")
    parts.append(f"<p>Analytic vs resampled width: {e(plan['agreement']['line'])}.</p>")
    nt = plan["next_topics"]
    if nt["list"]:
        parts.append(f"<p>Next topics ({e(nt['strategy'])} order): "
                     + ", ".join(e(r["qid"]) for r in nt["list"][:20]) + f"</p><p>{e(nt['note'])}</p>")
    if plan.get("replay"):
        parts.append("<ul>" + "".join(f"<li>{e(x)}</li>" for x in plan["replay"]["lines"]) + "</ul>")
    if plan.get("consistency"):
        from metaeval.report.consistency_section import as_consistency, calibration_caption, consistency_rows

        cons = as_consistency(plan["consistency"], "study/plan.json: consistency")
        parts.append(f"<h3>Judge self-consistency</h3><p>{e(cons.line)}</p>")
        head, rows = consistency_rows(cons)
        if rows:
            parts.append(f"<table><caption>{e(calibration_caption(cons))}</caption><thead><tr>"
                         + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr></thead><tbody>")
            parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows]
            parts.append("</tbody></table>")
    parts.append("</section>")
    return "\n".join(parts)


def write_plot(plan: dict[str, Any], path: str | Path, extra: list[dict[str, Any]] | None = None) -> Path:
    """Half-width vs labelled topics (analytic and resampled, median run) for the primary metric, with the
    target line; ``extra`` plans (e.g. other seeds or judges) are drawn in the same axes.  SVG unless the path
    ends in .png (then 200 dpi)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, p in enumerate([plan] + list(extra or [])):
        c = p["curves"][p["metric"]]
        rows = [r for r in c["rows"] if r["n"] < p["pilot"]["total_topics"]]  # n = T has width 0 (log axis)
        n = [r["n"] for r in rows]
        lab = p.get("label") or p["judge"]
        line, = ax.plot(n, [r["empirical_half"]["median"] for r in rows], "o-", ms=3, lw=1,
                        label=f"{lab} resampled" if i < 6 else None)
        ax.plot(n, [r["analytic_half"]["median"] for r in rows], "--", lw=1, color=line.get_color(),
                label=f"{lab} analytic" if i < 6 else None)
    ax.axhline(plan["target_half_width"], color="k", lw=0.8, ls=":", label=f"target ±{plan['target_half_width']:g}")
    ax.set_xlabel("human-labelled topics")
    ax.set_ylabel(f"{plan['level']:.0%} half-width, {plan['metric_name']} run mean (median run)")
    ax.set_yscale("log")
    ax.set_xscale("log")
    ax.set_title(f"calibrated vs human leaderboard on {plan['pilot']['total_topics']} topics "
                 f"(pilot {plan['pilot']['topics']} topics; dashed: analytic PPI)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=200)
    plt.close(fig)
    return path


def find_plan(root: Path, study_dir: Path) -> Path | None:
    """The assessor plan that sits in a results folder: ``study/plan.json`` (``metaeval plan --results DIR``), else a
    ``plan.json`` one folder down (``metaeval plan --out DIR/plan``; the first in name order), else None."""
    first = study_dir / "plan.json"
    if first.is_file():
        return first
    return next(iter(sorted(p for p in root.glob("*/plan.json") if p.is_file())), None)


def plot_link(root: Path, plan_path: Path) -> str | None:
    """The plan's curves beside its ``plan.json`` (``plan_curves.svg`` or ``.png``), relative to ``root``."""
    for ext in ("svg", "png"):
        p = plan_path.parent / f"plan_curves.{ext}"
        if p.is_file():
            return p.relative_to(root).as_posix()
    return None


def section(ctx: "Context") -> "Section | None":
    """The assessor plan as a report section when its ``plan.json`` sits in the results folder (:func:`find_plan`);
    no section when there is none, a problem line when it cannot be rendered."""
    from metaeval.report.model import Rendered, Section

    lay = ctx.res.layout
    path = find_plan(lay.root, lay.study_dir)
    if path is None:
        return None
    try:
        plan = lay.read_json(path)
        plot = plot_link(lay.root, path)
        block = Rendered(render_html(plan, plot=plot), render_markdown(plan, plot=plot))
    except Exception as exc:  # noqa: BLE001 - shown, never hidden
        ctx.unreadable(path, exc, "cannot render the plan")
        return None
    ctx.data["plan"] = plan
    return Section("plan", "Assessor plan", [block])
