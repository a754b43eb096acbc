"""Diagnostics of one comparison (reference vs candidate, one metric): per-run rankings on both sides and flags.

What TREC AutoJudge users check before trusting a tau (``autojudge-evaluate``'s ``on-missing default`` and
leaderboard statistics):

* **rankings**: per run, the number of topics, the reference and candidate run means over the common cells, the
  rank on each side (1 = best; tied runs share the best rank, :func:`metaeval.analysis.ranks.rank_array`) and the rank change;
* **flags** (each with the counts behind it):

  - ``too_few_topics``: fewer than ``min_topics`` common topics (default 10), so the run means and every tau
    rest on few topics;
  - ``all_tied_reference`` / ``all_tied_candidate``: every run mean equal on that side, so run-level tau is
    undefined (tau-b) or meaningless;
  - ``defaulted_reference`` / ``defaulted_candidate``: cells whose score was *defaulted* rather than measured
    - an answer with an empty denominator (no vital nugget for ``v``/``v_strict``; no nugget for ``a``, ``w``
    and their strict forms), which the scoring policy ``no_vital`` scores 0 (nuggetizer) or excludes.  Known
    only when the side is a label set (see :func:`defaulted_cells`); ``None`` otherwise;
  - ``undefined_topic_taus``: topics whose per-topic tau is undefined (constant scores on a side), skipped by
    the ``topic_avg`` level.

Functions return plain data; the study writes them into a diagnostics folder per comparison.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from metaeval.analysis.kendall import _div
from metaeval.analysis.ranks import rank_array
from metaeval.measures import REGISTRY, normalize_metric

__all__ = ["comparison_diagnostics", "defaulted_cells", "run_rankings"]

#: measure -> the count of ``score_answers`` that is 0 when its denominator is empty (``Metric.count_column``)
_DENOMINATOR = {m.name: m.count_column for m in REGISTRY}


def defaulted_cells(per_answer: Any, metric: str) -> set[tuple[str, str]] | None:
    """``{(qid, run_id)}`` whose ``metric`` was defaulted (empty denominator) in a ``score_answers`` table; None
    when the table does not say (no count columns, or not a nugget metric)."""
    col = _DENOMINATOR.get(normalize_metric(metric))
    if per_answer is None or col is None or not hasattr(per_answer, "columns") or col not in per_answer.columns:
        return None
    sel = per_answer[per_answer[col] == 0]
    return set(zip(sel["qid"].astype(str), sel["run_id"].astype(str)))


def run_rankings(al: Any, candidate: int = 0) -> "Any":
    """Per-run table ``run_id, n_topics, reference_mean, candidate_mean, reference_rank, candidate_rank,
    rank_change`` (candidate minus reference rank) over the common cells, sorted by the reference rank."""
    import pandas as pd

    x, y = al.x, al.ys[candidate]
    mask = ~(np.isnan(x) | np.isnan(y))
    cnt = mask.sum(axis=0)
    mx = _div(np.where(mask, x, 0.0).sum(axis=0), cnt)
    my = _div(np.where(mask, y, 0.0).sum(axis=0), cnt)
    rx, ry = rank_array(mx), rank_array(my)
    df = pd.DataFrame({"metric": al.metric, "run_id": list(al.runs), "n_topics": cnt.astype(int),
                       "reference_mean": mx, "candidate_mean": my, "reference_rank": rx, "candidate_rank": ry,
                       "rank_change": ry - rx})
    return df.sort_values(["reference_rank", "run_id"], kind="mergesort").reset_index(drop=True)


def _all_tied(v: np.ndarray) -> bool:
    v = v[~np.isnan(v)]
    return bool(v.size >= 2 and np.all(v == v[0]))


def comparison_diagnostics(al: Any, candidate: int = 0, min_topics: int = 10,
                           defaulted: dict[str, set[tuple[str, str]] | None] | None = None,
                           n_topics_skipped: int | None = None) -> tuple[dict[str, Any], Any]:
    """``(flags, rankings)`` for one comparison; see the module docstring.

    ``defaulted``: ``{"reference": cells or None, "candidate": cells or None}`` from :func:`defaulted_cells`;
    only cells in the comparison are counted.  ``flags["warnings"]`` lists one line per raised flag.
    """
    rankings = run_rankings(al, candidate)
    x, y = al.x, al.ys[candidate]
    mask = ~(np.isnan(x) | np.isnan(y))
    n_topics = int(mask.any(axis=1).sum())
    cells = {(al.topics[t], al.runs[r]) for t, r in zip(*np.nonzero(mask))}
    flags: dict[str, Any] = {
        "metric": al.metric, "n_topics": n_topics, "n_runs": int(mask.any(axis=0).sum()), "n_cells": len(cells),
        "min_topics": int(min_topics), "too_few_topics": n_topics < min_topics,
        "all_tied_reference": _all_tied(rankings["reference_mean"].to_numpy(float)),
        "all_tied_candidate": _all_tied(rankings["candidate_mean"].to_numpy(float)),
        "undefined_topic_taus": n_topics_skipped,
    }
    warnings = []
    if flags["too_few_topics"]:
        warnings.append(f"only {n_topics} common topics (< {min_topics}): run means and taus rest on few topics")
    for side in ("reference", "candidate"):
        if flags[f"all_tied_{side}"]:
            warnings.append(f"every run mean of the {side} is equal: run-level tau is undefined")
        got = (defaulted or {}).get(side)
        n_def = None if got is None else len(cells & got)
        flags[f"defaulted_{side}"] = n_def
        if n_def:
            warnings.append(f"{n_def} of {len(cells)} {side} cells are defaulted scores (empty denominator, "
                            f"e.g. no vital nugget), not measured")
    if n_topics_skipped:
        warnings.append(f"{n_topics_skipped} topics have an undefined per-topic tau (skipped by topic_avg)")
    flags["warnings"] = warnings
    return flags, rankings
