"""The judge's self-consistency (``sweep.samples`` k >= 2; ``metaeval.study.consistency``), rendered only.

``consistency_rows(cons)`` gives the soft-vs-hard calibration table (judge-score variant x method, held-out MAE
+- SE and ``s(H - J)``); ``consistency_blocks(cells)`` the report section's blocks for every sampled cell, shown
after the tau section: the judge's own spread of tau over draws beside the topic-bootstrap sd.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from metaeval.formatting import fixed
from metaeval.study.records import CellConsistency, Consistency, decode, encode

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.report.context import Context
    from metaeval.report.model import Section


def as_consistency(cons: Consistency | Mapping[str, Any], where: str = "consistency") -> Consistency:
    """A self-consistency block as its record (a plan's ``consistency`` is read as written: decoded here)."""
    if isinstance(cons, Mapping):
        return decode(Consistency, dict(cons), where)
    return cons


def consistency_rows(cons: CellConsistency) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per judge-score variant (hard, majority, soft), one column per method."""
    variants = cons.calibration.variants if cons.calibration is not None else {}
    if not variants:
        return [], []
    methods = [m for m in next(iter(variants.values())) if m != "s_delta"]
    head = ["judge scores"] + [f"{m} MAE ± SE" for m in methods] + ["s(H-J)"]
    rows = [[name] + [f"{res[m]['mae']:.4f} ± {fixed(res[m].get('se'), 4)}" for m in methods] + [fixed(res.get("s_delta"), 3)]
            for name, res in variants.items()]
    return head, rows


def calibration_caption(cons: CellConsistency) -> str:
    cal = cons.calibration
    folds, repeats = (cal.folds, cal.repeats) if cal is not None else (None, None)
    name = cons.metric_name if cons.metric_name is not None else cons.metric
    return (f"score-level calibration on {name}, out of fold by topic: MAE of run "
            f"means vs the reference's on held-out topics ({folds} folds x {repeats} repeats, SE "
            "over repeats); none = the raw judge; hard = draw 0, majority = per-label majority vote, soft = mean over "
            "draws (credit = vote share)")


def consistency_blocks(cells: Mapping[str, Consistency]) -> list[Any]:
    """Blocks of the report section for ``cells`` (cell -> its self-consistency record)."""
    from metaeval.report.model import Table, Text

    blocks: list[Any] = [Text("k draws of every assignment call (sweep.samples): the flip rate is the chance that two "
                              "draws of one label disagree; the sd of run-level tau over draws is the judge's own "
                              "uncertainty with the topics held fixed, beside the topic-bootstrap sd behind the tau CIs above.")]
    for cid, cons in cells.items():
        if not isinstance(cons, CellConsistency):
            blocks.append(Text(f"{cid}: self-consistency failed: {cons.error}", "note"))
            continue
        blocks.append(Text(f"{cid}: {cons.line}.", "p"))
        head, rows = consistency_rows(cons)
        if rows:
            blocks.append(Table(head, rows, f"{cid}: " + calibration_caption(cons), [False] + [True] * (len(head) - 1)))
    return blocks


def section(ctx: "Context") -> "Section | None":
    """Sampled cells (``sweep.samples``): flip rate, tau over draws beside the topic bootstrap, soft vs hard
    calibration, from each cell's ``consistency`` as the study stored it; no section without samples."""
    from metaeval.report.model import Section

    cells = {c.cell: c.consistency for c in ctx.active if c.consistency}
    if not cells:
        return None
    ctx.data["consistency"] = {cid: encode(cons) for cid, cons in cells.items()}
    return Section("consistency", "Judge self-consistency (k samples)", consistency_blocks(cells))
