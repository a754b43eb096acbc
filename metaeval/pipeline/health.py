"""Is a finished run usable?  One "usable output" rule for every judge stage (relevance, creation, importance,
assignment) and every command that calls a judge (``sweep``, ``assign``, ``create``, ``probe``): a run whose
stage produced nothing usable, or mostly FAILED labels (server down, every call hanging, every reply
unparseable, a wrong key), must not look like a success.  Everything is stored first, then the command prints
one line per problem and exits with ``EXIT_FAILED_RATE`` (4).

Per stage of a sweep cell (its summary row):

* relevance (``sweep.relevance=judge``): FAILED grades / documents graded > ``max_rate``, or no document kept;
* creation: a cell that creates nuggets and ended with no label at all (no nugget was created, or none survived);
* importance: FAILED importance labels / labels > ``max_rate``;
* assignment: FAILED support labels / labels > ``max_rate``.

A cell whose judge had nothing to do (human nuggets and labels, or only topics without nuggets) has no rate and
is not flagged by itself; ``max_rate`` is ``sweep.max_failed_rate`` (default 0.5; 1.0 turns the rate checks off,
never the "nothing usable" checks).  Whatever ``max_rate`` says, two runs never exit 0: a cell whose every label
is FAILED, and a run whose every cell has no label at all (nothing was judged: a dataset whose topics have no
nuggets).
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
    """One line per problem of a cell's stage (see the module docstring; ``cells``: the summary's cell rows with
    ``cell``, ``strategy``, ``labels``, ``failed_labels``, ``failed_importance`` and ``relevance``; skipped
    cells are ignored)."""
    out = []
    for row in cells:
        if row.get("skipped"):
            continue
        cell = row.get("cell")
        tail = "results stored; a rerun retries the failed jobs"
        rel = row.get("relevance") or {}
        docs, bad = int(rel.get("documents") or 0), int(rel.get("failed_grades") or 0)
        if docs and (bad / docs > max_rate or not int(rel.get("relevant") or 0)):
            out.append(f"cell {cell}: relevance stage: {bad} of {docs} grades FAILED, {int(rel.get('relevant') or 0)} "
                       f"documents kept (sweep.max_failed_rate={max_rate:g}); {tail}")
        labels = int(row.get("labels") or 0)
        if "labels" in row and labels == 0 and _creates(row):
            out.append(f"cell {cell}: creation stage: no usable nugget (0 labels: every creation call failed or "
                       f"gave no nugget); {tail}")
            continue
        imp = int(row.get("failed_importance") or 0)
        if labels and imp / labels > max_rate and _judges_importance(row):
            out.append(f"cell {cell}: importance stage: {imp} of {labels} importance labels FAILED "
                       f"({imp / labels:.0%} > sweep.max_failed_rate={max_rate:g}); {tail}")
        rate = failed_rate(row)
        if rate is not None and rate > max_rate:
            out.append(f"cell {cell}: {int(row.get('failed_labels') or 0)} of {labels} labels FAILED "
                       f"({rate:.0%} > sweep.max_failed_rate={max_rate:g}); {tail}")
        elif rate is not None and rate >= 1.0:  # every label FAILED: never a success, whatever max_failed_rate says
            out.append(f"cell {cell}: every label FAILED ({labels} of {labels}): nothing usable, whatever "
                       f"sweep.max_failed_rate says; {tail}")
    ran = [row for row in cells if not row.get("skipped")]
    if ran and all(int(row.get("labels") or 0) == 0 for row in ran) and not any(_creates(row) for row in ran):
        out.append(f"nothing was judged: {len(ran)} cell(s), 0 labels (do the topics have nuggets? check "
                   "dataset.source / dataset.nuggets); no figure can be computed")
    return out


def _stages(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The judge stages of the row's strategy (``pipeline.strategies``); () for an unknown one."""
    from metaeval.pipeline.strategies import STRATEGIES

    st = STRATEGIES.get(str(row.get("strategy") or ""))
    return st.judge_stages if st is not None else ()


def _creates(row: Mapping[str, Any]) -> bool:
    return "create" in _stages(row)


def _judges_importance(row: Mapping[str, Any]) -> bool:
    return "importance" in _stages(row)


def unusable_stage(stage: str, *, usable: int, total: int, calls: int = 0, errors: Iterable[Any] = ()) -> str | None:
    """The one line saying a command's ``stage`` produced nothing usable (``usable`` == 0 of ``total`` > 0 items),
    with how many model calls failed and the first error; ``None`` when something is usable or there was no work.
    Used by ``assign``, ``create`` and ``probe`` (exit ``EXIT_FAILED_RATE``)."""
    if total <= 0 or usable > 0:
        return None
    errs = [str(e) for e in errors if e]
    first = f"; first error: {errs[0][:200]}" if errs else ""
    failed = f"; {len(errs)} of {calls} model calls failed" if calls else ""
    return (f"{stage}: nothing usable: 0 of {total} {'labels' if stage == 'assignment' else 'items'} usable"
            f"{failed}{first} (outputs written; fix the cause and rerun)")
