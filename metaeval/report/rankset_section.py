"""The report's "which runs can be told apart" section, rendered from each cell's ``calibration.json`` ->
``rank_sets`` (:func:`metaeval.study.ranksets.rank_sets_block`).  Nothing here resamples: it formats.

Per cell: the leaderboard with each run's rank-set (95% simultaneous), the naive per-run rank interval beside it,
the group letters (runs sharing a letter cannot be told apart) and how many runs it is above / below; the
"A > B / A ~ B" matrix when there are at most :data:`MATRIX_MAX_RUNS` runs (every pair is in the JSON); the
tau of the shown leaderboard and of the raw judge with the human leaderboard on all topics.
"""

from __future__ import annotations

from typing import Any

from metaeval.report.context import Context
from metaeval.report.model import Detail, Section, Table, Text

#: above this many runs the pairwise matrix is left to calibration.json (a 45 x 45 matrix is not read)
MATRIX_MAX_RUNS = 20


def _span(r: list[int]) -> str:
    return str(r[0]) if r[0] == r[1] else f"{r[0]}-{r[1]}"


def cell_blocks(cid: str, block: dict[str, Any]) -> list:
    """The blocks of one cell's rank-sets."""
    if block.get("status") != "ok":
        return [Text(f"{cid}: rank-sets n/a ({block.get('reason')})", kind="note")]
    rows = [[str(r["rank"]), r["run_id"], f"{r['estimate']:.4f}", _span(r["rank_set"]), _span(r["naive_rank_interval"]),
             r["group"], f"{r['beats']} / {r['beaten_by']}"] for r in block["rows"]]
    s = block["summary"]
    cap = (f"{block['note']}. rank-set = ranks the run can hold, all runs at once ({block['level']:.0%}); naive = "
           f"per-run percentile interval of the bootstrap rank (not simultaneous); group: runs sharing a letter "
           f"cannot be told apart; above / below = runs it beats / that beat it. {s['decided_pairs']} of {s['pairs']} "
           f"pairs decided; mean rank-set size {s['mean_rank_set_size']:.1f} of {block['runs']} (naive "
           f"{s['mean_naive_interval_size']:.1f})")
    blocks: list = [Table(["rank", "run", "PPI++ estimate", "rank-set", "naive", "group", "above / below"], rows,
                          caption=cap, numeric=[True, False, True, True, True, False, True])]
    if block["runs_left_out"]:
        blocks.append(Text(f"left out (no score on every topic): {', '.join(block['runs_left_out'])}", kind="note"))
    for key, label in (("shown", "the leaderboard shown"), ("raw_judge", "the raw judge")):
        t = (block.get("tau") or {}).get(key)
        if t and t.get("estimate") is not None:
            by = f" ({t['by']})" if t.get("by") else ""
            blocks.append(Text(f"Kendall tau-b of {label}{by} with the human leaderboard on all {block['topics']} "
                               f"topics: {t['estimate']:.3f} [{t['ci'][0]:.3f}, {t['ci'][1]:.3f}] ({t['level']:.0%} "
                               "basic topic bootstrap)"))
    runs = [r["run_id"] for r in block["rows"]]
    if len(runs) <= MATRIX_MAX_RUNS:
        dec = {}
        for p in block["pairs"]:
            dec[(p["a"], p["b"])] = p["decision"]
            dec[(p["b"], p["a"])] = {">": "<", "<": ">", "~": "~"}[p["decision"]]
        mat = [[a] + ["" if a == b else dec.get((a, b), "") for b in runs] for a in runs]
        blocks.append(Detail("A > B / A ~ B", [Table(["row vs column"] + [str(k + 1) for k in range(len(runs))], mat,
                                                     caption="> = the row run is above the column run (columns "
                                                             "numbered by rank), ~ = cannot be told apart",
                                                     numeric=[False] + [False] * len(runs))], open=False))
    else:
        blocks.append(Text(f"the A > B / A ~ B decisions of all {s['pairs']} pairs are in calibration.json "
                           "(rank_sets.pairs)", kind="note"))
    return blocks


def section(ctx: Context) -> Section | None:
    """One section for every cell with rank-sets; None when no cell has them."""
    cals = {c.cell: (c.calibration or {}).get("rank_sets") for c in ctx.active}
    cals = {k: v for k, v in cals.items() if v}
    if not cals:
        return None
    ctx.data["rank_sets"] = cals
    blocks: list = []
    for cid, block in cals.items():
        blocks.append(Detail(cid, cell_blocks(cid, block), open=len(cals) == 1))
    return Section("rank_sets", "Which runs can be told apart (rank-sets, 95% simultaneous)", blocks)
