"""Agreement statistics from a square confusion matrix of counts (rows = reference, columns = candidate).

Everything here works from the counts alone, so published matrices (the paper's Figure 6) are analysed the
same way as two label sets.  Categories are given lowest first (``not_support < partial_support < support``).
For counts ``n_ij`` with ``N = sum n_ij``, ``p_ij = n_ij / N``, row / column margins ``p_i.`` / ``p_.j``:

* exact agreement ``p_o = sum_i p_ii``.
* Cohen's kappa (Cohen 1960, Educ. Psychol. Meas. 20:37-46) ``(p_o - p_e) / (1 - p_e)``, ``p_e = sum p_i. p_.i``;
  linearly weighted kappa (Cohen 1968) with agreement weights ``w_ij = 1 - |i - j| / (K - 1)``.  Asymptotic
  standard errors of Fleiss, Cohen & Everitt (1969, Psychol. Bull. 72:323-327), e.g. for the simple kappa
  ``Var = [sum_i p_ii (1 - (p_i. + p_.i)(1 - k))^2 + (1 - k)^2 sum_{i!=j} p_ij (p_.i + p_j.)^2
  - (k - p_e (1 - k))^2] / ((1 - p_e)^2 N)``; CIs ``kappa +- z_{1-alpha/2} se`` clipped to [-1, 1].  Computed here in numpy
  (importing statsmodels costs seconds); the tests check equality with
  ``statsmodels.stats.inter_rater.cohens_kappa``.
* Krippendorff's alpha, ordinal (Krippendorff 2004/2011, "Computing Krippendorff's alpha-reliability"): two
  coders, every unit coded by both; coincidences ``o = n + n'``, ``n_c = sum_k o_ck``, ``n.. = 2N``;
  ``delta^2_ck = (sum_{g=c..k} n_g - (n_c + n_k)/2)^2``; ``alpha = 1 - (n.. - 1) sum o_ck d_ck / sum n_c n_k d_ck``.
  Checked against the ``krippendorff`` package in the tests.
* strictness index ``P(cand < ref) - P(cand > ref) = sum_{j<i} p_ij - sum_{j>i} p_ij``: positive = the
  candidate labels lower (stricter) than the reference.  Wald CI with the multinomial variance
  ``Var = (p_L + p_U - d^2) / N``, clipped to [-1, 1].
* Stuart-Maxwell test of marginal homogeneity (Stuart 1955, Biometrika 42:412-416; Maxwell 1970, Br. J.
  Psychiatry 116:651-655): with ``d = p_.j - p_j.`` and ``V_jj = p_j. + p_.j - 2 p_jj``, ``V_jk = -(p_jk + p_kj)``
  over the first ``K - 1`` categories, ``X^2 = N d' V^-1 d`` on ``K - 1`` df (as
  ``statsmodels.stats.contingency_tables.SquareTable(...).homogeneity()``, checked in the tests).
* Topic-clustered Stuart-Maxwell (a cluster-robust Wald test of marginal homogeneity; the plain test treats the
  labels as independent, but labels of one topic share its nuggets and answers, so on NIST lexical it gives
  4444 where the clustered one gives about 156): with ``G`` topics, per-topic margin differences ``e_g = (c_g -
  r_g)[:K-1]`` (candidate minus reference counts per category) and sizes ``n_g``, ``d = sum_g e_g / N``,
  ``u_g = e_g - n_g d`` and ``V = G / (G - 1) sum_g u_g u_g' / N^2`` (the linearised, CR1 sandwich variance of a
  ratio of cluster totals; Williams 2000, Biometrics 56:645-646; Cameron & Miller 2015, J. Hum. Resour. 50:317),
  ``X^2 = d' V^-1 d``; with few topics its chi-square reference is liberal, so the p-value is that of
  ``F = X^2 / (K - 1)`` on ``(K - 1, G - 1)`` df (as statsmodels' cluster-robust Wald test with ``use_t``), the
  chi-square p kept beside it (:func:`clustered_stuart_maxwell`).  p-values are printed as a bound where
  tiny (``metaeval.formatting.p_text``: "p < 1e-9"), never as "p 0".
* The kappa and strictness CIs treat labels as independent; labels of one topic are correlated, so they are
  too narrow for topic-level inference (``metaeval.calibration.strictness`` adds a topic-clustered CI).
* shifts: every off-diagonal cell as ``from -> to`` with its share of all labels and of its reference row, and
  the label mix of each side (``reference_mix`` = row margins, ``candidate_mix`` = column margins, percent).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from metaeval.errors import ConfigError
from metaeval.types import SUPPORT_ORDER


def _matrix(counts: Any, order: Sequence[str]) -> np.ndarray:
    m = np.asarray(counts, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] != len(order):
        raise ConfigError(f"confusion matrix must be {len(order)}x{len(order)} (order {', '.join(order)}); got shape {m.shape}")
    if (m < 0).any() or not np.isfinite(m).all():
        raise ConfigError("confusion counts must be finite and non-negative")
    return m


def _simple_kappa(p: np.ndarray) -> tuple[float, float]:
    r, c = p.sum(axis=1), p.sum(axis=0)
    pe = float((r * c).sum())
    if not 1 - pe > 0:
        return float("nan"), float("nan")
    k = (float(np.trace(p)) - pe) / (1 - pe)
    term_a = (np.diag(p) * (1 - (r + c) * (1 - k)) ** 2).sum()
    b = p * (c[:, None] + r[None, :]) ** 2
    np.fill_diagonal(b, 0.0)
    term_b = (1 - k) ** 2 * b.sum()
    term_c = (k - pe * (1 - k)) ** 2
    return k, (term_a + term_b - term_c) / (1 - pe) ** 2


def _linear_kappa(p: np.ndarray) -> tuple[float, float]:
    kk = p.shape[0]
    idx = np.arange(kk)
    w = 1.0 - np.abs(idx[:, None] - idx[None, :]) / (kk - 1)  # agreement weights
    r, c = p.sum(axis=1), p.sum(axis=0)
    pe = np.outer(r, c)
    agree_wexp = float((w * pe).sum())
    if not 1 - agree_wexp > 0:
        return float("nan"), float("nan")
    k = 1.0 - ((1 - w) * p).sum() / ((1 - w) * pe).sum()
    w_row = (c[None, :] * w).sum(axis=1)
    w_col = (r[:, None] * w).sum(axis=0)
    term_a = (p * (w - (w_col[None, :] + w_row[:, None]) * (1 - k)) ** 2).sum()
    return float(k), (term_a - (k - agree_wexp * (1 - k)) ** 2) / (1 - agree_wexp) ** 2


def kappas(m: np.ndarray, alpha: float = 0.05) -> dict[str, Any]:
    """Cohen's kappa and linearly weighted kappa with asymptotic SEs and CIs (module docstring)."""
    from scipy.special import ndtri

    z = float(ndtri(1 - alpha / 2))
    m = np.asarray(m, dtype=float)
    n = m.sum()
    out: dict[str, Any] = {}
    for key, fn in (("cohen_kappa", _simple_kappa), ("weighted_kappa", _linear_kappa)):
        with np.errstate(all="ignore"):
            k, v = fn(m / n) if n > 0 else (float("nan"), float("nan"))
            se = float(np.sqrt(v / n)) if n > 0 and v >= 0 else float("nan")
        out[key] = float(k)
        out[f"{key}_se"] = se
        out[f"{key}_ci"] = [max(-1.0, k - z * se), min(1.0, k + z * se)]  # kappa <= 1: clipped to [-1, 1]
    return out


def krippendorff_alpha_ordinal(m: Any) -> float:
    """Krippendorff's alpha (ordinal metric) of two coders from their ``K x K`` count matrix."""
    m = np.asarray(m, dtype=float)
    o = m + m.T
    n_c = o.sum(axis=1)
    n = n_c.sum()
    k = len(n_c)
    cum = np.concatenate([[0.0], np.cumsum(n_c)])
    d = np.zeros((k, k))
    for c in range(k):
        for g in range(k):
            lo, hi = min(c, g), max(c, g)
            d[c, g] = (cum[hi + 1] - cum[lo] - (n_c[c] + n_c[g]) / 2.0) ** 2
    expected = (np.outer(n_c, n_c) * d).sum()
    if n <= 1 or expected == 0:
        return float("nan")
    return float(1.0 - (n - 1) * (o * d).sum() / expected)


def strictness_index(m: Any, alpha: float = 0.05) -> dict[str, float]:
    """``P(cand < ref) - P(cand > ref)`` with its Wald CI (rows = reference, columns = candidate, lowest first)."""
    from scipy.special import ndtri

    m = np.asarray(m, dtype=float)
    n = m.sum()
    if n == 0:
        return {"strictness_index": float("nan"), "strictness_ci": [float("nan")] * 2, "p_lower": float("nan"), "p_higher": float("nan")}
    p_low = np.tril(m, -1).sum() / n
    p_up = np.triu(m, 1).sum() / n
    d = p_low - p_up
    se = np.sqrt(max(p_low + p_up - d * d, 0.0) / n)
    z = float(ndtri(1 - alpha / 2))
    return {"strictness_index": float(d), "strictness_ci": [max(-1.0, float(d - z * se)), min(1.0, float(d + z * se))],
            "p_lower": float(p_low), "p_higher": float(p_up)}


def stuart_maxwell(m: np.ndarray) -> dict[str, float]:
    """Stuart-Maxwell marginal homogeneity test (module docstring); p from ``chi2.sf(stat, K - 1)``, exact in
    the far tail where ``1 - cdf`` rounds to 0.

    With no off-diagonal count the margins are identical and the statistic is 0/0: reported as 0 with p = 1.
    NaN where the covariance is singular.
    """
    from scipy.special import chdtrc

    m = np.asarray(m, dtype=float)
    df = len(m) - 1
    if not (m - np.diag(np.diag(m))).any():
        return {"stuart_maxwell_stat": 0.0, "stuart_maxwell_df": df, "stuart_maxwell_p": 1.0}
    n = m.sum()
    p = m / n
    row, col = p.sum(axis=1)[:-1], p.sum(axis=0)[:-1]
    q = p[:-1, :-1]
    d = col - row
    v = -(q + q.T)
    np.fill_diagonal(v, row + col - 2 * np.diag(q))
    try:
        stat = float(n * d @ np.linalg.solve(v, d))
    except np.linalg.LinAlgError:
        return {"stuart_maxwell_stat": float("nan"), "stuart_maxwell_df": df, "stuart_maxwell_p": float("nan")}
    return {"stuart_maxwell_stat": stat, "stuart_maxwell_df": df, "stuart_maxwell_p": float(chdtrc(df, stat))}


def clustered_stuart_maxwell(per_topic: Any) -> dict[str, float | int | None]:
    """Topic-clustered Stuart-Maxwell (module docstring) from ``(G, K, K)`` per-topic count matrices (rows =
    reference, columns = candidate): ``stuart_maxwell_clustered_stat`` (``X^2``) / ``_df`` / ``_p`` (F reference) /
    ``_p_chi2`` / ``_topics``.

    ``None`` statistic and p with fewer than 2 topics or a singular ``V`` (e.g. every topic's margins agree);
    identical margins everywhere (``d = 0``) give 0 with p = 1."""
    from scipy.special import chdtrc, fdtrc

    c = np.asarray(per_topic, dtype=float)
    if c.ndim != 3 or c.shape[1] != c.shape[2]:
        raise ConfigError(f"clustered Stuart-Maxwell: per-topic counts must be (topics, K, K); got shape {c.shape}")
    g, k = c.shape[0], c.shape[1]
    out: dict[str, float | int | None] = {"stuart_maxwell_clustered_stat": None, "stuart_maxwell_clustered_df": k - 1,
                                          "stuart_maxwell_clustered_p": None, "stuart_maxwell_clustered_p_chi2": None,
                                          "stuart_maxwell_clustered_topics": int(g)}
    n_g = c.sum(axis=(1, 2))
    n = n_g.sum()
    if g < 2 or n == 0:
        return out
    e = (c.sum(axis=1) - c.sum(axis=2))[:, :-1]          # (G, K-1): candidate minus reference counts
    d = e.sum(axis=0) / n
    if not np.abs(d).max() > 0:
        return {**out, "stuart_maxwell_clustered_stat": 0.0, "stuart_maxwell_clustered_p": 1.0,
                "stuart_maxwell_clustered_p_chi2": 1.0}
    u = e - n_g[:, None] * d[None, :]
    v = g / (g - 1) * (u.T @ u) / n ** 2
    try:
        stat = float(d @ np.linalg.solve(v, d))
    except np.linalg.LinAlgError:
        return out
    if not np.isfinite(stat) or stat < 0:
        return out
    return {**out, "stuart_maxwell_clustered_stat": stat,
            "stuart_maxwell_clustered_p": float(fdtrc(k - 1, g - 1, stat / (k - 1))),
            "stuart_maxwell_clustered_p_chi2": float(chdtrc(k - 1, stat))}


def shifts(m: np.ndarray, order: Sequence[str]) -> pd.DataFrame:
    """One row per (reference label, candidate label) cell: count, % of all, % of the reference row."""
    n = m.sum()
    rows = []
    for i, a in enumerate(order):
        row = m[i].sum()
        for j, b in enumerate(order):
            rows.append({"reference": a, "candidate": b, "count": int(m[i, j]), "changed": i != j,
                         "direction": "lower" if j < i else ("higher" if j > i else "same"),
                         "pct_of_all": 100 * m[i, j] / n if n else float("nan"),
                         "pct_of_reference_label": 100 * m[i, j] / row if row else float("nan")})
    return pd.DataFrame(rows)


def confusion_agreement(counts: Any, order: Sequence[str] = SUPPORT_ORDER, alpha: float = 0.05,
                        ordinal: bool = True) -> dict[str, Any]:
    """All agreement statistics of a count matrix (rows = reference, columns = candidate, ``order`` lowest first).

    Returns a JSON-ready dict: ``order, n, confusion, confusion_row_normalised, exact_agreement, cohen_kappa
    (+ _se, _ci), weighted_kappa (+ _se, _ci), krippendorff_alpha, strictness_index (+ _ci, p_lower, p_higher),
    stuart_maxwell_stat/_df/_p, reference_mix, candidate_mix`` (percent per label) and ``shifts`` (records).
    """
    from metaeval.analysis.descriptive import label_mix

    order = list(order)
    m = _matrix(counts, order)
    n = m.sum()
    rows = m.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        norm = np.where(rows > 0, m / np.where(rows > 0, rows, 1), np.nan)
    out: dict[str, Any] = {
        "order": order, "n": int(n), "confusion": m.astype(int).tolist(),
        "confusion_row_normalised": [[None if np.isnan(v) else float(v) for v in r] for r in norm],
        "exact_agreement": float(np.trace(m) / n) if n else float("nan"),
    }
    nan = float("nan")
    no_pairs = {f"{k}{suffix}": (nan if suffix != "_ci" else [nan, nan]) for k in ("cohen_kappa", "weighted_kappa")
                for suffix in ("", "_se", "_ci")}
    out.update(kappas(m, alpha) if n else no_pairs)  # no valid pair (e.g. every label FAILED): NaN, not missing
    out["krippendorff_alpha"] = krippendorff_alpha_ordinal(m) if ordinal else float("nan")
    out["krippendorff_level"] = "ordinal" if ordinal else None
    out.update(strictness_index(m, alpha))
    out.update(stuart_maxwell(m))
    out["reference_mix"] = label_mix(dict(zip(order, m.sum(axis=1))))
    out["candidate_mix"] = label_mix(dict(zip(order, m.sum(axis=0))))
    out["shifts"] = shifts(m, order).to_dict(orient="records")
    return out
