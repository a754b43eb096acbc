"""Agreement statistics from a square confusion matrix of counts (rows = reference, columns = candidate).

Everything here works from the counts alone, so published matrices (the paper's Figure 6) are analysed the
same way as two label sets.  Categories are given lowest first (``not_support < partial_support < support``).
For counts ``n_ij`` with ``N = sum n_ij``, ``p_ij = n_ij / N``, row / column margins ``p_i.`` / ``p_.j``:

* exact agreement ``p_o = sum_i p_ii``.
* Cohen's kappa (Cohen 1960, Educ. Psychol. Meas. 20:37-46) ``(p_o - p_e) / (1 - p_e)``, ``p_e = sum p_i. p_.i``;
  linearly weighted kappa (Cohen 1968) with agreement weights ``1 - |i - j| / (K - 1)``.  Both from
  ``statsmodels.stats.inter_rater.cohens_kappa``; CIs ``kappa +- z_{1-alpha/2} * se`` (asymptotic se).
* Krippendorff's alpha, ordinal (Krippendorff 2004/2011, "Computing Krippendorff's alpha-reliability"): two
  coders, every unit coded by both; coincidences ``o = n + n'``, ``n_c = sum_k o_ck``, ``n.. = 2N``;
  ``delta^2_ck = (sum_{g=c..k} n_g - (n_c + n_k)/2)^2``; ``alpha = 1 - (n.. - 1) sum o_ck d_ck / sum n_c n_k d_ck``.
  Checked against the ``krippendorff`` package in the tests.
* strictness index ``P(cand < ref) - P(cand > ref) = sum_{j<i} p_ij - sum_{j>i} p_ij``: positive = the
  candidate labels lower (stricter) than the reference.  Wald CI with the multinomial variance
  ``Var = (p_L + p_U - d^2) / N``.
* Stuart-Maxwell test of marginal homogeneity (Stuart 1955, Biometrika 42:412-416; Maxwell 1970, Br. J.
  Psychiatry 116:651-655) via ``statsmodels.stats.contingency_tables.SquareTable(...).homogeneity()``.
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


def kappas(m: np.ndarray, alpha: float = 0.05) -> dict[str, Any]:
    """Cohen's kappa and linearly weighted kappa with asymptotic CIs (statsmodels)."""
    from scipy import stats
    from statsmodels.stats.inter_rater import cohens_kappa

    z = float(stats.norm.ppf(1 - alpha / 2))
    out: dict[str, Any] = {}
    import warnings

    for key, wt in (("cohen_kappa", None), ("weighted_kappa", "linear")):
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                r = cohens_kappa(m, wt=wt)
            k, se = float(r.kappa), float(r.std_kappa)
        except (ZeroDivisionError, ValueError, FloatingPointError):
            k, se = float("nan"), float("nan")
        out[key] = k
        out[f"{key}_se"] = se
        out[f"{key}_ci"] = [k - z * se, k + z * se]
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
    from scipy import stats

    m = np.asarray(m, dtype=float)
    n = m.sum()
    if n == 0:
        return {"strictness_index": float("nan"), "strictness_ci": [float("nan")] * 2, "p_lower": float("nan"), "p_higher": float("nan")}
    p_low = np.tril(m, -1).sum() / n
    p_up = np.triu(m, 1).sum() / n
    d = p_low - p_up
    se = np.sqrt(max(p_low + p_up - d * d, 0.0) / n)
    z = float(stats.norm.ppf(1 - alpha / 2))
    return {"strictness_index": float(d), "strictness_ci": [float(d - z * se), float(d + z * se)],
            "p_lower": float(p_low), "p_higher": float(p_up)}


def stuart_maxwell(m: np.ndarray) -> dict[str, float]:
    """Stuart-Maxwell marginal homogeneity test (statistic from statsmodels ``SquareTable.homogeneity``; the
    p-value is ``chi2.sf(stat, K - 1)``, exact in the far tail where ``1 - cdf`` rounds to 0).

    With no off-diagonal count the margins are identical and the statistic is 0/0: reported as 0 with p = 1.
    Otherwise NaN where the covariance is singular.
    """
    import warnings

    from statsmodels.stats.contingency_tables import SquareTable

    df = len(m) - 1
    if not (m - np.diag(np.diag(m))).any():
        return {"stuart_maxwell_stat": 0.0, "stuart_maxwell_df": df, "stuart_maxwell_p": 1.0}
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = SquareTable(m, shift_zeros=False).homogeneity()
        from scipy.stats import chi2

        # p from the survival function: statsmodels' 1 - cdf rounds p-values below ~1e-16 to 0.0
        return {"stuart_maxwell_stat": float(r.statistic), "stuart_maxwell_df": int(r.df),
                "stuart_maxwell_p": float(chi2.sf(r.statistic, r.df))}
    except (np.linalg.LinAlgError, ValueError, ZeroDivisionError):
        return {"stuart_maxwell_stat": float("nan"), "stuart_maxwell_df": df, "stuart_maxwell_p": float("nan")}


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
