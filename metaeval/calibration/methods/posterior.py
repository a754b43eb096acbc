"""Label-posterior correction: score each answer by its expected *human* credit given the judge's labels.

Fit ``P(human = h | judge = j)`` on calibration pairs, stratified by nugget importance (vital / okay / FAILED)
and optionally by run or answer-length bin.  The judge label ``j`` ranges over not_support, partial_support,
support and FAILED (a FAILED judge label is data: the model learns what humans said when the judge failed).

Shrinkage (Dirichlet prior centred on the parent level; an empirical-Bayes smoother, cf. Gelman et al.,
*Bayesian Data Analysis*, ch. 5)::

    pi_0(h)          = (n_h + 1) / (N + 3)                             human marginal (add-one)
    pi(h | j)        = (n_jh + kappa * pi_0(h)) / (n_j + kappa)        pooled
    pi_s(h | j)      = (n_sjh + kappa * pi(h | j)) / (n_sj + kappa)    importance stratum s
    pi_sg(h | j)     = (n_sgjh + kappa * pi_s(h | j)) / (n_sgj + kappa)  optional group g (run / length bin)

A stratum with few pairs stays near its parent; one with many follows its own counts.  Groups unseen in
calibration (a new run) use ``pi_s``.  Expected credit per pair: strict ``P(h = support | j)``, partial
``P(support | j) + 0.5 P(partial | j)``; answer and run scores follow by linearity (see ``pairs``).  Parameter
uncertainty: the run score's variance over Dirichlet draws ``pi* ~ Dir(n + kappa * parent)``.

Caveat (prior shift): ``P(h | j)`` depends on the human label mix, so a run whose true mix differs from the
calibration mix is pulled toward the pooled mix (Saerens et al. 2002); the matrix correction does not have
this problem when ``P(j | h)`` is stable across runs.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from metaeval.calibration.methods.base import (KAPPA, MODEL_VERSION, ArrayPrediction, CalibrationMethod, check_training,
                                               expected_credit_prediction, register)
from metaeval.calibration.pairs import METRICS, Pairs
from metaeval.errors import ConfigError
from metaeval.types import IMPORTANCE_LEVELS, SUPPORT_LEVELS, SUPPORT_ORDER

JUDGE_ORDER = list(SUPPORT_LEVELS)  # not_support, partial_support, support, FAILED (codes 0..3)
IMP_ORDER = list(IMPORTANCE_LEVELS)  # okay, vital, FAILED (codes 0..2, as pairs.IMP_CODES)


def judge_codes4(sup: np.ndarray) -> np.ndarray:
    """Judge support codes with FAILED as category 3."""
    return np.where(sup < 0, 3, sup).astype(np.int64)


def _count(index: tuple[np.ndarray, ...], shape: tuple[int, ...]) -> np.ndarray:
    """Counts of index tuples in an array of ``shape`` (as ``np.add.at(zeros, index, 1)``, via one bincount)."""
    flat = np.ravel_multi_index(tuple(np.asarray(i, dtype=np.int64) for i in index), shape)
    return np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape).astype(float)


def _shrink(counts: np.ndarray, prior: np.ndarray, kappa: float) -> np.ndarray:
    """``(n + kappa * prior) / (n_total + kappa)``; the prior itself where there is nothing to go on."""
    den = counts.sum(axis=-1, keepdims=True) + kappa
    prior = np.broadcast_to(prior, counts.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (counts + kappa * prior) / np.where(den > 0, den, 1.0), prior)


def _groups(judge: Pairs, by: str | None, model: dict | None = None) -> tuple[list[str], np.ndarray, list | None]:
    """Group name per pair and the list of names; for ``length`` the bin edges (fitted, or from the model)."""
    if by is None:
        return [], np.zeros(len(judge.sup), dtype=np.int64), None
    if by == "run":
        names = list(judge.run_ids)
        return names, judge.pair_run().astype(np.int64), None
    if by == "length":
        length = judge.ans_len[judge.ans]
        if model is None:
            edges = np.unique(np.quantile(judge.ans_len, [1 / 3, 2 / 3])).tolist()
        else:
            edges = model["strata"]["edges"]
        idx = np.digitize(length, edges)
        return [f"bin{i}" for i in range(len(edges) + 1)], idx.astype(np.int64), edges
    raise ConfigError(f"posterior strata {by!r}; expected none, run or length")


@register
class PosteriorCorrection(CalibrationMethod):
    name = "posterior"
    display = "posterior"
    gives_ci = True
    description = "expected human credit from P(human | judge), stratified by importance with shrinkage"

    def fit_pairs(self, judge: Pairs, human: np.ndarray, strata: str | None = None, kappa: float = KAPPA, **_: Any) -> dict:
        ok = check_training(judge, human)
        h = np.asarray(human)[ok].astype(np.int64)
        j = judge_codes4(judge.sup)[ok]
        s = judge.imp[ok].astype(np.int64)
        marg = (np.bincount(h, minlength=3) + 1.0) / (len(h) + 3.0)
        n_pool = _count((j, h), (4, 3))
        pooled = _shrink(n_pool, marg[None, :], kappa)
        n_imp = _count((s, j, h), (3, 4, 3))
        by_imp = _shrink(n_imp, pooled[None], kappa)
        model: dict = {
            "method": self.name, "version": MODEL_VERSION, "kappa": kappa,
            "human_order": list(SUPPORT_ORDER), "judge_order": JUDGE_ORDER, "importance_order": IMP_ORDER,
            "n_pairs": int(ok.sum()), "human_marginal": marg.round(6).tolist(),
            "pooled": {"counts": n_pool.astype(int).tolist(), "posterior": pooled.tolist()},
            "by_importance": {imp: {"counts": n_imp[k].astype(int).tolist(), "posterior": by_imp[k].tolist()}
                              for k, imp in enumerate(IMP_ORDER)},
            "strata": {"by": strata},
        }
        if strata:
            names, g, edges = _groups(judge, strata)
            g = g[ok]
            n_g = _count((g, s, j, h), (len(names), 3, 4, 3))
            post = _shrink(n_g, by_imp[None], kappa)
            model["strata"]["edges"] = edges
            model["strata"]["groups"] = {
                name: {imp: {"counts": n_g[gi, k].astype(int).tolist(), "posterior": post[gi, k].tolist()}
                       for k, imp in enumerate(IMP_ORDER)}
                for gi, name in enumerate(names) if n_g[gi].sum() > 0}
        return model

    def apply_pairs(self, model: dict, judge: Pairs, metrics: Sequence[str] = METRICS, level: float = 0.95,
                    rng: np.random.Generator | None = None, draws: int = 100,
                    point_only: bool = False) -> ArrayPrediction:
        kappa = float(model["kappa"])
        by_imp = np.array([model["by_importance"][imp]["posterior"] for imp in IMP_ORDER])  # (3, 4, 3)
        n_imp = np.array([model["by_importance"][imp]["counts"] for imp in IMP_ORDER], dtype=float)
        # table index 0 = importance level; 1.. = fitted groups
        tables, counts = [by_imp], [n_imp]
        g_idx = np.zeros(len(judge.sup), dtype=np.int64)
        by = model["strata"].get("by")
        if by:
            names, g, _ = _groups(judge, by, model)
            fitted = model["strata"]["groups"]
            lookup = np.zeros(len(names), dtype=np.int64)
            for gi, name in enumerate(names):
                if name in fitted:
                    tables.append(np.array([fitted[name][imp]["posterior"] for imp in IMP_ORDER]))
                    counts.append(np.array([fitted[name][imp]["counts"] for imp in IMP_ORDER], dtype=float))
                    lookup[gi] = len(tables) - 1
            g_idx = lookup[g]
        table = np.stack(tables)  # (G, 3, 4, 3)
        s = judge.imp.astype(np.int64)
        j = judge_codes4(judge.sup)
        prob = table[g_idx, s, j]
        prob_draws = None
        if rng is not None and draws > 0 and not point_only:
            # Dirichlet(n + kappa * parent): importance level's parent is the pooled posterior
            pooled = np.array(model["pooled"]["posterior"])
            conc = [n_imp + kappa * pooled[None]] + [c + kappa * by_imp for c in counts[1:]]
            conc = np.stack(conc)
            gam = rng.gamma(np.broadcast_to(conc, (draws,) + conc.shape))
            tab_b = gam / gam.sum(axis=-1, keepdims=True)
            prob_draws = tab_b[:, g_idx, s, j]
        pred = expected_credit_prediction(judge, prob, prob_draws, metrics, level, point_only)
        pred.notes["strata"] = by
        return pred
