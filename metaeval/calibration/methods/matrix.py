"""Prevalence (matrix) correction: recover each run's human label mix from its judge label mix.

Fit the misclassification matrix ``M[h, j] = P(judge = j | human = h)`` (rows: not_support, partial_support,
support; columns: the same plus FAILED) on calibration pairs, per importance stratum, shrunk toward the pooled
matrix (``M_s[h] = (n_s[h, :] + kappa * M[h, :]) / (n_s[h] + kappa)``).  If ``M`` is the same for every run,
the expected judge mix of a group of pairs is ``E[q] = M^T p`` where ``p`` is its human mix, so

    p_hat = argmin_p || M^T p - q ||^2   subject to  p >= 0,  sum(p) = t

(Rogan & Gladen 1978, "Estimating prevalence from the results of a screening test", Am. J. Epidemiol. 107;
multiclass adjusted classify-and-count, Forman 2008, "Quantifying counts and costs via classification",
Data Min. Knowl. Disc. 17).  The constrained least-squares problem is solved exactly by enumerating the seven
supports of the 3-simplex (the optimum is the best feasible equality-constrained solution), vectorised over
groups; ``tests`` check it against ``scipy.optimize.minimize(method="SLSQP")``.

Run scores are mixes with *run weights*: the run's ``q`` is ``sum_i omega_i e(j_i)`` with ``omega_i = f_i /
(D_answer T_run)`` (see ``pairs``), so ``p_hat[support]`` is the corrected strict run score and ``p_hat[support]
+ 0.5 p_hat[partial]`` the partial one, separately for the vital family (V, V_strict), all nuggets (A,
A_strict) and the weighted family (W, W_strict).  Each importance stratum is corrected with its own ``M_s``
and the strata are summed.

Clipping at the simplex boundary biases the constrained estimate when a label is rare (here human
partial_support, about 3-7% of pairs, whose ``M`` row is nearly a mix of the other two): the simulation
harness measures this, and ``matrix_unconstrained`` (the same model with the linear, unbiased inversion whose
mixes may leave [0, 1]) is registered alongside for comparison.

Standard error (delta method, inequality constraints ignored): with ``K`` the linear map of the equality-
constrained solution, ``Var(p_hat) = K Var(q) K^T`` where judge-label noise gives ``Var(q) = sum_i omega_i^2
sum_h pi_h (diag(M_h) - M_h M_h^T)`` (``pi`` = the corrected mix), plus the variance of ``p_hat`` over draws
of ``M`` from its Dirichlet posterior (calibration-sample uncertainty).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Sequence

import numpy as np

from metaeval.calibration.methods.base import (KAPPA, MODEL_VERSION, ArrayPrediction, CalibrationMethod, check_training,
                                               normal_ci, register)
from metaeval.calibration.methods.posterior import IMP_ORDER, JUDGE_ORDER, _count, judge_codes4
from metaeval.calibration.pairs import FAMILIES, METRIC_SPEC, METRICS, Pairs
from metaeval.types import SUPPORT_ORDER

_SUPPORTS = [s for k in (3, 2, 1) for s in combinations(range(3), k)]


def _kkt_maps(sub: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The KKT solve behind every map: for ``sub`` (..., m, k) (the columns of ``A`` on a support), ``P_k`` (..., k,
    m) and ``r_k`` (..., k) with ``p_S = P_k q + r_k t`` minimising ``||sub p_S - q||`` s.t. ``sum(p_S) = t``.  A stack
    is solved by one ``pinv`` call; numpy evaluates each matrix of a stack with the routine a single-matrix call
    uses, so stacking moves no number (``tests/unit/test_calibration_fastpaths.py``)."""
    k = sub.shape[-1]
    subT = np.swapaxes(sub, -1, -2)
    kkt = np.zeros(sub.shape[:-2] + (k + 1, k + 1))
    kkt[..., :k, :k] = subT @ sub
    kkt[..., :k, k] = 1.0
    kkt[..., k, :k] = 1.0
    inv = np.linalg.pinv(kkt)
    return inv[..., :k, :k] @ subT, inv[..., :k, k]


def _eq_solution_map(A: np.ndarray, support: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Linear map of min ||A p - q|| s.t. sum(p) = t, p_k = 0 off ``support``: ``p = P q + r t``."""
    S = list(support)
    Pk, rk = _kkt_maps(A[:, S])
    P = np.zeros((3, A.shape[0]))
    r = np.zeros(3)
    P[S] = Pk
    r[S] = rk
    return P, r


def _eq_solution_map_batch(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_eq_solution_map` on the full support for a stack of matrices ``A`` (B, m, 3) at once."""
    return _kkt_maps(A)


def support_maps_stack(As: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_eq_solution_map` of every matrix of ``As`` (G, m, 3) for every support in ``_SUPPORTS`` (the full
    support first), as stacked arrays ``P`` (G, supports, 3, m) and ``r`` (G, supports, 3).

    The maps depend on the matrix only, so one apply computes them once per stratum and reuses them for every
    family and grouping; the supports of one size go to :func:`_kkt_maps` as one stack (three solves in all)."""
    As = np.asarray(As, dtype=float)
    G, m, _ = As.shape
    P = np.zeros((G, len(_SUPPORTS), 3, m))
    r = np.zeros((G, len(_SUPPORTS), 3))
    for k in (3, 2, 1):
        idx = [i for i, S in enumerate(_SUPPORTS) if len(S) == k]
        Pk, rk = _kkt_maps(np.stack([As[:, :, list(_SUPPORTS[i])] for i in idx], axis=1))  # (G, n, m, k)
        for j, i in enumerate(idx):
            S = list(_SUPPORTS[i])
            P[:, i, S] = Pk[:, j]
            r[:, i, S] = rk[:, j]
    return P, r


def support_maps(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`support_maps_stack` of one matrix ``A`` (m, 3): ``P`` (supports, 3, m), ``r`` (supports, 3)."""
    P, r = support_maps_stack(np.asarray(A, dtype=float)[None])
    return P[0], r[0]


def simplex_lstsq(A: np.ndarray, q: np.ndarray, t: np.ndarray | float = 1.0, constrained: bool = True,
                  maps: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Vectorised ``argmin ||A p - q||^2`` s.t. ``p >= 0``, ``sum p = t``; ``A`` (m, 3), ``q`` (G, m) -> (G, 3).

    Every support's equality-constrained solution is computed at once; the answer is, per group, the feasible one
    with the lowest residual (the first such in ``_SUPPORTS`` order on ties within 1e-15).
    ``constrained=False`` drops ``p >= 0`` (linear Rogan-Gladen inversion: unbiased, may leave the simplex).
    ``maps``: precomputed :func:`support_maps` of ``A`` (computed here when None; with ``constrained=False`` only
    the full support, the first, is read)."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    t = np.broadcast_to(np.asarray(t, dtype=float), q.shape[:1])
    if not constrained:
        if maps is not None:
            P, r = maps[0][0], maps[1][0]
        else:
            P, r = _eq_solution_map(A, (0, 1, 2))
        return q @ P.T + t[:, None] * r[None, :]
    Ps, rs = maps if maps is not None else support_maps(A)
    p_all = q @ np.swapaxes(Ps, 1, 2) + t[None, :, None] * rs[:, None, :]      # (supports, G, 3)
    tol = 1e-12 * max(1.0, float(np.abs(t).max(initial=0.0)))
    feasible = (p_all >= -tol).all(axis=2)                                      # (supports, G)
    res = ((p_all @ A.T - q) ** 2).sum(axis=2)                                 # (supports, G)
    res = np.where(feasible, res, np.inf)
    choice = np.full(q.shape[0], -1)
    best_res = np.full(q.shape[0], np.inf)
    for i in range(len(Ps)):  # in support order: a later support replaces only a lower residual
        better = res[i] < best_res - 1e-15
        choice = np.where(better, i, choice)
        best_res = np.where(better, res[i], best_res)
    best = np.clip(p_all[np.maximum(choice, 0), np.arange(q.shape[0])], 0.0, None)
    best[choice < 0] = np.nan  # no feasible support (only for non-finite input)
    return best


def fit_matrix(judge_codes: np.ndarray, human: np.ndarray, strata: np.ndarray, kappa: float = KAPPA) -> dict:
    """Count and shrink ``M`` (pooled and per importance stratum); see the module docstring."""
    j = judge_codes4(judge_codes)
    n_pool = _count((human, j), (3, 4))
    prior = np.array([0.5, 0.5, 0.5, 0.0])
    pooled = (n_pool + prior) / (n_pool.sum(axis=1, keepdims=True) + prior.sum())
    n_s = _count((strata, human, j), (3, 3, 4))
    den = n_s.sum(axis=2, keepdims=True) + kappa
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.where(den > 0, (n_s + kappa * pooled[None]) / np.where(den > 0, den, 1.0), pooled[None])
    return {"pooled": pooled, "pooled_counts": n_pool, "strata": per, "strata_counts": n_s}


@register
class MatrixCorrection(CalibrationMethod):
    name = "matrix"
    display = "matrix"
    gives_ci = True
    constrained = True
    description = "constrained inversion of P(judge | human) per run (multiclass Rogan-Gladen / adjusted classify-and-count)"

    def fit_pairs(self, judge: Pairs, human: np.ndarray, kappa: float = KAPPA, **_: Any) -> dict:
        ok = check_training(judge, human)
        f = fit_matrix(judge.sup[ok], np.asarray(human)[ok].astype(np.int64), judge.imp[ok].astype(np.int64), kappa)
        return {
            "method": self.name, "version": MODEL_VERSION, "kappa": kappa, "n_pairs": int(ok.sum()),
            "constrained": self.constrained,
            "human_order": list(SUPPORT_ORDER), "judge_order": JUDGE_ORDER, "importance_order": IMP_ORDER,
            "rows": "human label", "columns": "judge label",
            "pooled": {"counts": f["pooled_counts"].astype(int).tolist(), "p_judge_given_human": f["pooled"].tolist()},
            "by_importance": {imp: {"counts": f["strata_counts"][k].astype(int).tolist(),
                                    "p_judge_given_human": f["strata"][k].tolist()} for k, imp in enumerate(IMP_ORDER)},
        }

    #: run scores are corrected on the run's own pairs (not averaged from the answers'): ``answers=False`` skips these
    answers_optional = True

    def apply_pairs(self, model: dict, judge: Pairs, metrics: Sequence[str] = METRICS, level: float = 0.95,
                    rng: np.random.Generator | None = None, draws: int = 100,
                    point_only: bool = False, answers: bool = True) -> ArrayPrediction:
        """See :meth:`CalibrationMethod.apply_pairs`; ``answers=False``: run scores only (``answers`` left empty;
        the answer-level and run-level corrections are separate solves, so the run scores are the same)."""
        Ms = np.array([model["by_importance"][imp]["p_judge_given_human"] for imp in IMP_ORDER])  # (3, 3, 4)
        j = judge_codes4(judge.sup)
        s = judge.imp.astype(np.int64)
        nr, na = len(judge.run_ids), judge.n_answers
        prun = judge.pair_run()
        M_draws = None
        if rng is not None and draws > 0 and not point_only:
            counts = np.array([model["by_importance"][imp]["counts"] for imp in IMP_ORDER], dtype=float)
            pooled = np.array(model["pooled"]["p_judge_given_human"])
            conc = counts + float(model["kappa"]) * pooled[None]
            conc = np.where(conc > 0, conc, 1e-9)
            g = rng.gamma(np.broadcast_to(conc, (draws,) + conc.shape))
            M_draws = g / g.sum(axis=-1, keepdims=True)
        pred = ArrayPrediction(answers={}, run={})
        mixes: dict[str, tuple] = {}
        con = bool(model.get("constrained", True))
        # everything that depends on the model only, once per apply (not per family and grouping)
        pre = self._precompute(Ms, M_draws, con, cov=not point_only)
        for family in FAMILIES:
            if not any(METRIC_SPEC[m][0] == family for m in metrics):
                continue
            p_ans = None
            if answers:
                f = judge.family_weight(family)
                d = judge.denominators(family)[judge.ans]
                w_ans = np.where(d > 0, f / np.where(d > 0, d, 1.0), 0.0)
                p_ans = self._correct(Ms, judge.ans, w_ans, j, s, na, None, con, pre, want_cov=False)[0]
            mixes[family] = (p_ans, *self._correct(Ms, prun, judge.run_weights(family), j, s, nr, M_draws, con, pre,
                                                   want_cov=not point_only))
        cvec = {True: np.array([0.0, 0.0, 1.0]), False: np.array([0.0, 0.5, 1.0])}
        has = np.bincount(judge.ans_run, minlength=nr) > 0
        for m in metrics:
            family, strict = METRIC_SPEC[m]
            p_ans, p_run, cov_run = mixes[family]
            c = cvec[strict]
            if p_ans is not None:
                pred.answers[m] = p_ans @ c
            est = np.where(has, p_run @ c, np.nan)
            pred.run[m] = est
            if point_only:
                continue
            se = np.sqrt(np.maximum(np.einsum("i,gij,j->g", c, cov_run, c), 0.0))
            pred.se[m] = se
            pred.lo[m], pred.hi[m] = normal_ci(est, se, level)
        return pred

    @staticmethod
    def _precompute(Ms: np.ndarray, M_draws: np.ndarray | None, constrained: bool = True,
                    cov: bool = True) -> dict[str, list]:
        """Per importance stratum: the support maps of ``A = M_k^T`` (every support when ``constrained``, else the
        full support only: the linear inversion uses no other), the label-noise blocks (when ``cov``) and, with
        draws, the full-support maps of every drawn matrix (functions of the model only; one apply reuses them
        for every family and grouping)."""
        As = np.swapaxes(Ms, 1, 2)  # A_k = M_k^T, (3, 4, 3)
        if constrained:
            P, r = support_maps_stack(As)
            maps = [(P[k], r[k]) for k in range(3)]
        else:
            maps = [tuple(a[None] for a in _eq_solution_map(As[k], (0, 1, 2))) for k in range(3)]
        pre: dict[str, list] = {"maps": maps}
        if cov:
            pre["sig_h"] = [np.stack([np.diag(Ms[k][h]) - np.outer(Ms[k][h], Ms[k][h]) for h in range(3)])
                            for k in range(3)]
        if M_draws is not None:
            pre["boot"] = [_eq_solution_map_batch(np.swapaxes(M_draws[:, k], 1, 2)) for k in range(3)]
        return pre

    @staticmethod
    def _correct(Ms: np.ndarray, group: np.ndarray, w: np.ndarray, j: np.ndarray, s: np.ndarray, size: int,
                 M_draws: np.ndarray | None = None, constrained: bool = True, pre: dict | None = None,
                 want_cov: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Corrected human mix per group (size, 3) and its covariance (size, 3, 3; None unless ``want_cov``)."""
        if pre is None:
            pre = MatrixCorrection._precompute(Ms, M_draws, constrained, cov=want_cov)
        p_tot = np.zeros((size, 3))
        cov = np.zeros((size, 3, 3)) if want_cov else None
        boot = None if M_draws is None or not want_cov else np.zeros((M_draws.shape[0], size, 3))
        for k in range(3):
            sel = s == k
            if not sel.any():
                continue
            # q[g, j] = sum of w over the stratum's pairs of group g with judge label j (bincount adds in pair
            # order, as np.add.at did)
            q = np.bincount(group[sel] * 4 + j[sel], weights=w[sel], minlength=size * 4).reshape(size, 4)
            t = q.sum(axis=1)
            A = Ms[k].T  # (4, 3): E[q] = M^T p
            p = simplex_lstsq(A, q, t, constrained, maps=pre["maps"][k])
            p_tot += p
            if not want_cov:
                continue
            w2 = np.bincount(group[sel], weights=w[sel] ** 2, minlength=size)
            pi = np.clip(p, 0.0, None) / np.maximum(np.clip(p, 0.0, None).sum(axis=1), 1e-300)[:, None]
            sig_h = pre["sig_h"][k]  # (3, 4, 4)
            var_q = w2[:, None, None] * np.einsum("gh,hab->gab", pi, sig_h)
            P = pre["maps"][k][0][0]  # the full support's map
            cov += np.einsum("ia,gab,jb->gij", P, var_q, P)
            if boot is not None:
                Pb, rb = pre["boot"][k]  # (B, 3, m), (B, 3)
                boot += np.einsum("gm,bim->bgi", q, Pb) + t[None, :, None] * rb[:, None, :]
        if boot is not None:
            dev = boot - boot.mean(axis=0, keepdims=True)
            cov += np.einsum("bgi,bgj->gij", dev, dev) / max(boot.shape[0] - 1, 1)
        return p_tot, cov


@register
class MatrixUnconstrained(MatrixCorrection):
    name = "matrix_unconstrained"
    display = "matrix (free)"
    constrained = False
    description = "linear Rogan-Gladen inversion of P(judge | human) per run (unbiased; mixes may leave [0, 1])"
