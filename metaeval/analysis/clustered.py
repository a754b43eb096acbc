"""Topic-clustered bootstrap CIs for label agreement (kappa, weighted kappa, strictness index).

The asymptotic CIs of :mod:`metaeval.analysis.confusion` treat every (nugget, answer) pair as independent, but
pairs of one topic share nuggets, documents and an assessor, so those intervals are too narrow for statements
about new topics.  Here topics are the resampling unit: with per-topic count matrices ``C_t`` (rows reference,
columns candidate) and bootstrap multiplicities ``w_bt`` (``metaeval.analysis.resample.topic_weights``), each
replicate's matrix is ``M_b = sum_t w_bt C_t`` and

* Cohen's kappa ``(p_o - p_e) / (1 - p_e)`` with ``p_o = tr(M) / n`` and ``p_e = sum_i r_i c_i / n^2``;
* linearly weighted kappa with agreement weights ``a_ij = 1 - |i - j| / (K - 1)`` (Cohen 1968):
  ``p_o = sum a_ij M_ij / n``, ``p_e = sum a_ij r_i c_j / n^2``;
* the strictness index ``(sum_{i>j} M_ij - sum_{i<j} M_ij) / n`` (candidate below minus above the reference),

all vectorised over replicates; the interval is the percentile interval of the replicates (Efron & Tibshirani
1993; cluster bootstrap: Field & Welsh 2007).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from metaeval.analysis.resample import percentile_ci, topic_weights
from metaeval.types import label_codes


def per_topic_counts(joined: pd.DataFrame, order: Sequence[str], ref: str = "support_ref",
                     cand: str = "support_cand") -> tuple[list[str], np.ndarray]:
    """``(topics, C)`` with ``C[t, i, j]`` = pairs of topic ``t`` labelled ``order[i]`` by the reference and
    ``order[j]`` by the candidate (pairs with a label outside ``order``, e.g. FAILED, are left out)."""
    r = label_codes(joined[ref], order).astype(np.int64)
    c = label_codes(joined[cand], order).astype(np.int64)
    ok = (r >= 0) & (c >= 0)
    qid = joined["qid"].astype(str).to_numpy(dtype=object)[ok]
    topics, t = np.unique(qid, return_inverse=True)
    topics = [str(q) for q in topics]
    k = len(order)
    flat = (t.ravel() * k + r[ok]) * k + c[ok]
    counts = np.bincount(flat, minlength=len(topics) * k * k).reshape(len(topics), k, k).astype(float)
    return topics, counts


def agreement_statistics(m: np.ndarray) -> dict[str, np.ndarray]:
    """Kappa, linear weighted kappa and strictness index of count matrices ``m`` of shape ``(..., K, K)``."""
    m = np.asarray(m, dtype=float)
    k = m.shape[-1]
    n = m.sum(axis=(-2, -1))
    rows, cols = m.sum(axis=-1), m.sum(axis=-2)
    expected = rows[..., :, None] * cols[..., None, :]
    i, j = np.indices((k, k))
    agree = 1.0 - np.abs(i - j) / (k - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(m, axis1=-2, axis2=-1) / n
        pe = np.trace(expected, axis1=-2, axis2=-1) / n ** 2
        pow_ = (agree * m).sum(axis=(-2, -1)) / n
        pew = (agree * expected).sum(axis=(-2, -1)) / n ** 2
        lower = np.tril(np.ones((k, k)), -1)
        upper = np.triu(np.ones((k, k)), 1)
        strict = ((lower * m).sum(axis=(-2, -1)) - (upper * m).sum(axis=(-2, -1))) / n
        return {"cohen_kappa": (po - pe) / (1 - pe), "weighted_kappa": (pow_ - pew) / (1 - pew), "strictness_index": strict}


def clustered_agreement_ci(joined: pd.DataFrame, order: Sequence[str], n_boot: int = 1000, seed: int = 0,
                           alpha: float = 0.05) -> dict[str, Any]:
    """Topic-bootstrap percentile CIs: ``{cohen_kappa_ci_topic, weighted_kappa_ci_topic, strictness_ci_topic,
    n_topics, n_boot, seed}`` (NaN intervals with fewer than two topics); resamples ``topic_weights(T, n_boot,
    seed)`` on the analysis stream ``"analysis.topic_bootstrap"``."""
    topics, counts = per_topic_counts(joined, order)
    out: dict[str, Any] = {"n_topics": len(topics), "n_boot": int(n_boot), "seed": seed}
    if len(topics) < 2 or n_boot <= 0:
        for key in ("cohen_kappa", "weighted_kappa", "strictness"):
            out[f"{key}_ci_topic"] = [float("nan"), float("nan")]
        return out
    w = topic_weights(len(topics), n_boot, seed)
    reps = agreement_statistics(np.einsum("bt,tij->bij", w, counts))
    for key, name in (("cohen_kappa", "cohen_kappa"), ("weighted_kappa", "weighted_kappa"), ("strictness_index", "strictness")):
        lo, hi = percentile_ci(reps[key], alpha)
        out[f"{name}_ci_topic"] = [lo, hi]
    return out
