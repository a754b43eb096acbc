"""The report's "which runs can be told apart" section, rendered from each cell's ``calibration.json`` ->
``rank_sets`` (:func:`metaeval.study.ranksets.rank_sets_block`; the record :class:`~metaeval.study.records.RankSets`,
or :class:`~metaeval.study.records.RankSetsUnavailable` with the reason).  Nothing here resamples: it formats.

Per cell: the leaderboard with each run's rank-set (95% simultaneous), the naive per-run rank interval beside it,
the group letters (runs sharing a letter cannot be told apart) and how many runs it is above / below; the
"A > B / A ~ B" matrix when there are at most :data:`MATRIX_MAX_RUNS` runs (every pair is in the JSON); the
tau of the shown leaderboard and of the raw judge with the human leaderboard on all topics: the basic-bootstrap
interval and the bounds holding for any ranking (:func:`tau_text`, the terminal's words too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metaeval.report.context import Context
from metaeval.report.model import Detail, Ident, Num, Paper, Section, Span, Table, Text
from metaeval.study.records import RankSets, RankSetsUnavailable, TrackTau, encode

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.report.render_latex import Names

#: above this many runs the pairwise matrix is left to calibration.json (a 45 x 45 matrix is not read)
MATRIX_MAX_RUNS = 20


def cell_blocks(cid: str, block: RankSets | RankSetsUnavailable) -> list:
    """The blocks of one cell's rank-sets."""
    if not isinstance(block, RankSets) or not block.ok:
        reason = block.reason if isinstance(block, RankSetsUnavailable) else None
        return [Text(f"{cid}: rank-sets n/a ({reason})", kind="note")]
    s = block.summary
    cap = (f"{block.note}. rank-set = ranks the run can hold, all runs at once ({block.level:.0%}); naive = "
           f"per-run percentile interval of the bootstrap rank (not simultaneous); group: runs sharing a letter "
           f"cannot be told apart; above / below = runs it beats / that beat it. {s.decided_pairs} of {s.pairs} "
           f"pairs decided; mean rank-set size {s.mean_rank_set_size:.1f} of {block.runs} (naive "
           f"{s.mean_naive_interval_size:.1f})")
    blocks: list = [rankset_table(cid, block, caption=cap)]
    if block.runs_left_out:
        blocks.append(Text(f"left out (no score on every topic): {', '.join(block.runs_left_out)}", kind="note"))
    for sentence, t in tau_sentences(block):
        blocks.append(Text(sentence))
        if _fixed(t):  # its interval's known limit (calibration.ranksets), pointing to the bounds
            blocks.append(Text(f"caveat: {t.treated_as}", kind="note"))
    runs = [r.run_id for r in block.rows]
    if len(runs) <= MATRIX_MAX_RUNS:
        dec = {}
        for p in block.pairs:
            dec[(p.a, p.b)] = p.decision
            dec[(p.b, p.a)] = {">": "<", "<": ">", "~": "~"}[p.decision]
        mat = [[a] + ["" if a == b else dec.get((a, b), "") for b in runs] for a in runs]
        blocks.append(Detail("A > B / A ~ B", [Table(["row vs column"] + [str(k + 1) for k in range(len(runs))], mat,
                                                     caption="> = the row run is above the column run (columns "
                                                             "numbered by rank), ~ = cannot be told apart",
                                                     numeric=[False] + [False] * len(runs))], open=False))
    else:
        blocks.append(Text(f"the A > B / A ~ B decisions of all {s.pairs} pairs are in calibration.json "
                           "(rank_sets.pairs)", kind="note"))
    return blocks


def tau_sentences(block: RankSets) -> list[tuple[str, TrackTau]]:
    """``(sentence, record)`` for the tau of the leaderboard shown and of the raw judge (those with an estimate):
    ``Kendall tau-b of ... with the human leaderboard on all N topics:`` and :func:`tau_text`."""
    out = []
    for t, label in ((block.tau.shown, "the leaderboard shown"), (block.tau.raw_judge, "the raw judge")):
        if t is not None and t.estimate is not None:
            by = f" ({t.by})" if t.by else ""
            out.append((f"Kendall tau-b of {label}{by} with the human leaderboard on all {block.topics} topics: "
                        f"{tau_text(t.estimate, t.ci, t.level, t.bounds, _fixed(t), _refitted(t))}", t))
    return out


def _fixed(t: TrackTau) -> bool:
    """Whether the tau's interval treats its ranking as fixed (``treated_as`` says so, with the caveat)."""
    return bool(t.treated_as and t.treated_as.startswith("fixed"))


def _refitted(t: TrackTau) -> bool:
    """Whether the tau's interval refits its ranking in every replicate (``metaeval.study.ranksets.REFIT_NOTE``)."""
    return bool(t.treated_as and t.treated_as.startswith("refitted"))


def tau_text(estimate: float, ci, level: float, bounds, fixed: bool, refitted: bool = False) -> str:
    """``0.780, 95% CI [0.720, 0.830] (basic bootstrap[; ranking treated as fixed: can under-cover near ties |
    ; ranking refitted in each replicate]); bounds holding for any ranking at 95%: [0.130, 1.000]`` - one track
    tau (``rank_sets.tau.*``) in words, the terminal's and the report's; the bounds are left out when the file has
    none (written before them)."""
    from metaeval.formatting import fixed as num

    caveat = ("; ranking treated as fixed: can under-cover near ties" if fixed else
              "; ranking refitted in each replicate" if refitted else "")
    out = (f"{num(estimate)}, {level:.0%} CI [{num(ci[0])}, {num(ci[1])}] (basic bootstrap{caveat})")
    if bounds and bounds[0] is not None and bounds[1] is not None:
        out += f"; bounds holding for any ranking at {level:.0%}: [{num(bounds[0])}, {num(bounds[1])}]"
    return out


def section(ctx: Context) -> Section | None:
    """One section for every cell with rank-sets; None when no cell has them."""
    cals = {c.cell: c.calibrated.rank_sets for c in ctx.active if c.calibrated is not None}
    cals = {k: v for k, v in cals.items() if v is not None}
    if not cals:
        return None
    ctx.data["rank_sets"] = {cid: encode(rs) for cid, rs in cals.items()}
    blocks: list = []
    for cid, block in cals.items():
        blocks.append(Detail(cid, cell_blocks(cid, block), open=len(cals) == 1))
    return Section("rank_sets", "Which runs can be told apart (rank-sets, 95% simultaneous)", blocks)


def rankset_table(cid: str, rs: RankSets, names: "Names | None" = None, caption: str = "") -> Table:
    """One cell's rank-sets (``calibration.json`` -> ``rank_sets``, status ok): per run by estimate its rank, the
    PPI++ estimate (in the paper with its group letter as a superscript, as papers mark indistinguishable runs, up
    to ``render_latex.LETTERS_MAX`` groups), the rank-set, the naive interval, the group and above / below."""
    from metaeval.report.render_latex import LETTERS_MAX

    s = rs.summary
    letters = s.groups <= LETTERS_MAX
    body = [[str(r.rank), Ident(r.run_id), Num(r.estimate, 4, tex_digits=3, sup=r.group if letters else ""),
             Span(*r.rank_set), Span(*r.naive_rank_interval), r.group, f"{r.beats} / {r.beaten_by}"]
            for r in rs.rows]
    paper = None
    if names is not None:
        mark = ("runs sharing a superscript letter cannot be told apart" if letters else
                f"{s.groups} groups of runs that cannot be told apart (too many for letters: calibration.json)")
        if rs.human_labelled_topics >= rs.topics:
            how = (f"every one of the {rs.topics} topics is human-labelled, so this is the human leaderboard "
                   "itself: the rank-set is the observed rank, and only tied runs cannot be told apart.")
        else:
            how = (f"PPI++ estimate of the human score over all {rs.topics} topics ({rs.human_labelled_topics} "
                   f"human-labelled); {mark}; rank-set = the ranks a run can hold, all runs at once; above / below = "
                   f"runs it beats / that beat it. All at {rs.level * 100:.0f}% simultaneous confidence over the "
                   f"{s.pairs} run pairs (max-t bootstrap of the {rs.human_labelled_topics} labelled topics, "
                   f"{rs.n_boot} resamples); {s.decided_pairs} pairs decided, mean rank-set size "
                   f"{s.mean_rank_set_size:.1f} of {rs.runs} runs.")
            how += "".join(f" {sentence}." for sentence, _ in tau_sentences(rs))
        paper = Paper(f"ranksets_{cid}", f"Rank-sets, {names.phrase(cid)}, {names.metric_tex}: runs told apart at "
                                         f"{rs.level * 100:.0f}\\% simultaneous confidence.",
                      f"Rank-sets on {names.metric_plain}, {names.plain(cid)}, on {names.data_plain}: " + how,
                      layout="board")
    return Table(["rank", "run", "PPI++ estimate", "rank-set", "naive", "group", "above / below"], body, caption,
                 [True, False, True, True, True, False, True], tex_columns=["", "", "estimate", "", "", "", ""],
                 where=["report", "", "", "", "report", "report", ""], paper=paper)
