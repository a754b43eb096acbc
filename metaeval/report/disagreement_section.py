"""The report's "where judge and reference disagree most" section: per cell the study's worst topics (lowest
per-topic tau), the answers whose rank moves most, the nugget labels behind it with what the judge said, and links
into the cell's transcript viewer (``metaeval.report.viewer``, rendered here into ``ctx.pages``).  The study's
figures are read as records (:class:`~metaeval.study.records.Disagreements`)."""

from __future__ import annotations

from typing import Any

from metaeval.report.context import Context
from metaeval.report.model import Detail, Section, Table, Text, fmt
from metaeval.report.viewer import unit_link
from metaeval.study.records import DisagreementTopic, encode


def disagreements(ctx: Context) -> Section:
    out, blocks = [], []
    blocks.append(Text(f"For each cell, the {ctx.worst} topics with the lowest per-topic tau on {ctx.metric_name}; within them "
                       "the answers whose rank moves most and the nugget labels behind it. 'open' links to the cell's "
                       "transcript viewer (cells/<cell>/transcripts.html: prompt and raw reply beside the parsed and "
                       "the human labels, filterable by topic, run, label and disagreement)."))
    for cid, sc in ctx.study_cells().items():
        stored = sc.disagreements if sc is not None else {}
        if ctx.metric not in stored and stored:
            blocks.append(Text(f"{cid}: the study lists disagreements on {', '.join(stored)} only "
                               f"(the first of analysis.metrics), not on {ctx.metric_name}.", "note"))
        rec = stored.get(ctx.metric)
        worst = list(rec.topics[: ctx.worst]) if rec is not None else []
        page = _viewer(ctx, cid)
        # report.json: the study's block with the topics shown, the cell and its viewer
        out.append({**(encode(rec) if rec is not None else {}), "topics": [encode(t) for t in worst], "cell": cid,
                    "viewer": page})
        inner = [b for t in worst for b in _topic_blocks(t, page)]
        if not inner:
            inner.append(Text("no topic with a defined per-topic tau", "note"))
        elif rec is not None and rec.n_topics_undefined:
            inner.append(Text(f"{rec.n_topics_undefined} topic(s) have undefined tau (constant scores) and are not ranked here.", "note"))
        blocks.append(Detail(f"{cid}", inner, open=False))
    ctx.data["disagreements"] = out
    return Section("disagreements", "Where judge and reference disagree most", blocks)


def _topic_blocks(t: DisagreementTopic, page: str) -> list:
    """One worst topic: its answers whose within-topic rank moves most, the nugget labels that differ (or, for a
    judge with its own nuggets, the two nugget lists), each row linked to the transcript viewer ``page``."""
    qid = t.qid

    def link(run: str, dis: bool = False) -> str:
        return unit_link(page, qid, run, disagree=dis) if page else ""

    blocks: list = [Text(f"Topic {qid} (tau {fmt(t.tau)}, {t.n_runs} runs): {t.query}", "p"),
                    Table(["run", "reference", "judge", "ref. rank", "judge rank", "transcript"],
                          [[a.run_id, fmt(a.reference), fmt(a.judge), str(a.reference_rank),
                            str(a.judge_rank), "open" if page else "-"] for a in t.answers],
                          "answers whose within-topic rank moves most", [False, True, True, True, True, False],
                          links=[link(a.run_id) for a in t.answers])]
    if t.pairs is not None:
        rows = [[p["run_id"], p["nugget"], p["importance"], p["human"],
                 p["judge"] + (f" ({p['judge_raw']})" if p.get("judge_raw") else ""), _reply(p),
                 p["answer_excerpt"], "open" if page else "-"] for p in t.pairs]
        blocks.append(Table(["run", "nugget", "importance", "human", "judge", "what the judge said",
                             "answer excerpt", "transcript"],
                            rows or [["-", "no label differs on this topic", "", "", "", "", "", "-"]],
                            "nugget labels that differ (answers above first, then largest difference, vital first)",
                            links=[link(p["run_id"], True) for p in t.pairs] if rows else []))
    for nl in t.nugget_lists or ():
        blocks += nugget_lists(nl, link(nl["run_id"]))
    return blocks


def _viewer(ctx: Context, cid: str) -> str:
    """Render the cell's transcript viewer (from the study's transcript_view.json) into ``ctx.pages``; returns
    its URL relative to the report, or "" when the study wrote no view (no transcripts)."""
    lay = ctx.res.layout
    sc = ctx.res.study_cell(cid)
    rel = sc.transcript_view if sc is not None else None
    path = lay.transcript_view(cid)
    if not rel or not path.exists():
        return ""
    from metaeval.report.viewer import viewer_html

    try:
        view, text = lay.read_json_text(path)  # parsed: checked, and the page's counts; the page embeds the text
    except Exception as exc:  # noqa: BLE001 - shown, never hidden
        ctx.unreadable(path, exc)
        return ""
    page = lay.transcript_viewer(cid).relative_to(lay.root).as_posix()
    synthetic = " (synthetic data)" if ctx.synthetic() else ""
    ctx.pages[page] = viewer_html(view, f"Transcripts of {cid}: {ctx.res.summary.experiment}{synthetic}", text=text)
    return page


def _reply(p: dict[str, Any], width: int = 240) -> str:
    """The judge's raw reply for a disagreeing pair (from the cell's transcripts), or why there is none."""
    if "judge_model_call" not in p:
        return "-"  # a study written before transcripts were indexed
    if not p.get("judge_model_call"):
        return "no model call (offline judge)"
    r = " ".join(str(p.get("judge_reply") or "").split())
    r = r if len(r) <= width else r[: width - 1] + "…"
    extra = [f"item {p['judge_position']}" if p.get("judge_position") else "",
             f"{p['judge_reasks']} re-ask(s)" if p.get("judge_reasks") else ""]
    extra = [e for e in extra if e]
    return r + (f" ({', '.join(extra)})" if extra else "")


def nugget_lists(nl: dict[str, Any], link: str) -> list:
    """An auto_auto answer: the human nuggets with the assessors' labels and the judge's own nuggets with its labels,
    as two separate lists (they are different nuggets: no row of one matches a row of the other), with the share
    each side marks as supported."""
    def table(items: list[dict[str, Any]], who: str) -> Table:
        sup = sum(1 for x in items if x.get("label") == "support")
        return Table(["nugget", "importance", "label"], [[x.get("nugget", ""), x.get("importance", ""), x.get("label", "")]
                                                         for x in items] or [["-", "", ""]],
                     f"{who}: {len(items)} nuggets, {sup} supported", [False, False, False])

    return [Text(f"Run {nl['run_id']}: the judge made its own nuggets, so the two lists below are not aligned row by "
                 f"row; compare what each side finds supported. Answer: {nl['answer_excerpt']}", "p"),
            table(nl["human"], "human nuggets, assessors' labels"), table(nl["judge"], "judge's own nuggets, its labels"),
            Table(["run", "transcript"], [[nl["run_id"], "open" if link else "-"]], "the judge's calls for this answer",
                  [False, False], links=[link])]
