"""Which runs can be told apart: simultaneous intervals for all pairwise differences of prediction-powered run
scores, each run's rank-set, indistinguishable groups, and Kendall's tau with the whole-track human leaderboard.

**Setting and estimand.**  A track has ``N`` topics; the judge scored all of them (``J``, topics x runs), humans
labelled a random subset ``L`` of ``n`` topics (``H`` there).  The target is the *human* run score over the whole
track, ``theta_r = mean_{t in T} H_tr`` (the human leaderboard on all topics), and its ranking.  The
prediction-powered estimate (PPI, Angelopoulos et al. 2023, Science 382:669; PPI++, Angelopoulos, Duchi & Zrnic
2023, arXiv:2311.01453, with ``lambda`` power-tuned and pooled over runs as
:func:`metaeval.calibration.scorelevel.power_tuned_lambda`) is

    theta_hat_r = lambda mean_{t in T} J_tr + mean_{t in L} (H_tr - lambda J_tr),

which is exactly the calibrated leaderboard's ``human_estimate`` (human labels on ``L``, the corrected judge on the
judge-only topics ``T \\ L``).  Its error is ``mean_L D_r - mean_T D_r`` with ``D = H - lambda J``: the error of a
simple random sample mean without replacement, variance ``S^2_D (1/n - 1/N)`` (Cochran 1977, thm 2.2).  The judge
scores on the judge-only topics are observed, not sampled, for this estimand, so only the labelled topics are
resampled; the finite-population factor ``1 - n/N`` enters through the standard error.  (Resampling the judge-only
topics too would target a population of *new* topics, a wider estimand than the published leaderboard's.)

**Simultaneous pairwise intervals (max-t topic bootstrap).**  For the ``m = R (R - 1) / 2`` pairs ``a < b``,
``delta_ab = theta_a - theta_b`` is estimated by ``d_ab = theta_hat_a - theta_hat_b`` with standard error
``se_ab = s_ab sqrt(1/n - 1/N)``, ``s^2_ab`` the sample variance over ``L`` of ``D_ta - D_tb`` (guarded against
chance-small values by :func:`metaeval.calibration.scorelevel.moderated_variance` over pairs; it only widens).
A bootstrap replicate draws ``n`` labelled topics with replacement, re-tunes ``lambda`` and recomputes every
``d*_ab`` and ``s*_ab``; its studentized deviations are ``t*_ab = (d*_ab - d_ab) / (s*_ab / sqrt(n))`` (the
finite-population factor cancels in a studentized statistic).  With ``c`` the ``1 - alpha`` quantile of
``max_ab |t*_ab|``, the intervals ``d_ab +- c se_ab`` hold *all at once* with probability about ``1 - alpha``
(max-t / single-step studentized bootstrap: Westfall & Young 1993; Romano & Wolf 2005, "Exact and approximate
stepdown methods for multiple hypothesis testing", JASA 100:94-108).  They are intersected with [-1, 1].  Run ``a``
**beats** ``b`` (``a > b``) when the interval of ``delta_ab`` lies above 0; ``a ~ b`` when it holds 0.

**Rank-sets** (Mogstad, Romano, Shaikh & Wilhelm 2024, "Inference for ranks with applications to mobility across
neighbourhoods and academic achievement across countries", REStud 91:476-518; Klein, Wright & Wieczorek 2020,
"A joint confidence region for an overall ranking of populations", JRSS-C 69:589-606; Al Mohamad, van Zwet,
Solari & Goeman 2022, simultaneous confidence intervals for ranks): run ``r``'s rank-set is
``[1 + #{s : s > r}, R - #{s : r > s}]`` (1 = best).  When every pairwise interval holds, every run's true rank
``1 + #{s : theta_s > theta_r}`` lies in its rank-set, so the rank-sets hold jointly with probability at least
that of the intervals.

**Groups** (compact letter display; Piepho 2004, "An algorithm for a letter-based representation of all-pairwise
comparisons", J. Comput. Graph. Stat. 13:456-466, insert-absorb): letters such that two runs share a letter iff
they cannot be told apart... as far as a letter display can say it: runs sharing a letter are pairwise ``~``; two
runs with no letter in common differ.  Letters are ordered from the best run down (``a`` holds the top run)
(:mod:`metaeval.calibration.letters`).

**Tau with the whole-track human leaderboard.**  For a published ranking ``S`` (any point method), the estimand
is ``tau_b(S, theta)``; the plug-in ``tau_hat = tau_b(S, theta_hat)`` is biased (noise in ``theta_hat`` lowers it
for a fixed ``S``; it is 1 when ``S`` is the PPI ranking itself).  In the bootstrap world the truth is ``theta_hat``
and the estimate ``theta_w = theta_hat + f (theta_hat* - theta_hat)`` with the rescaling factor of Rao & Wu (1988,
"Resampling inference with complex survey data", JASA 83:231-241, sec. 2 for simple random sampling without
replacement, ``n`` draws) ``f = sqrt(n (1 - n/N) / (n - 1))``: a bootstrap mean of ``n`` topics drawn with
replacement has variance ``s^2 (n - 1) / n^2``, the estimate's error ``s^2 (1/n - 1/N)``, so ``f^2`` makes the world's
error the estimate's size (the factor ``n / (n - 1)`` is 1.25 at 5 labelled topics: without it the interval was too
short there, coverage 0.85 for the raw judge on NIST); ``S_w`` is ``S`` (fixed, e.g. the raw judge) or ``theta_w``
(when ``S`` is the PPI ranking).
The world's error ``e* = tau_b(S_w, theta_w) - tau_b(S_w, theta_hat)`` gives the basic-bootstrap estimate
``tau_hat - median(e*)`` and interval ``[tau_hat - q_{1-alpha/2}(e*), tau_hat - q_{alpha/2}(e*)]`` (Davison & Hinkley
1997, sec. 5.2), clipped to [-1, 1].  For ``S`` = the PPI ranking this is the percentile interval of
``tau_b(theta_w, theta_hat)``.  For a ranking treated as fixed (the raw judge, a shown leaderboard other than
PPI++'s, which may even be fitted on the labelled topics) that interval can under-cover (0.77-0.80 on simulated
tracks with run-biased judges, 0.91-0.92 on NIST): no narrow interval can be valid near ties.

**Bounds holding for any ranking (simultaneous; ``bounds`` of :func:`track_tau`).**  Per pair ``a < b`` let
``u_ab = d_ab / se_ab`` (observed, signed) and ``Z_ab = (d_ab - delta_ab) / se_ab`` (its centred studentized
error), mimicked in the bootstrap by ``|t*_ab|`` above.  For a ranking ``S`` and a pair with ``s_ab = sign(S_a -
S_b) != 0``, the pair is *concordant* when ``s_ab delta_ab > 0``; for any other (null) pair ``s_ab u_ab <= s_ab
(d_ab - delta_ab) / se_ab <= |Z_ab|``.  Let ``M*_b,(k)`` be the ``(k+1)``-th largest ``|t*_ab|`` of replicate
``b`` (``k = 0, 1, ...``; over the grid ``K`` = 0..7, then ``round(1.4^e)`` below ``m``, :func:`bound_grid`).
Critical values ``c_k``, calibrated jointly over ``K``: with ``rank_b,k`` the rank of ``M*_b,(k)`` among the ``B``
replicates' (column ``k``) and ``depth_b = max_k rank_b,k``, ``g`` = the ``ceil(level B)``-th smallest depth and
``c_k`` = the ``g``-th smallest ``M*_(k)``; then at least ``level`` of the replicates have ``M*_b,(k) <= c_k`` for
every ``k`` at once, and the bootstrap says ``P(for all k in K: the (k+1)-th largest |Z| <= c_k) ~ level``
(simultaneous bounds on the number of true discoveries, k-FWER by resampling: Meinshausen 2006, "False
discovery control for multiple tests of association under general dependence", Scand. J. Statist. 33:227-237;
Hemerik, Solari & Goeman 2019, "Permutation-based simultaneous confidence bounds for the false discovery
proportion", Biometrika 106:635-649; closed testing, Goeman & Solari 2011, "Multiple testing for exploratory
research", Stat. Sci. 26:584-597).  On that event at most ``k`` null pairs have ``s u > c_k``, so for every
``k``: ``#concordant >= #{pairs: s u > c_k} - k``, and ``L_c = max(0, max_k (#{s u > c_k} - k))`` bounds the
concordant pairs from below; ``L_d`` likewise with ``-s u`` the discordant ones.  With ``P = #{pairs: s_ab !=
0}`` and the human leaderboard taken as untied (``tau_b = (C - D) / sqrt(P m)``),

    tau_b(S, theta) in [(2 L_c - P) / sqrt(P m), (P - 2 L_d) / sqrt(P m)]  (within [-1, 1]).

The event does not involve ``S``: it covers every ranking at once, so the bounds hold for a fixed, a fitted or a
data-dependent ranking alike (the PPI++ estimate itself, a composite, a leaderboard chosen after looking).  They
are wide (held back on NIST with 15 of 21 topics labelled: about 0.9; held-back coverage 1.00 in every check,
docs/calibration.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import math

import numpy as np

from metaeval.errors import ConfigError

__all__ = ["PairwiseIntervals", "TrackSample", "bound_critical_values", "bound_grid", "pairwise_intervals",
           "rank_sets", "tau_bounds", "track_tau"]

#: the stream of the rank-set bootstrap (``random_streams.stream(seed, RANKSET_STREAM)``)
RANKSET_STREAM = "calibration.rank_sets"

#: what :func:`track_tau` says about the interval of a ranking treated as fixed (the raw judge's, or a shown
#: leaderboard other than PPI++'s): its basic bootstrap assumes the error of ``tau_b(S, theta_hat)`` looks the same
#: around ``theta_hat`` as around ``theta``, which fails when ``S`` disagrees with the human ranking on many close
#: pairs (then it can under-cover at any number of topics), and it ignores any fit of ``S`` on the labelled topics
FIXED_RANKING_CAVEAT = ("basic-bootstrap interval for a ranking treated as fixed: it can under-cover when that ranking "
                        "disagrees with the human one on many close run pairs, and when it was fitted on the same "
                        "labelled topics; the bounds holding for any ranking (bounds) are the valid statement "
                        "(docs/calibration.md)")

#: what :func:`track_tau`'s ``bounds`` are (``bounds_method``), with the level and the number of pairs filled in
BOUNDS_METHOD = ("{level:.0%} bounds holding for any ranking at once (fixed, fitted or data-dependent): "
                 "simultaneous lower bounds on the concordant and discordant pairs among all {pairs} run pairs "
                 "(bootstrap k-FWER critical values of the studentized pairwise errors; Meinshausen 2006, Hemerik, "
                 "Solari & Goeman 2019), the human leaderboard taken as untied")


@dataclass(frozen=True)
class TrackSample:
    """The per-topic scores a prediction-powered leaderboard uses.

    ``H_l`` / ``J_l``: (n labelled topics x R runs) human and judge scores on the labelled topics; ``J_all``:
    (N x R) judge scores on every topic of the track (the labelled ones included); ``lam``: ``"tuned"`` (PPI++,
    re-tuned in every replicate), or a fixed float (1 = classic PPI, 0 = the human mean on ``L`` alone).  Runs
    must have a score on every topic (NaN refused with the run named)."""

    H_l: np.ndarray
    J_l: np.ndarray
    J_all: np.ndarray
    runs: Sequence[str]
    lam: float | str = "tuned"

    def __post_init__(self) -> None:
        H, J, JA = (np.asarray(a, dtype=float) for a in (self.H_l, self.J_l, self.J_all))
        if H.ndim != 2 or H.shape != J.shape or JA.ndim != 2 or JA.shape[1] != H.shape[1]:
            raise ConfigError(f"rank sets: H_l {H.shape}, J_l {J.shape} and J_all {JA.shape} must be (topics x runs) "
                              "with the same runs")
        if len(self.runs) != H.shape[1]:
            raise ConfigError(f"rank sets: {len(self.runs)} run names for {H.shape[1]} columns")
        for name, a in (("human", H), ("judge (labelled)", J), ("judge", JA)):
            bad = ~np.isfinite(a).all(axis=0)
            if bad.any():
                raise ConfigError(f"rank sets: run {self.runs[int(np.flatnonzero(bad)[0])]!r} has no {name} score on "
                                  f"some topic; rank sets need every run on every topic")
        if H.shape[0] < 2:
            raise ConfigError(f"rank sets: need at least 2 human-labelled topics; have {H.shape[0]}")
        if JA.shape[0] < H.shape[0]:
            raise ConfigError(f"rank sets: the track ({JA.shape[0]} topics) is smaller than the labelled sample ({H.shape[0]})")
        if H.shape[1] < 2:
            raise ConfigError("rank sets: need at least 2 runs")
        object.__setattr__(self, "H_l", H)
        object.__setattr__(self, "J_l", J)
        object.__setattr__(self, "J_all", JA)

    @property
    def n(self) -> int:
        return int(self.H_l.shape[0])

    @property
    def N(self) -> int:
        return int(self.J_all.shape[0])

    @property
    def fpc(self) -> float:
        """``1 - n / N``: the finite-population factor of the error variance."""
        return 1.0 - self.n / self.N


def _lambdas(s: TrackSample, w: np.ndarray) -> np.ndarray:
    """Per replicate (rows of topic weights ``w``, (B, n)): the pooled power-tuned lambda
    ``sum_r Cov_w(H_r, J_r) / sum_r Var_w(J_r)`` clipped to [0, 1] (as ``power_tuned_lambda``), or the fixed one."""
    if s.lam != "tuned":
        return np.full(w.shape[0], float(s.lam))
    tot = w.sum(axis=1, keepdims=True)
    hm, jm = (w @ s.H_l) / tot, (w @ s.J_l) / tot                        # (B, R)
    cov = (w @ (s.H_l * s.J_l)) / tot - hm * jm
    var = (w @ (s.J_l ** 2)) / tot - jm ** 2
    num, den = cov.sum(axis=1), var.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 1e-15, np.clip(num / np.where(den > 1e-15, den, 1.0), 0.0, 1.0), 1.0)


def _estimates(s: TrackSample, w: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(theta (B, R), pair variances (B, m))`` for topic weights ``w`` (B, n) and lambdas (B,):
    ``theta = lam mean_T J + mean_L^w (H - lam J)`` and the ``ddof = 1`` weighted variance over ``L`` of the pairwise
    differences of ``D = H - lam J``."""
    i, j = np.triu_indices(s.H_l.shape[1], k=1)
    n = s.n
    jbar = s.J_all.mean(axis=0)
    thetas, pvars = [], []
    for b in range(w.shape[0]):
        D = s.H_l - lam[b] * s.J_l                                       # (n, R)
        wb = w[b] / n
        mean = wb @ D
        C = (D - mean).T @ ((D - mean) * w[b][:, None]) / (n - 1)        # (R, R) weighted covariance, ddof 1
        thetas.append(lam[b] * jbar + mean)
        dg = np.diag(C)
        pvars.append(np.maximum(dg[i] + dg[j] - 2.0 * C[i, j], 0.0))
    return np.array(thetas), np.array(pvars)


def _guard(pv: np.ndarray, n: int) -> np.ndarray:
    """Pair variances guarded by the moderated variance over pairs (rows: replicates); only ever widens.

    Row ``b`` is :func:`metaeval.calibration.scorelevel.moderated_variance` of ``pv[b]`` with every pair's ``n``
    topics.  Rows whose variances are all finite (every row, unless a replicate's topics show no spread) are done
    in one pass: the pooled ``s0`` of each is its row's sum of ``(n - 1) var`` (numpy sums each row of a C-contiguous
    array with the routine it uses for that row alone) over the same sum of ``n - 1``, and the rest is elementwise,
    so every value is bit-identical to the row-by-row call (``tests/unit/test_ranksets_guard.py``), which the other
    rows still get; in one work array (16 MB temporaries cost 0.03-0.9 s of page faults: docs/benchmarks.md)."""
    from metaeval.calibration.scorelevel import PRIOR_DF, VAR_FLOOR, moderated_variance

    pv = np.atleast_2d(np.asarray(pv, dtype=float))
    m = pv.shape[-1]
    nn = np.full(m, float(n))
    d = max(float(n) - 1.0, 0.0)
    whole = np.isfinite(pv).all(axis=1)
    if d <= 0 or m == 0 or not whole.any():
        return np.stack([moderated_variance(row, nn) for row in pv])
    dd = np.full(m, d)
    every = bool(whole.all())
    P = pv if every and pv.flags.c_contiguous else np.ascontiguousarray(pv[whole])
    A = np.multiply(dd, P)                                             # d var_r (A: the one work array)
    s0 = np.add.reduce(A, axis=1) / dd.sum()                           # per row: sum_r d var_r / sum_r d
    np.add(PRIOR_DF * s0[:, None], A, out=A)
    np.divide(A, PRIOR_DF + dd, out=A)                                 # the moderated variance
    np.maximum(P, A, out=A)
    np.maximum(A, VAR_FLOOR, out=A)
    if every:
        return A
    out = np.empty_like(pv)
    out[whole] = A
    for b in np.flatnonzero(~whole):
        out[b] = moderated_variance(pv[b], nn)
    return out


@dataclass
class PairwiseIntervals:
    """Simultaneous intervals for every ``theta_a - theta_b`` (``a < b`` in ``runs`` order), see the module."""

    runs: list[str]
    estimate: np.ndarray       # (R,) theta_hat
    pair_i: np.ndarray         # (m,)
    pair_j: np.ndarray
    diff: np.ndarray           # (m,) d_ab
    se: np.ndarray             # (m,) se_ab
    lo: np.ndarray
    hi: np.ndarray
    critical: float            # c: the 1 - alpha quantile of max |t*|
    level: float
    n_boot: int
    lam: float
    n_labelled: int
    n_topics: int
    replicates: np.ndarray = field(repr=False)  # (B, R) theta_hat* (for the tau interval)
    #: (B, m) the replicates' centred studentized |t*_ab| (for the tau bounds); None: not kept
    abs_t: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: (B, n) the replicates' topic weights (multinomial counts over the labelled topics), to refit a shown
    #: leaderboard that depends on them in the same replicates (:func:`linear_leaderboard`)
    weights: np.ndarray | None = field(default=None, repr=False, compare=False)
    _critical_cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def compact(self, level: float | None = None) -> "PairwiseIntervals":
        """This object with the bounds' critical values at ``level`` (default its own) computed and the (B, m)
        ``abs_t`` dropped: what :func:`tau_bounds` needs at that level, at a fraction of the size (to send it from a
        worker process: 64 MB of ``abs_t`` for 90 runs and 2,000 replicates)."""
        level = self.level if level is None else level
        if self.abs_t is not None and level not in self._critical_cache:
            self._critical_cache[level] = bound_critical_values(self.abs_t, level)
        self.abs_t = None
        return self

    def decision(self, a: int, b: int) -> int:
        """+1 when run ``a`` beats ``b``, -1 when ``b`` beats ``a``, 0 when they cannot be told apart."""
        if a == b:
            return 0
        k = self._index(min(a, b), max(a, b))
        sign = 1 if a < b else -1
        if self.lo[k] > 0:
            return sign
        if self.hi[k] < 0:
            return -sign
        return 0

    def decisions(self) -> np.ndarray:
        """(R, R) matrix of :meth:`decision` (+1 row beats column, -1 column beats row, 0 ~)."""
        R = len(self.runs)
        out = np.zeros((R, R), dtype=int)
        up = np.where(self.lo > 0, 1, np.where(self.hi < 0, -1, 0))
        out[self.pair_i, self.pair_j] = up
        out[self.pair_j, self.pair_i] = -up
        return out

    def _index(self, a: int, b: int) -> int:
        R = len(self.runs)
        return int(a * R - a * (a + 1) // 2 + (b - a - 1))


def pairwise_intervals(sample: TrackSample, level: float = 0.95, n_boot: int = 2000,
                       seed: int | np.random.Generator = 0, studentize: bool = True) -> PairwiseIntervals:
    """Max-t simultaneous intervals for all pairwise run differences of the whole-track human score (module).

    ``studentize=False`` divides every replicate's deviation by the *observed* ``s_ab`` instead of its own
    ``s*_ab`` (max-z; a comparison in ``experiments/ranksets``)."""
    from metaeval.analysis.resample import topic_weights

    if not 0 < level < 1:
        raise ConfigError(f"rank sets: level {level} must be in (0, 1)")
    if n_boot < 100:
        raise ConfigError(f"rank sets: n_boot {n_boot}: expected at least 100 replicates")
    n = sample.n
    one = np.ones((1, n))
    lam0 = _lambdas(sample, one)
    theta, pv = _estimates(sample, one, lam0)
    pv = _guard(pv, n)[0]
    w = topic_weights(n, n_boot, seed, RANKSET_STREAM)
    lam_b = _lambdas(sample, w)
    theta_b, pv_b = _estimates(sample, w, lam_b)
    pv_b = _guard(pv_b, n)
    i, j = np.triu_indices(len(sample.runs), k=1)
    d = theta[0, i] - theta[0, j]
    t_b = theta_b[:, i]                  # |d*_ab - d_ab| / sqrt(v_ab / n), step by step in one (B, m) array
    np.abs(np.subtract(np.subtract(t_b, theta_b[:, j], out=t_b), d, out=t_b), out=t_b)
    scale = np.divide(pv_b, n, out=pv_b) if studentize else pv[None, :] / n
    np.divide(t_b, np.sqrt(scale, out=scale), out=t_b)
    crit = float(np.quantile(t_b.max(axis=1), level))
    se = np.sqrt(pv * (1.0 / n - 1.0 / sample.N))
    lo, hi = np.clip(d - crit * se, -1.0, 1.0), np.clip(d + crit * se, -1.0, 1.0)
    return PairwiseIntervals(list(sample.runs), theta[0], i, j, d, se, lo, hi, crit, level, n_boot, float(lam0[0]), n,
                             sample.N, theta_b, t_b, weights=w)


def rank_sets(pw: PairwiseIntervals) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` rank of every run (1 = best): ``1 + #{s beats r}`` and ``R - #{r beats s}``."""
    dec = pw.decisions()
    R = len(pw.runs)
    return 1 + (dec == -1).sum(axis=1), R - (dec == 1).sum(axis=1)


def world_factor(n: int, N: int) -> float:
    """Rao & Wu's (1988) rescaling factor ``sqrt(n (1 - n/N) / (n - 1))`` for ``n`` of ``N`` topics (module
    docstring): ``f^2 Var*(mean of n draws with replacement) = s^2 (1/n - 1/N)``, the without-replacement error."""
    if not 2 <= n <= N:
        raise ConfigError(f"rank sets: {n} labelled of {N} topics: need 2 <= n <= N")
    return float(np.sqrt(n * (1.0 - n / N) / (n - 1)))


def _world(pw: PairwiseIntervals) -> np.ndarray:
    """``theta_w = theta_hat + f (theta_hat* - theta_hat)``, ``f`` = :func:`world_factor`: replicates at the error's
    size."""
    f = world_factor(pw.n_labelled, pw.n_topics)
    return pw.estimate[None, :] + f * (pw.replicates - pw.estimate[None, :])


def bootstrap_rank_intervals(pw: PairwiseIntervals, level: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The *naive* per-run rank interval: the percentile interval of each run's rank over the replicates at the
    error's size (``theta_w``, see :func:`track_tau`), one run at a time (no simultaneity) - shown beside the
    rank-sets for comparison."""
    from metaeval.analysis.ranks import rank_array

    level = pw.level if level is None else level
    rk = np.stack([rank_array(row) for row in _world(pw)])
    a = (1 - level) / 2
    return np.floor(np.quantile(rk, a, axis=0)).astype(int), np.ceil(np.quantile(rk, 1 - a, axis=0)).astype(int)


def bound_grid(m: int) -> np.ndarray:
    """The 0-based ranks ``k`` at which :func:`bound_critical_values` calibrates: 0..7, then ``round(1.4^e)``
    (``e >= 6``) below ``m`` pairs (a geometric grid: slightly tighter bounds than every ``k``, whose joint
    calibration spends the level on ranks no count reaches)."""
    ks = set(range(8))
    e = 6
    while 1.4 ** e < m:
        ks.add(int(round(1.4 ** e)))
        e += 1
    return np.array(sorted(k for k in ks if k < m), dtype=int)


def bound_critical_values(abs_t: np.ndarray, level: float, ks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(ks, c)``: the critical values ``c_k`` of the ``(k+1)``-th largest ``|Z|`` over pairs, jointly over ``ks``
    (default :func:`bound_grid`), from the replicates' ``|t*|`` (``abs_t``, (B, m)) - the module's depth
    calibration: ``c_k`` = the ``g``-th smallest of column ``k`` of ``M*`` (row ``b``: replicate ``b``'s ``|t*|``
    sorted down), ``g`` = the ``ceil(level B)``-th smallest ``depth_b = max_k rank_b,k``.  A ``|t*|`` that is NaN
    (0 / 0) counts as infinite (never below a critical value)."""
    t = np.asarray(abs_t, dtype=float)
    if np.isnan(t).any():
        t = np.where(np.isnan(t), np.inf, t)
    B, m = t.shape
    ks = bound_grid(m) if ks is None else np.asarray(ks, dtype=int)
    M = np.sort(t, axis=1)[:, m - 1 - ks]                                        # (B, K): each row sorted once
    ranks = M.argsort(axis=0, kind="stable").argsort(axis=0, kind="stable") + 1  # rank within each column
    depth = ranks.max(axis=1)
    g = int(np.sort(depth)[int(math.ceil(level * B)) - 1])
    return ks, np.sort(M, axis=0)[g - 1]


def tau_bounds(pw: PairwiseIntervals, shown: Sequence[float], level: float | None = None) -> tuple[float | None, float | None]:
    """Bounds on ``tau_b(shown, theta)`` holding at ``level`` for every ranking at once (module docstring):
    ``[(2 L_c - P) / sqrt(P m), (P - 2 L_d) / sqrt(P m)]``, ``(None, None)`` when every shown score ties (tau_b
    undefined) or the replicates' ``|t*|`` were not kept."""
    level = pw.level if level is None else level
    S = np.asarray(shown, dtype=float)
    if level not in pw._critical_cache:
        if pw.abs_t is None:
            return None, None
        pw._critical_cache[level] = bound_critical_values(pw.abs_t, level)
    ks, c = pw._critical_cache[level]
    m = len(pw.diff)
    sgn = np.sign(S[pw.pair_i] - S[pw.pair_j])
    on = sgn != 0
    P = int(on.sum())
    if P == 0:
        return None, None
    with np.errstate(divide="ignore", invalid="ignore"):
        u = (sgn * pw.diff / pw.se)[on]                  # s_ab u_ab (NaN: d = se = 0, never above a c_k)

    def lower(x: np.ndarray) -> int:
        """``max(0, max_k #{x > c_k} - k)``: pairs with ``s delta > 0`` (for ``x = s u``) on the event."""
        down = np.sort(-x[~np.isnan(x)])                 # -x ascending (x descending)
        above = np.searchsorted(down, -c, side="left")   # #{x > c_k}
        return max(0, int((above - ks).max()))

    den = math.sqrt(P * m)
    lo, hi = (2 * lower(u) - P) / den, (P - 2 * lower(-u)) / den
    return float(min(1.0, max(-1.0, lo))), float(min(1.0, max(-1.0, hi)))


#: the shown leaderboards :func:`linear_leaderboard` refits in every replicate (linear in the labelled topics' ``H - J``)
LINEAR = ("composite", "ppi")


def linear_leaderboard(sample: TrackSample, pw: PairwiseIntervals, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(scores (R,), replicates (B, R))`` of a shown leaderboard that is linear in the labelled topics' ``H - J``:
    ``S = mean_T J + c mean_L (H - J)``, where the composite (human labels on ``L``, the raw judge elsewhere:
    ``(sum_L H + sum_{T \\ L} J) / N``) has ``c = n / N`` and classic PPI's whole-track estimate
    (``(sum_L H + n_U (mean_U J + mean_L (H - J))) / N``) has ``c = 1``; the replicates put ``pw``'s topic weights
    on ``L`` (``mean_L^w``), the same resamples as the PPI++ replicates, so :func:`track_tau` can refit the shown
    ranking inside each of them."""
    if name not in LINEAR:
        raise ConfigError(f"track tau: {name!r} is not a linear leaderboard ({', '.join(LINEAR)})")
    if pw.weights is None:
        raise ConfigError("track tau: these pairwise intervals kept no topic weights to refit a leaderboard on")
    c = sample.n / sample.N if name == "composite" else 1.0
    D = sample.H_l - sample.J_l
    jbar = sample.J_all.mean(axis=0)
    return jbar + c * D.mean(axis=0), jbar[None, :] + c * (pw.weights @ D) / sample.n


def track_tau(pw: PairwiseIntervals, shown: Sequence[float] | str, level: float | None = None,
              shown_replicates: np.ndarray | None = None) -> dict[str, Any]:
    """Kendall's tau-b between the ``shown`` leaderboard and the human leaderboard on all topics (module docstring).

    ``shown``: the published run scores, held fixed when they do not depend on the labelled sample (the raw judge)
    or refitted in every replicate when ``shown_replicates`` ((B, R), on ``pw``'s topic weights:
    :func:`linear_leaderboard`) are given (``S_w = S + f (S* - S)``, the world's shown ranking, beside ``theta_w``);
    or ``"estimate"`` for the prediction-powered leaderboard itself (recomputed in every replicate).  Returns
    ``{"estimate", "ci", "level", "plug_in", "bounds", "bounds_method"}``; ``plug_in`` = ``tau_b(shown,
    theta_hat)`` (1 for ``"estimate"``); ``bounds`` = :func:`tau_bounds` (valid for any ranking, fixed or fitted
    on the labelled topics, but wide) and ``bounds_method`` = :data:`BOUNDS_METHOD` saying so.  For fixed scores,
    callers say :data:`FIXED_RANKING_CAVEAT` with the interval (its held-back coverage is 0.91-0.92 on NIST at 5-15
    labelled topics but 0.77-0.80 in a simulation with run-biased judges, docs/calibration.md)."""
    from metaeval.analysis.kendall import tau_b_batch

    level = pw.level if level is None else level
    world = _world(pw)
    if isinstance(shown, str):
        if shown != "estimate":
            raise ConfigError(f"track tau: shown {shown!r}: expected run scores or 'estimate'")
        fixed, shown_b = pw.estimate, world
    else:
        fixed = np.asarray(shown, dtype=float)
        if fixed.shape != pw.estimate.shape:
            raise ConfigError(f"track tau: {fixed.shape[0]} shown scores for {pw.estimate.shape[0]} runs")
        if shown_replicates is None:
            shown_b = np.broadcast_to(fixed, world.shape)
        else:
            sb = np.asarray(shown_replicates, dtype=float)
            if sb.shape != world.shape:
                raise ConfigError(f"track tau: shown replicates {sb.shape} for {world.shape} PPI++ replicates")
            shown_b = fixed[None, :] + world_factor(pw.n_labelled, pw.n_topics) * (sb - fixed[None, :])
    lo_b, hi_b = tau_bounds(pw, fixed, level)
    bounds = {"bounds": [lo_b, hi_b], "bounds_method": BOUNDS_METHOD.format(level=level, pairs=len(pw.diff))}
    plug = float(np.asarray(tau_b_batch(fixed[None, :], pw.estimate[None, :]))[0])
    est_b = np.asarray(tau_b_batch(shown_b, world), dtype=float)                   # the world's estimator
    true_b = np.asarray(tau_b_batch(shown_b, np.broadcast_to(pw.estimate, world.shape)), dtype=float)  # its estimand
    err = (est_b - true_b)[np.isfinite(est_b) & np.isfinite(true_b)]
    if not err.size or not np.isfinite(plug):
        return {"estimate": None, "ci": [None, None], "level": level, "plug_in": plug, **bounds}
    a = (1 - level) / 2
    clip = lambda x: float(min(1.0, max(-1.0, x)))  # noqa: E731
    return {"estimate": clip(plug - np.median(err)),
            "ci": [clip(plug - np.quantile(err, 1 - a)), clip(plug - np.quantile(err, a))],
            "level": level, "plug_in": plug, **bounds}
