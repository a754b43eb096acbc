"""Which of several candidates (judges, prompts, strategies) agrees better with one reference: paired differences.

For candidates ``a`` and ``b`` judged against the same reference, a statistic ``s`` (tau at the run, per-topic and
pooled levels on each metric; Cohen's kappa, linearly weighted kappa and exact agreement of the support labels) is
compared by its difference ``d = s_a - s_b`` with a **paired topic bootstrap** (Efron & Tibshirani 1993; Sakai
2006): the same resampled topics for both sides, ``d*_b = s_a(w_b) - s_b(w_b)`` for every row ``w_b`` of one
topic-multiplicity matrix ``W`` (:func:`metaeval.analysis.resample.topic_weights`, stream ``analysis.seed``).
Interval: the percentile interval of ``d*``; two-sided p-value inverting it,
``p = min(1, 2 min((1 + #{d* <= 0}) / (B + 1), (1 + #{d* >= 0}) / (B + 1)))`` (``B`` = replicates where both sides
are defined), so ``p < alpha`` exactly when the interval excludes 0 (up to the +1 terms); the smallest attainable
p is ``2 / (B + 1)``.  **Holm-adjusted** p-values (Holm 1979; :func:`metaeval.analysis.runpairs.holm_adjusted`)
over the pairs compared, one family per (metric, statistic, level); ``better`` names the candidate the difference
favours when its adjusted p is below ``alpha`` (empty: no detectable difference).

**One set of replicates per candidate (O(cells), not O(pairs)).**  The replicates of a candidate's statistics are
computed once, under weights every candidate shares, and kept as vectors (:class:`Replicated`); a pair's ``d*`` is
then a subtraction.  The weights: ``topic_weights(T, B, seed)`` depends on the number of topics only, so two
candidates on the same topic list already share the resamples their own CIs used (the common case: a sweep's
cells), and those replicates are reused.  A candidate on another topic list is re-bootstrapped once under the
shared universe ``U`` (the union of the compared candidates' topics): ``W_U = topic_weights(|U|, B, seed)``
restricted to its topics (a resample of ``U``; topics it lacks contribute nothing to it), so every pair is paired
on the same topic draws.  Each statistic is computed on the candidate's own cells, so ``d`` is the difference of
the two values the tau and agreement tables print.

**Calibrated error** (:func:`calibration_rows`): when the candidates' studies hold calibration results
(``calibration.json``), the held-out run-level MAE of raw scores and the nested MAE of the whole calibration
procedure (``selection.nested_mae``: selection refitted inside every outer fold, so no topic scores a fit it took
part in) are compared by ``d = MAE_a - MAE_b`` with ``se = sqrt(se_a^2 + se_b^2)`` from the folds' SEs, a normal
interval ``d +- z se`` and ``p = 2 Phi(-|d| / se)``.  The per-fold errors are not stored, so this SE treats the
two cells' fold errors as independent; on the same folds they are positively correlated, so the interval is
conservative (too wide).  Lower MAE is better.

**Pairs.**  ``"all"`` (every two candidates), ``"none"``, explicit ``[(a, b), ...]`` (names), or the grid's natural
neighbours (:func:`neighbour_pairs`: the same judge with another prompt or another strategy, one axis at a time;
what the study compares by default, ``R`` judges x ``P`` prompts x ``S`` strategies give ``R (S C(P,2) + P C(S,2))``
pairs instead of ``C(RPS, 2)``).  :func:`pair_lines` gives one plain-language line per pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval.analysis.resample import percentile_ci, topic_weights

__all__ = ["AGREEMENT_STATISTICS", "COLUMNS", "Replicated", "agreement_replicates", "calibration_rows",
           "finish", "neighbour_pairs", "pair_lines", "pair_rows", "paired_difference", "resolve_pairs"]

#: label-agreement statistics compared (higher = agrees better)
AGREEMENT_STATISTICS = ("cohen_kappa", "weighted_kappa", "exact_agreement")
#: statistics where a lower value is better (the rest: higher is better)
LOWER_IS_BETTER = frozenset({"raw_mae", "calibrated_mae"})
#: the comparison table's columns
COLUMNS = ["candidate_a", "candidate_b", "metric", "statistic", "level", "value_a", "value_b", "diff", "ci_low",
           "ci_high", "p_value", "p_holm", "n_boot", "better", "interval"]
PAIRED = "paired topic bootstrap, percentile"
UNPAIRED = "normal, unpaired fold SEs (conservative)"
LEVEL_WORDS = {"run": "run-level tau", "topic_avg": "per-topic tau", "pooled": "pooled tau"}
STAT_WORDS = {"cohen_kappa": "Cohen's kappa", "weighted_kappa": "weighted kappa", "exact_agreement": "exact agreement",
              "raw_mae": "raw held-out MAE", "calibrated_mae": "calibrated (nested) MAE"}


@dataclass
class Replicated:
    """One statistic of one candidate: its value, its replicates (``(B,)``, NaN where undefined) and the topic
    list the replicates were drawn over (``topic_weights(len(topics), B, seed)``, possibly restricted)."""

    value: float
    reps: np.ndarray
    topics: tuple[str, ...]


def paired_difference(value_a: float, value_b: float, reps_a: np.ndarray, reps_b: np.ndarray,
                      alpha: float = 0.05) -> dict[str, float]:
    """``{diff, ci_low, ci_high, p_value, n_boot}`` of ``value_a - value_b`` from replicates on the same resamples
    (see the module docstring; NaN replicates on either side are left out)."""
    ds = np.asarray(reps_a, dtype=float) - np.asarray(reps_b, dtype=float)
    ds = ds[~np.isnan(ds)]
    n = len(ds)
    p = float(min(1.0, 2 * min((1 + np.sum(ds <= 0)) / (n + 1), (1 + np.sum(ds >= 0)) / (n + 1)))) if n else float("nan")
    lo, hi = percentile_ci(ds, alpha)
    return {"diff": float(value_a - value_b), "ci_low": lo, "ci_high": hi, "p_value": p, "n_boot": int(n)}


# ------------------------------------------------------------------ pairs
def neighbour_pairs(names: Sequence[str], grid: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The grid's natural neighbours: pairs with the same judge that differ in exactly one of prompt and strategy
    (``grid[i]``: ``judge``, ``prompt``, ``strategy`` of ``names[i]``; a missing key counts as equal)."""
    out = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            gi, gj = grid[i], grid[j]
            if gi.get("judge") != gj.get("judge"):
                continue
            differ = [k for k in ("prompt", "strategy") if gi.get(k) != gj.get(k)]
            if len(differ) == 1:
                out.append((str(names[i]), str(names[j])))
    return out


def resolve_pairs(pairs: Any, names: Sequence[str]) -> list[tuple[int, int]]:
    """``pairs`` (``"all"``, ``"none"``/None, or ``[(name_a, name_b), ...]``) as index pairs into ``names``."""
    from metaeval.errors import ConfigError

    if pairs is None or (isinstance(pairs, str) and pairs == "none"):
        return []
    if isinstance(pairs, str):
        if pairs != "all":
            raise ConfigError(f"pairs={pairs!r}: expected 'all', 'none' or a list of (candidate, candidate) names")
        return [(a, b) for a in range(len(names)) for b in range(a + 1, len(names))]
    index = {str(n): k for k, n in enumerate(names)}
    out = []
    for pair in pairs:
        a, b = (str(x) for x in pair)
        for x in (a, b):
            if x not in index:
                raise ConfigError(f"pairs: no candidate named {x!r} (candidates: {', '.join(map(str, names))})")
        if a == b:
            raise ConfigError(f"pairs: {a!r} compared with itself")
        if (index[a], index[b]) not in out:
            out.append((index[a], index[b]))
    return out


# ------------------------------------------------------------------ replicates under shared weights
class SharedWeights:
    """``topic_weights(len(U), B, seed)`` of a topic universe ``U``, and its columns for a candidate's topics."""

    def __init__(self, universe: Iterable[str], n_boot: int, seed: int):
        self.topics = tuple(sorted(set(universe)))
        self.w = topic_weights(len(self.topics), n_boot, seed)
        self._col = {t: i for i, t in enumerate(self.topics)}

    def columns(self, topics: Sequence[str]) -> np.ndarray:
        return self.w[:, [self._col[t] for t in topics]]


def on_shared(stats: Sequence[Mapping[str, Replicated]], recompute: Any, n_boot: int, seed: int) -> list[dict]:
    """Per candidate, its statistics with replicates every candidate shares: candidates on the universe's topic
    list (the union of all theirs) keep theirs; the others get ``recompute(k, weights)`` (a ``{name:
    Replicated}`` under ``weights`` = the universe's weights restricted to candidate ``k``'s topics), once each."""
    lists = {r.topics for s in stats for r in s.values()}
    if len(lists) <= 1:
        return [dict(s) for s in stats]
    shared = SharedWeights([t for tl in lists for t in tl], n_boot, seed)
    out = []
    for k, s in enumerate(stats):
        if not s or all(r.topics == shared.topics for r in s.values()):
            out.append(dict(s))
            continue
        topics = next(iter(s.values())).topics
        out.append(recompute(k, shared.columns(topics)))
    return out


def agreement_counts(reference: Any, candidate: Any) -> tuple[list[str], np.ndarray]:
    """Per-topic support-label count matrices of the pairs both label sets label with the same nugget text
    (:func:`metaeval.analysis.agreement.join_labels`, :func:`metaeval.analysis.clustered.per_topic_counts`)."""
    from metaeval.analysis.agreement import join_labels
    from metaeval.analysis.clustered import per_topic_counts
    from metaeval.types import SUPPORT_ORDER

    joined, _ = join_labels(reference, candidate)
    return per_topic_counts(joined, SUPPORT_ORDER)


def agreement_replicates(topics: Sequence[str], counts: np.ndarray, weights: np.ndarray) -> dict[str, Replicated]:
    """Kappa, weighted kappa and exact agreement of ``counts`` (``(T, K, K)``) and their replicates under
    ``weights`` (``(B, T)``): ``M_b = sum_t w_bt C_t`` (:func:`metaeval.analysis.clustered.agreement_statistics`;
    exact agreement ``tr(M_b) / n_b``)."""
    from metaeval.analysis.clustered import agreement_statistics

    def stats(m: np.ndarray) -> dict[str, np.ndarray]:
        out = agreement_statistics(m)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["exact_agreement"] = np.trace(m, axis1=-2, axis2=-1) / m.sum(axis=(-2, -1))
        return out

    point = stats(counts.sum(axis=0))
    reps = stats(np.einsum("bt,tij->bij", weights, counts))
    return {k: Replicated(float(point[k]), np.asarray(reps[k], dtype=float), tuple(topics)) for k in AGREEMENT_STATISTICS}


# ------------------------------------------------------------------ the table
def pair_rows(name_a: str, name_b: str, a: Mapping[str, Replicated], b: Mapping[str, Replicated], metric: str,
              statistic: str | None, alpha: float) -> list[dict[str, Any]]:
    """One row per statistic both sides have: ``statistic`` given (``"tau"``: the keys of ``a`` are levels) or
    ``None`` (the keys are the statistics; level ``labels``)."""
    rows = []
    for key in a:
        if key not in b:
            continue
        d = paired_difference(a[key].value, b[key].value, a[key].reps, b[key].reps, alpha)
        rows.append({"candidate_a": name_a, "candidate_b": name_b, "metric": metric,
                     "statistic": statistic or key, "level": key if statistic else "labels",
                     "value_a": a[key].value, "value_b": b[key].value, **d, "interval": PAIRED})
    return rows


def _mae(doc: Mapping[str, Any] | None) -> dict[str, tuple[float, float]]:
    """``{raw_mae: (mean, se), calibrated_mae: (mean, se)}`` of a calibration result, what is there with a usable
    SE (``selection.raw_mae`` or the raw candidate's held-out MAE; ``selection.nested_mae``).  An SE of 0 (raw
    scores need no fit, so repeated splits of one procedure can give raw the same error every time) says nothing
    about new topics: such a figure is left out rather than given a zero-width interval."""
    out: dict[str, tuple[float, float]] = {}
    if not isinstance(doc, Mapping) or doc.get("error"):
        return out
    sel = doc.get("selection") or {}
    cands = doc.get("candidates") or {}
    raw_cand = cands.get("raw") or cands.get("none") or {}
    raw = sel.get("raw_mae") or (raw_cand.get("held_out") or {}).get("mae") or {}
    for key, d in (("raw_mae", raw), ("calibrated_mae", sel.get("nested_mae") or {})):
        if isinstance(d, Mapping) and d.get("mean") is not None and d.get("se") is not None and float(d["se"]) > 1e-9:
            out[key] = (float(d["mean"]), float(d["se"]))
    return out


def calibration_rows(pairs: Sequence[tuple[str, str]], calibration: Mapping[str, Any],
                     alpha: float = 0.05) -> list[dict[str, Any]]:
    """Rows comparing the held-out errors of each pair's calibration results (``calibration[name]``: a
    ``calibration.json`` document; see the module docstring for the unpaired normal interval)."""
    from scipy.special import ndtr, ndtri

    z = float(ndtri(1 - alpha / 2))
    rows = []
    for a, b in pairs:
        ea, eb = _mae(calibration.get(a)), _mae(calibration.get(b))
        metric = str((calibration.get(a) or {}).get("metric") or "v_strict")
        if metric != str((calibration.get(b) or {}).get("metric") or "v_strict"):
            continue  # calibrated on different primary metrics: not comparable
        for key in ("raw_mae", "calibrated_mae"):
            if key not in ea or key not in eb:
                continue
            (ma, sa), (mb, sb) = ea[key], eb[key]
            d, se = ma - mb, math.hypot(sa, sb)
            p = float(2 * ndtr(-abs(d) / se)) if se > 0 else (1.0 if d == 0 else 0.0)
            rows.append({"candidate_a": a, "candidate_b": b, "metric": metric, "statistic": key, "level": "run",
                         "value_a": ma, "value_b": mb, "diff": d, "ci_low": d - z * se, "ci_high": d + z * se,
                         "p_value": p, "n_boot": 0, "interval": UNPAIRED})
    return rows


def finish(rows: Sequence[Mapping[str, Any]] | pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """The comparison table (:data:`COLUMNS`): Holm-adjusted p per (metric, statistic, level) family over the pairs
    and ``better`` (the favoured candidate where the adjusted p is below ``alpha``, else empty)."""
    from metaeval.analysis.runpairs import holm_adjusted

    df = pd.DataFrame(list(rows) if not isinstance(rows, pd.DataFrame) else rows)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    df = df.drop(columns=[c for c in ("p_holm", "better") if c in df.columns]).reset_index(drop=True)
    df["p_holm"] = np.nan
    for _, idx in df.groupby(["metric", "statistic", "level"], sort=False).groups.items():
        df.loc[idx, "p_holm"] = holm_adjusted(df.loc[idx, "p_value"].to_numpy(dtype=float))
    lower = df["statistic"].isin(LOWER_IS_BETTER)
    a_wins = np.where(lower, df["diff"] < 0, df["diff"] > 0)
    sig = df["p_holm"] < alpha
    df["better"] = np.where(sig & a_wins, df["candidate_a"], np.where(sig & (df["diff"] != 0), df["candidate_b"], ""))
    return df[COLUMNS]


# ------------------------------------------------------------------ plain language
def describe(row: Mapping[str, Any], flip: bool = False) -> str:
    """``run-level tau on v_strict +0.214 [+0.071, +0.357], Holm p 0.004`` for one row (``flip``: as ``b - a``)."""
    what = LEVEL_WORDS.get(row["level"], "") + f" on {row['metric']}" if row["statistic"] == "tau" \
        else STAT_WORDS.get(row["statistic"], row["statistic"])
    if row["statistic"] in ("raw_mae", "calibrated_mae"):
        what += f" on {row['metric']}"
    d, lo, hi = row["diff"], row["ci_low"], row["ci_high"]
    if flip:
        d, lo, hi = -d, -hi, -lo
    from metaeval.formatting import NA, fixed

    return (f"{what} {fixed(d, signed=True, missing=NA)} [{fixed(lo, signed=True, missing=NA)}, "
            f"{fixed(hi, signed=True, missing=NA)}], Holm p {fixed(row['p_holm'], 3, missing=NA)}")


def pair_lines(table: pd.DataFrame, metric: str, alpha: float = 0.05,
               differs: Mapping[tuple[str, str], str] | None = None) -> list[str]:
    """One plain-language line per pair of ``table`` (:func:`finish`'s), on ``metric`` (its tau levels and
    calibrated error) and the label agreement (Cohen's kappa): which candidate agrees better with the reference
    and by how much (the differences as the better side minus the other), or that no difference is detectable at
    ``alpha`` after Holm.  ``differs[(a, b)]``: what the
    two candidates differ in (``prompt v1 vs v2_json``), shown first."""
    if table is None or table.empty:
        return []
    lines = []
    main = table[((table["statistic"] == "tau") & (table["metric"] == metric))
                 | (table["statistic"] == "cohen_kappa")
                 | ((table["statistic"] == "calibrated_mae") & (table["metric"] == metric))]
    for (a, b), g in main.groupby(["candidate_a", "candidate_b"], sort=False):
        head = f"{a} vs {b}" + (f" ({differs[(a, b)]})" if differs and (a, b) in differs else "")
        rows = g.to_dict(orient="records")
        for_a = [r for r in rows if r["better"] == a]
        for_b = [r for r in rows if r["better"] == b]
        rest = [r for r in rows if not r["better"]]
        if not for_a and not for_b:
            first = next((r for r in rows if r["level"] == "run"), rows[0])
            lines.append(f"{head}: no detectable difference in agreement with the reference (Holm-adjusted, alpha "
                         f"{alpha:g}; {a} minus {b}): {describe(first)}.")
            continue
        parts = []
        for who, other, wins in ((a, b, for_a), (b, a, for_b)):
            if wins:
                parts.append(f"{who} agrees better with the reference ({who} minus {other}): "
                             + "; ".join(describe(r, flip=who == b) for r in wins))
        text = f"{head}: " + ". ".join(parts)
        if for_a and for_b:
            text = f"{head}: mixed. " + ". ".join(parts)
        if rest:
            text += "; no detectable difference in " + ", ".join(
                LEVEL_WORDS.get(r["level"], "") if r["statistic"] == "tau" else STAT_WORDS.get(r["statistic"], "")
                for r in rest)
        lines.append(text + ".")
    return lines
