"""Label agreement between two label sets that label the same (nugget, answer) pairs.

Rows are joined on ``(qid, run_id, nugget_id)``.  A joined row whose nugget text differs between the sides
(after stripping whitespace) is not the same nugget: it is left out and reported under ``text_mismatches``.
Rows on one side only are counted (``reference_only`` / ``candidate_only``).  FAILED labels are not forced
into the 3x3 matrix: they are counted separately (``failed``: reference, candidate, both) and the statistics
of :mod:`metaeval.analysis.confusion` are computed on the rows where both labels are valid.

**Coverage.**  ``coverage = matched / total`` where ``total`` counts the label slots ``(qid, run_id,
nugget_id)`` of the answers both sides labelled (either side's slot counts once) and ``matched`` those with the
same nugget text on both sides.  Below ``COVERAGE_NOTE`` (95%) every figure carries the note "on k of n pairs
(nugget texts differ)"; below ``COVERAGE_MIN`` (50%) the agreement statistics are not computed (n/a, NaN):
a kappa on the few pairs whose texts happen to match says nothing about the judge (e.g. 28 of 2,062 pairs
when the judge wrote its own nuggets).

Importance (vital/okay) agreement is computed the same way per distinct nugget ``(qid, nugget_id)`` (order
``okay < vital``, so the strictness index there is the share of nuggets the candidate downgrades minus the
share it upgrades); ``identical`` flags the common case of a candidate that copied the reference's importance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from metaeval.analysis.confusion import clustered_stuart_maxwell, confusion_agreement
from metaeval.types import IMPORTANCE_ORDER, SUPPORT_ORDER, label_codes

KEY = ["qid", "run_id", "nugget_id"]
COVERAGE_NOTE = 0.95  # below: every table says "on k of n pairs (nugget texts differ)"
COVERAGE_MIN = 0.50   # below: agreement statistics are n/a
_STATISTICS = ("exact_agreement", "cohen_kappa", "cohen_kappa_se", "weighted_kappa", "weighted_kappa_se",
               "krippendorff_alpha", "strictness_index", "p_lower", "p_higher", "stuart_maxwell_stat",
               "stuart_maxwell_p")
_INTERVALS = ("cohen_kappa_ci", "weighted_kappa_ci", "strictness_ci")


def join_labels(reference: Any, candidate: Any, max_examples: int = 5) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Inner join of two LabelSets' labels with nugget-text verification.

    Returns the joined rows (``qid, run_id, nugget_id, nugget, support_ref, support_cand, importance_ref,
    importance_cand``) and a report ``{n_reference, n_candidate, n_joined, reference_only, candidate_only,
    text_mismatches, text_mismatch_examples}``.
    """
    cols = KEY + ["nugget", "support", "importance"]
    r = reference.labels[cols].copy()
    c = candidate.labels[cols].copy()
    for df in (r, c):
        df["qid"] = df["qid"].astype(str)
        df["run_id"] = df["run_id"].astype(str)
        for col in ("support", "importance"):
            df[col] = df[col].astype(str)
    m = r.merge(c, on=KEY, how="outer", suffixes=("_ref", "_cand"), indicator=True)
    both = m[m["_merge"] == "both"]
    same = both["nugget_ref"].astype(str).str.strip() == both["nugget_cand"].astype(str).str.strip()
    bad = both[~same]
    answers = ["qid", "run_id"]
    shared = r[answers].drop_duplicates().merge(c[answers].drop_duplicates(), on=answers)
    n_shared_slots = len(m[answers].merge(shared, on=answers))  # label slots of answers both sides labelled
    info = {
        "n_reference": int(len(r)), "n_candidate": int(len(c)), "n_joined": int(same.sum()),
        "reference_only": int((m["_merge"] == "left_only").sum()),
        "candidate_only": int((m["_merge"] == "right_only").sum()),
        "text_mismatches": int(len(bad)),
        "shared_answer_slots": int(n_shared_slots),
        "text_mismatch_examples": [
            {"qid": q, "run_id": run, "nugget_id": int(n), "reference": a, "candidate": b}
            for q, run, n, a, b in bad[KEY + ["nugget_ref", "nugget_cand"]].head(max_examples).itertuples(index=False)
        ],
    }
    out = both[same].rename(columns={"nugget_ref": "nugget"}).drop(columns=["nugget_cand", "_merge"])
    return out.reset_index(drop=True), info


def count_matrix(ref: pd.Series, cand: pd.Series, order: tuple[str, ...]) -> tuple[np.ndarray, dict[str, int]]:
    """``K x K`` counts of (reference, candidate) label pairs over ``order``; FAILED / unknown counted apart."""
    ri = label_codes(ref, order).astype(np.int64)
    ci = label_codes(cand, order).astype(np.int64)
    ok = (ri >= 0) & (ci >= 0)
    k = len(order)
    m = np.bincount(ri[ok] * k + ci[ok], minlength=k * k).reshape(k, k).astype(np.int64)
    failed = {"reference": int(((ri < 0) & (ci >= 0)).sum()), "candidate": int(((ci < 0) & (ri >= 0)).sum()),
              "both": int(((ri < 0) & (ci < 0)).sum())}
    return m, failed


def per_topic_counts(joined: pd.DataFrame, order: tuple[str, ...]) -> np.ndarray:
    """``(topics, K, K)`` support-label counts of a :func:`join_labels` table, one matrix per topic (qid order)."""
    mats = [count_matrix(g["support_ref"], g["support_cand"], order)[0] for _, g in joined.groupby("qid", sort=True)]
    return np.stack(mats) if mats else np.zeros((0, len(order), len(order)))


def importance_agreement(joined: pd.DataFrame, alpha: float = 0.05) -> dict[str, Any] | None:
    """vital/okay agreement per distinct nugget of a :func:`join_labels` table; None when no nugget has both."""
    nug = joined.drop_duplicates(["qid", "nugget_id"])
    m, failed = count_matrix(nug["importance_ref"], nug["importance_cand"], IMPORTANCE_ORDER)
    if m.sum() == 0:
        return None
    out = confusion_agreement(m, IMPORTANCE_ORDER, alpha)
    out["failed"] = failed
    out["n_nuggets"] = int(len(nug))
    out["identical"] = bool(np.trace(m) == m.sum() and failed["reference"] == failed["candidate"] == 0)
    return out


def label_agreement(reference: Any, candidate: Any, alpha: float = 0.05, n_boot: int = 1000,
                    seed: int = 0) -> dict[str, Any]:
    """Support-label agreement (and importance agreement) of two LabelSets; a JSON-ready dict.

    Keys: everything from :func:`metaeval.analysis.confusion.confusion_agreement` (``order, confusion,
    confusion_row_normalised, exact_agreement, cohen_kappa, weighted_kappa, krippendorff_alpha,
    strictness_index, stuart_maxwell_p, reference_mix, candidate_mix, shifts`` ...), plus ``failed``
    (counts of FAILED on either side), ``join`` (the join report), ``importance`` (or None) and
    ``clustered``: topic-bootstrap CIs of kappa, weighted kappa and the strictness index
    (:mod:`metaeval.analysis.clustered`; ``n_boot`` replicates, ``seed``) - the asymptotic ``*_ci`` treat
    pairs as independent and are too narrow for claims about new topics.
    """
    from metaeval.analysis.clustered import clustered_agreement_ci

    from metaeval.errors import ConfigError

    joined, info = join_labels(reference, candidate)
    cov = coverage(info)
    if joined.empty:
        raise ConfigError(
            f"label sets {reference.name!r} and {candidate.name!r} share no (qid, run_id, nugget_id) with the same "
            f"nugget text ({info['text_mismatches']} text mismatches; on 0 of {cov['total']} pairs); they do not "
            f"label the same pairs")
    m, failed = count_matrix(joined["support_ref"], joined["support_cand"], SUPPORT_ORDER)
    out = confusion_agreement(m, SUPPORT_ORDER, alpha)
    out.update(clustered_stuart_maxwell(per_topic_counts(joined, SUPPORT_ORDER)))
    out["failed"] = failed
    out["join"] = info
    out["coverage"] = cov
    if not cov["statistics"]:
        _blank(out)
        out["importance"] = None
        out["clustered"] = clustered_agreement_ci(joined, SUPPORT_ORDER, n_boot=0, seed=seed, alpha=alpha)
        return out
    out["importance"] = importance_agreement(joined, alpha)
    out["clustered"] = clustered_agreement_ci(joined, SUPPORT_ORDER, n_boot=n_boot, seed=seed, alpha=alpha)
    return out


def coverage(info: dict[str, Any]) -> dict[str, Any]:
    """Nugget-text coverage of a :func:`join_labels` report: ``{matched, total, share, note, statistics}``.

    ``note`` is ``"on k of n pairs (nugget texts differ)"`` below :data:`COVERAGE_NOTE` (else None);
    ``statistics`` is False below :data:`COVERAGE_MIN` (agreement statistics n/a).
    """
    matched = int(info["n_joined"])
    total = max(int(info.get("shared_answer_slots", 0)), matched)
    share = matched / total if total else float("nan")
    low = not total or share < COVERAGE_NOTE
    return {"matched": matched, "total": total, "share": share,
            "note": f"on {matched:,} of {total:,} pairs (nugget texts differ)" if low else None,
            "statistics": bool(total and share >= COVERAGE_MIN),
            "thresholds": {"note_below": COVERAGE_NOTE, "n/a_below": COVERAGE_MIN}}


def _blank(out: dict[str, Any]) -> None:
    """Agreement statistics -> NaN (n/a) in place; counts stay."""
    nan = float("nan")
    for key in _STATISTICS:
        if key in out:
            out[key] = nan
    for key in _INTERVALS:
        if key in out:
            out[key] = [nan, nan]
    out["statistics_note"] = (f"agreement statistics n/a: {out['coverage']['note']} - below "
                              f"{COVERAGE_MIN:.0%} of pairs match by nugget text")


def confusion_frame(agreement: dict[str, Any], candidate: str = "candidate") -> pd.DataFrame:
    """Tidy rows ``candidate, reference_label, candidate_label, count, row_share, coverage_note`` of an agreement
    dict (``coverage_note``: "on k of n pairs (nugget texts differ)" below 95% coverage, else None)."""
    order = agreement["order"]
    note = (agreement.get("coverage") or {}).get("note")
    rows = []
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            rows.append({"candidate": candidate, "reference_label": a, "candidate_label": b,
                         "count": agreement["confusion"][i][j],
                         "row_share": agreement["confusion_row_normalised"][i][j], "coverage_note": note})
    return pd.DataFrame(rows)
