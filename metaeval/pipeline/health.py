"""Is a finished sweep usable?  A sweep whose cell got mostly FAILED labels (server down, every call hanging,
every reply unparseable, a wrong key) must not look like a success: everything is stored first, then the
driver prints one line per such cell and exits with ``EXIT_FAILED_RATE``.

FAILED rate of a cell = FAILED labels / labels, over the cell's label set (a cell with no labels to give, e.g.
only topics without nuggets, has no rate and is never flagged).  A cell is flagged when its rate is strictly
greater than ``sweep.max_failed_rate`` (default 0.5; 1.0 turns the check off).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

#: exit status of ``metaeval sweep`` when some cell's FAILED rate exceeds ``sweep.max_failed_rate``
#: (2: bad input or settings; 3: stopped early by the budget cap; 130: interrupted; 143: terminated)
EXIT_FAILED_RATE = 4
DEFAULT_MAX_FAILED_RATE = 0.5


def failed_rate(row: Mapping[str, Any]) -> float | None:
    labels = int(row.get("labels") or 0)
    if labels <= 0:
        return None
    return int(row.get("failed_labels") or 0) / labels


def failed_rate_problems(cells: Iterable[Mapping[str, Any]], max_rate: float = DEFAULT_MAX_FAILED_RATE) -> list[str]:
    """One line per cell whose FAILED rate exceeds ``max_rate`` (``cells``: the summary's cell rows with
    ``cell``, ``labels`` and ``failed_labels``; skipped cells are ignored)."""
    out = []
    for row in cells:
        if row.get("skipped"):
            continue
        rate = failed_rate(row)
        if rate is not None and rate > max_rate:
            out.append(f"cell {row.get('cell')}: {int(row.get('failed_labels') or 0)} of {int(row['labels'])} labels FAILED "
                       f"({rate:.0%} > sweep.max_failed_rate={max_rate:g}); results stored; a rerun retries the failed jobs")
    return out
