"""Precision of a PPI-calibrated leaderboard as a function of the number of human-labelled topics.

Setting.  The judge scored all ``T`` topics of a track; humans label a simple random sample ``L`` of ``n`` of
them.  For run ``r`` with per-answer human scores ``H_t`` and judge scores ``J_t`` (``Delta_t = H_t - J_t``)
the prediction-powered estimate (Angelopoulos et al. 2023, Science 382:669) is

    theta_hat = mean_{t in T} J_t + mean_{t in L} Delta_t.

Two targets:

* ``calibration`` (default, what "the calibrated leaderboard agrees with the humans" means): the human run mean
  over the same ``T`` topics.  The error is ``mean_L Delta - mean_T Delta``, the error of a simple random sample
  mean without replacement, so (Cochran 1977, Sampling Techniques, thm 2.2)

      Var = S^2_Delta (1/n - 1/T)                      (S^2: variance over the T topics, ddof 1)

  It is zero at ``n = T``: labelling everything gives the human leaderboard.  This differs from
  ``calibration.scorelevel``'s "applied" variance ``s^2 (1/n_L + 1/n_U)``, whose target topics ``U`` are
  disjoint from the labelled ones.
* ``total``: the mean over the topic population (topics themselves sampled):
  ``Var = s^2_Delta / n + (s^2_H - s^2_Delta) / T`` (because ``L`` is inside ``T``: ``Var(mean_T J) +
  2 Cov(mean_T J, mean_L Delta) = (s^2_J + 2 s_{J Delta}) / T = (s^2_H - s^2_Delta) / T``).

Planning widths use the normal quantile ``z``; the interval one would print after labelling uses Student's t
with ``n - 1`` degrees of freedom and the sample's own ``s_Delta`` guarded like ``metaeval calibrate`` guards it
(:func:`metaeval.calibration.scorelevel.moderated_variance`) ("plug-in").

How sure is "about N topics"?  The point N uses the pilot's ``s^2_Delta`` as it is (runs whose pilot differences
are constant, ``s^2 = 0``, get the moderated pooled variance instead, and the statement warns) - the same variance
as the ``+/-`` table (``analytic_half``), so the point N and the table agree.  The N the statement leads with is the
upper end of the ``confidence`` range of the *median run's* variance (:func:`need_statement`): ``s^2 df /
chi^2_{(1-c)/2, df}`` with the effective degrees of freedom ``df`` solving ``psi'(df / 2) = Var*(log median_r
s^2_r)``, the variance of the log median-run variance over a topic bootstrap of the pilot (Satterthwaite 1946's
effective df, here from the bootstrap; for a variance on ``df`` degrees of freedom, ``s^2 ~ sigma^2 chi^2_df / df``,
``Var(log s^2) = psi'(df / 2)`` exactly, the trigamma function: Bartlett & Kendall 1946, "The statistical analysis
of variance-heterogeneity and the logarithmic transformation", JRSS Suppl. 8:128-138), bounded to ``[n_p - 1,
R (n_p - 1)]`` (:func:`effective_df`, :func:`df_from_log_variance`).  The large-df form ``df = 2 / Var(log s^2)``
(``psi'(x) ~ 1/x``), used before, understates ``df`` where it matters: 2.1 instead of 3 at ``Var = psi'(1.5)``,
which at a 4-topic pilot led with 1.67x the N real subsampling needs (issue 30).  The runs share the pilot topics,
so the median run's variance is far more certain than one run's (``n_p - 1`` df, the first rule, which led with
about twice the N really needed) but less than ``R`` independent runs would make it.  Validation against real subsampling of NIST topics (pilots drawn without
replacement, the justified N against the N that 4,000 subsamples per N show is needed) is in
``experiments/ranksets/planner.py``; the bootstrap check below only checks the implementation.

**Separating the top runs** (:func:`separation_need`): for the best runs on the pilot (human run means), adjacent
pairs ``(a, b)`` with pilot gap ``g = mean(H_a - H_b)`` need ``n`` topics for the 95% interval of the calibrated
difference to exclude 0 at that gap: ``z sqrt(S^2_{D_a - D_b} (1/n - 1/T)) < |g|`` (per pair, not simultaneous;
the rank-sets of ``metaeval calibrate`` are the simultaneous version), with the same effective-df upper end.

Implementation check (topic resampling; it cannot validate the prediction, since its worlds are bootstraps of
the pilot itself).  A bootstrap world draws ``T`` topics with replacement from the pilot (the
topics with both human and judge labels); its first ``n`` draws are the labelled sample.  Per ``n`` we record,
over ``reps`` worlds: the RMSE of ``theta_hat`` against the world's human run mean (empirical half-width =
``z * RMSE``), the mean plug-in half-width and its coverage, Kendall's tau-b between calibrated and human run
means, and the swap rate of run pairs whose human gap is at least ``g``.  In the bootstrap world the exact
variance is ``sigma0^2 (1/n - 1/T)`` with the pilot's ``ddof = 0`` variance, so the "analytic vs empirical"
ratio checks the code and the Monte-Carlo error; the plug-in ratio and coverage check the interval one would
actually print (small-``n`` variance estimates, skewness).  The analytic swap probability of a pair at human gap
``d`` is ``Phi(-|d| / sqrt(S^2_{Delta_r - Delta_s} (1/n - 1/T)))``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from metaeval.errors import ConfigError

TARGETS = ("calibration", "total")


def z_value(level: float) -> float:
    from scipy.stats import norm

    if not 0 < level < 1:
        raise ConfigError(f"level {level} must be in (0, 1)")
    return float(norm.ppf(0.5 + level / 2.0))


def fpc_variance(s2_delta: Any, n: Any, total: int) -> np.ndarray:
    """``S^2 (1/n - 1/T)``: variance of the calibrated run mean's error (target ``calibration``)."""
    n = np.asarray(n, dtype=float)
    if np.any(n < 1) or np.any(n > total):
        raise ConfigError(f"labelled topics n must be in [1, {total}]")
    return np.asarray(s2_delta, dtype=float) * (1.0 / n - 1.0 / total)


def total_variance(s2_delta: Any, s2_human: Any, n: Any, total: int) -> np.ndarray:
    """``s^2_Delta / n + (s^2_H - s^2_Delta) / T`` (target ``total``)."""
    n = np.asarray(n, dtype=float)
    s2d, s2h = np.asarray(s2_delta, dtype=float), np.asarray(s2_human, dtype=float)
    return s2d / n + (s2h - s2d) / total


def topics_needed(s2_delta: Any, half_width: float, total: int, level: float = 0.95) -> np.ndarray:
    """Smallest ``n`` with ``z sqrt(S^2 (1/n - 1/T)) <= half_width``: ``n = ceil(1 / ((h/z)^2 / S^2 + 1/T))``,
    at least 2 and at most ``T`` (per run; target ``calibration``)."""
    if half_width <= 0:
        raise ConfigError(f"half-width {half_width} must be positive")
    s2 = np.asarray(s2_delta, dtype=float)
    z = z_value(level)
    with np.errstate(divide="ignore"):
        n = 1.0 / ((half_width / z) ** 2 / np.where(s2 > 0, s2, np.nan) + 1.0 / total)
    n = np.where(s2 > 0, np.ceil(n - 1e-9), 2.0)
    return np.clip(n, 2, total).astype(int)


def pair_index(r: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(r, k=1)


def tau_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall tau-b between the columns of each row of ``x`` and ``y`` (shape (B, R) -> (B,)); NaN when a row
    is constant: ``metaeval.analysis.kendall.tau_b_batch`` (values settled to 10 decimals before ranking, so run
    means that differ only by summation order tie, as everywhere else in metaeval)."""
    from metaeval.analysis.kendall import tau_b_batch

    x, y = np.atleast_2d(np.asarray(x, dtype=float)), np.atleast_2d(np.asarray(y, dtype=float))
    return np.asarray(tau_b_batch(x, y), dtype=float)


def swap_share(est: np.ndarray, truth: np.ndarray, gap: float) -> tuple[float, int]:
    """Share of (row, run pair) with ``|truth gap| >= gap`` whose estimated order is reversed (ties count 1/2);
    returns (share, number of pairs counted)."""
    i, j = pair_index(est.shape[1])
    dt, de = truth[:, i] - truth[:, j], est[:, i] - est[:, j]
    use = np.abs(dt) >= gap
    if not use.any():
        return float("nan"), 0
    s = np.sign(dt[use]) * np.sign(de[use])
    return float(((s < 0) + 0.5 * (s == 0)).mean()), int(use.sum())


def analytic_swap(H: np.ndarray, D: np.ndarray, n: int, total: int, gap: float) -> float:
    """Mean over run pairs with pilot human gap ``|d| >= gap`` of ``Phi(-|d| / sd)``, ``sd^2 = S^2_{D_r - D_s}
    (1/n - 1/T)`` (target ``calibration``)."""
    from scipy.stats import norm

    i, j = pair_index(H.shape[1])
    d = H.mean(0)[i] - H.mean(0)[j]
    use = np.abs(d) >= gap
    if not use.any():
        return float("nan")
    s2 = (D[:, i] - D[:, j]).var(axis=0, ddof=1)[use]
    sd = np.sqrt(fpc_variance(s2, n, total)) if n < total else np.zeros_like(s2)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(sd > 0, norm.cdf(-np.abs(d[use]) / np.where(sd > 0, sd, 1.0)), 0.0)
    return float(p.mean())


def default_grid(total: int, points: int = 10) -> list[int]:
    """About ``points`` labelled-topic counts from 2 to ``T``, roughly geometric."""
    if total < 2:
        raise ConfigError(f"need at least two topics to plan; have {total}")
    g = np.unique(np.round(np.geomspace(2, total, points)).astype(int))
    return [int(v) for v in g if 2 <= v <= total]


def _clean(H: np.ndarray, J: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    H, J = np.asarray(H, dtype=float), np.asarray(J, dtype=float)
    if H.shape != J.shape or H.ndim != 2:
        raise ConfigError(f"human and judge score matrices must have the same (topic, run) shape: {H.shape} vs {J.shape}")
    keep = np.isfinite(H).all(0) & np.isfinite(J).all(0)
    if keep.sum() < 2 or H.shape[0] < 2:
        raise ConfigError(f"planning needs >= 2 pilot topics and >= 2 runs with an answer on every pilot topic; "
                          f"have {H.shape[0]} topics, {int(keep.sum())} complete runs")
    return H[:, keep], J[:, keep], keep


def precision_curves(H: np.ndarray, J: np.ndarray, *, total_topics: int | None = None, n_grid: Sequence[int] | None = None,
                     reps: int = 400, rng: np.random.Generator | int = 0, level: float = 0.95,
                     gaps: Sequence[float] = (0.01, 0.02, 0.05), chunk: int = 50) -> dict[str, Any]:
    """Precision curves from a pilot: ``H``, ``J`` are (pilot topics x runs) per-answer scores (runs missing a
    pilot topic are dropped).  Returns a JSON-ready dict with one row per ``n`` in ``n_grid``; see the module
    docstring for every column.  Medians are over runs; ``worst`` is the run with the largest value.  ``rng``: the
    caller's generator (``plan_study`` passes its ``planning.plan`` stream), or an int seed of the stream
    ``planning.precision``."""
    from scipy.stats import t as student_t

    H, J, keep = _clean(H, J)
    D = H - J
    tp, r = H.shape
    total = int(total_topics or tp)
    if total < 2:
        raise ConfigError("total_topics must be >= 2")
    grid = sorted({int(n) for n in (n_grid or default_grid(total)) if 2 <= int(n) <= total})
    if not grid:
        raise ConfigError(f"no labelled-topic count in the grid lies in [2, {total}]")
    if not isinstance(rng, np.random.Generator):
        from metaeval.random_streams import stream

        rng = stream(rng, "planning.precision")
    z = z_value(level)
    s2d, s2h = planning_s2(D.var(0, ddof=1), tp)[0], H.var(0, ddof=1)  # the point N's variance (need_statement)
    s2d0, s2h0 = D.var(0, ddof=0), H.var(0, ddof=0)
    pop_truth = H.mean(0)

    acc = {n: {"se2": np.zeros(r), "se2_tot": np.zeros(r), "half_pi": np.zeros(r), "cover": np.zeros(r),
               "tau": [], "swap": {g: [0.0, 0] for g in gaps}} for n in grid}
    tau_raw: list[np.ndarray] = []
    done = 0
    while done < reps:
        b = min(chunk, reps - done)
        w = rng.integers(0, tp, size=(b, total))
        DW = D[w]                                  # (b, T, R)
        mean_d = DW.mean(1)
        jmean = J[w].mean(1)
        truth = jmean + mean_d                     # human mean over the world's T topics
        tau_raw.append(tau_b_rows(jmean, truth))
        c1, c2 = np.cumsum(DW, axis=1), np.cumsum(DW ** 2, axis=1)
        for n in grid:
            ml = c1[:, n - 1] / n
            err = ml - mean_d
            theta = jmean + ml
            a = acc[n]
            a["se2"] += (err ** 2).sum(0)
            a["se2_tot"] += ((theta - pop_truth) ** 2).sum(0)
            s2l = np.maximum(c2[:, n - 1] - n * ml ** 2, 0.0) / (n - 1)
            s2l = _guard_rows(s2l, n)
            half = student_t.ppf(0.5 + level / 2.0, n - 1) * np.sqrt(s2l * (1.0 / n - 1.0 / total))
            a["half_pi"] += half.sum(0)
            a["cover"] += (np.abs(err) <= half + 1e-12).sum(0)
            a["tau"].append(tau_b_rows(theta, truth))
            for g in gaps:
                share, cnt = swap_share(theta, truth, g)
                if cnt:
                    a["swap"][g][0] += share * cnt
                    a["swap"][g][1] += cnt
        done += b

    rows = [_curve_row(n, acc[n], reps, z, level, s2d, s2d0, s2h0, total, H, D, gaps) for n in grid]
    tr = np.concatenate(tau_raw)
    tr = tr[np.isfinite(tr)]
    return {"level": level, "z": z, "reps": reps, "pilot_topics": tp, "total_topics": total, "runs": int(r),
            "runs_dropped": int((~keep).sum()), "gaps": list(gaps),
            "s_delta": _summ(np.sqrt(s2d)), "s_human": _summ(np.sqrt(s2h)),
            "raw_tau": {"mean": float(tr.mean()) if tr.size else None,
                        "lo": float(np.quantile(tr, (1 - level) / 2)) if tr.size else None,
                        "hi": float(np.quantile(tr, (1 + level) / 2)) if tr.size else None},
            "rows": rows}


def _curve_row(n: int, a: dict[str, Any], reps: int, z: float, level: float, s2d: np.ndarray, s2d0: np.ndarray,
               s2h0: np.ndarray, total: int, H: np.ndarray, D: np.ndarray, gaps: Sequence[float]) -> dict[str, Any]:
    """One row of :func:`precision_curves` from its accumulators over the resampled worlds."""
    emp = z * np.sqrt(a["se2"] / reps)
    emp_tot = z * np.sqrt(a["se2_tot"] / reps)
    ana0 = z * np.sqrt(fpc_variance(s2d0, n, total))
    ana = z * np.sqrt(fpc_variance(s2d, n, total))
    ana_tot = z * np.sqrt(np.maximum(total_variance(s2d0, s2h0, n, total), 0.0))
    pi = a["half_pi"] / reps
    taus = np.concatenate(a["tau"])
    taus = taus[np.isfinite(taus)]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(emp > 0, ana0 / emp, np.nan)
        ratio_pi = np.where(emp > 0, pi / emp, np.nan)
    return {
        "n": n,
        "analytic_half": _summ(ana), "analytic_half_pilot0": _summ(ana0), "empirical_half": _summ(emp),
        "plugin_half": _summ(pi), "plugin_coverage": _summ(a["cover"] / reps),
        "analytic_over_empirical": _summ(ratio), "plugin_over_empirical": _summ(ratio_pi),
        "total_analytic_half": _summ(ana_tot), "total_empirical_half": _summ(emp_tot),
        "tau_mean": float(taus.mean()) if taus.size else None,
        "tau_lo": float(np.quantile(taus, (1 - level) / 2)) if taus.size else None,
        "tau_hi": float(np.quantile(taus, (1 + level) / 2)) if taus.size else None,
        "swap": {f"{g:g}": {"empirical": (a["swap"][g][0] / a["swap"][g][1]) if a["swap"][g][1] else None,
                            "analytic": _none(analytic_swap(H, D, n, total, g))} for g in gaps},
    }


def guarded_s2(s2_delta: Any, pilot_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """``(guarded s^2, constant)``: per-run variance through ``moderated_variance`` (as ``metaeval calibrate``
    guards its intervals: never below the moderated pooled variance) and the mask of runs whose pilot differences
    were constant.  Planning uses :func:`planning_s2`, which replaces only the constant runs."""
    from metaeval.calibration.scorelevel import moderated_variance

    s2 = np.asarray(s2_delta, dtype=float)
    return moderated_variance(s2, np.full(s2.shape, float(pilot_topics))), ~(s2 > 1e-12)


def planning_s2(s2_delta: Any, pilot_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """``(s^2 to plan with, constant)``: the pilot variance as it is, except runs whose pilot differences were
    constant (``s^2 = 0`` says nothing about the run's variance), which get the moderated pooled one
    (:func:`guarded_s2`).  Raising every run below the pooled variance (the interval guard) would move the median
    run's N away from what its pilot shows (finding 6 of issue 30: point N 16 where the table showed 10)."""
    s2 = np.asarray(s2_delta, dtype=float)
    g, const = guarded_s2(s2, pilot_topics)
    return np.where(const, g, s2), const


def df_from_log_variance(v: float, lo: float, hi: float) -> float:
    """The degrees of freedom ``df`` in ``[lo, hi]`` with ``psi'(df / 2) = v`` (``psi'`` = trigamma): the variance of
    ``log s^2`` for a variance on ``df`` degrees of freedom (Bartlett & Kendall 1946; module docstring).  ``psi'`` is
    decreasing, so ``v >= psi'(lo / 2)`` gives ``lo`` and ``v <= psi'(hi / 2)`` gives ``hi``."""
    from scipy.optimize import brentq
    from scipy.special import polygamma

    if not 0 < lo <= hi:
        raise ConfigError(f"df bounds [{lo}, {hi}] must satisfy 0 < lo <= hi")
    if not v > 0:
        return float(hi)
    g = lambda df: float(polygamma(1, df / 2.0)) - v  # noqa: E731
    if g(lo) <= 0:
        return float(lo)
    if g(hi) >= 0:
        return float(hi)
    return float(brentq(g, lo, hi, xtol=1e-10))


def log_variance_of_median(deltas: np.ndarray, n_boot: int = 400,
                           seed: int | np.random.Generator = 0) -> float | None:
    """``Var*(log median_r s^2_r)`` of pilot differences ``deltas`` (topics x runs) over ``n_boot`` topic-bootstrap
    resamples of the pilot (stream ``planning.need``; ``s^2_r`` the ``ddof = 1`` variance of run ``r`` in the
    resample); ``None`` with fewer than 3 pilot topics or when fewer than half the resamples have a positive median
    variance."""
    from metaeval.analysis.resample import topic_weights

    D = np.asarray(deltas, dtype=float)
    p = D.shape[0]
    if p < 3:
        return None
    w = topic_weights(p, n_boot, seed, "planning.need")
    tot = w.sum(axis=1, keepdims=True)
    mean = (w @ D) / tot
    var = ((w @ (D ** 2)) / tot - mean ** 2) * p / (p - 1)
    med = np.median(var, axis=1)
    ok = med > 1e-12
    if ok.sum() < n_boot / 2:
        return None
    return float(np.var(np.log(med[ok]), ddof=1))


def effective_df(deltas: np.ndarray, n_boot: int = 400, seed: int | np.random.Generator = 0) -> float:
    """Effective degrees of freedom of the median-run variance of pilot differences ``deltas`` (topics x runs): the
    ``df`` with ``psi'(df / 2) = Var*(log median_r s^2_r)`` (:func:`log_variance_of_median`,
    :func:`df_from_log_variance`), bounded to ``[p - 1, R (p - 1)]`` (module docstring); ``p - 1`` when that
    variance is undefined (fewer than 3 pilot topics, or most resamples with a zero median variance)."""
    p, r = np.shape(deltas)
    lo, hi = float(p - 1), float(r * (p - 1))
    v = log_variance_of_median(deltas, n_boot, seed)
    return lo if v is None else df_from_log_variance(v, lo, hi)


def _upper_factor(df: float, confidence: float) -> tuple[float, float]:
    """Multipliers of ``s^2`` at the upper and lower end of its ``confidence`` chi-square range on ``df``."""
    from scipy.stats import chi2

    a = (1 - confidence) / 2
    return df / chi2.ppf(a, df), df / chi2.ppf(1 - a, df)


def need_statement(s2_delta: np.ndarray, half_width: float, total: int, level: float, metric_name: str,
                   pilot_topics: int | None = None, confidence: float = 0.8, deltas: np.ndarray | None = None,
                   seed: int | np.random.Generator = 0) -> dict[str, Any]:
    """Topics needed for ``+/- half_width`` (target ``calibration``), per run and for the median and worst run.

    With ``pilot_topics`` (``n_p``): runs with constant pilot differences plan with the moderated pooled variance
    (:func:`planning_s2`; listed in ``warnings``); ``point`` is the N at that variance (what the ``+/-`` table shows);
    ``median_run`` / ``worst_run`` lead with the N at the upper end of the ``confidence`` range of the variance on the
    effective df of the median-run variance (:func:`effective_df` from the pilot differences ``deltas``; ``n_p - 1``
    without them), ``range`` the N at both ends (module docstring)."""
    s2 = np.asarray(s2_delta, dtype=float)
    warnings: list[str] = []
    out: dict[str, Any] = {"half_width": half_width}
    if pilot_topics:
        s2, const = planning_s2(s2, pilot_topics)
        if const.any():
            warnings.append(f"{int(const.sum())} of {len(s2)} runs have a constant human-minus-judge difference on the "
                            f"{pilot_topics} pilot topics (variance 0 there); planned with the moderated pooled variance")
        df = effective_df(deltas, seed=seed) if deltas is not None else float(pilot_topics - 1)
        f_up, f_lo = _upper_factor(df, confidence)
        up = topics_needed(s2 * f_up, half_width, total, level)
        lo = topics_needed(s2 * f_lo, half_width, total, level)
        point = topics_needed(s2, half_width, total, level)
        n = up
        out.update({"point": {"median_run": int(np.ceil(np.median(point))), "worst_run": int(point.max())},
                    "confidence": confidence, "effective_df": df, "variance_factor": f_up,
                    "range": {"median_run": [int(np.ceil(np.median(lo))), int(np.ceil(np.median(up)))],
                              "worst_run": [int(lo.max()), int(up.max())]}})
    else:
        n = topics_needed(s2, half_width, total, level)
    med, worst = int(np.ceil(np.median(n))), int(n.max())
    line = (f"for +/-{half_width:g} on {metric_name} run means (calibrated vs the human leaderboard on the same {total} "
            f"topics, {level:.0%}) you need about {med} human-labelled topics for the median run, {worst} for the worst run")
    if pilot_topics:
        r = out["range"]["median_run"]
        line += (f" (upper end of the {confidence:.0%} range that a pilot of {pilot_topics} topics allows, "
                 f"{out['effective_df']:.0f} effective df; point estimate {out['point']['median_run']}, as in the "
                 f"+/- table; range {r[0]}-{r[1]} for the median run)")
    out.update({"median_run": med, "worst_run": worst, "per_run": n.tolist(), "line": line, "warnings": warnings})
    return out


def separation_need(H: np.ndarray, J: np.ndarray, total: int, level: float = 0.95, top: int = 3,
                    factor: float = 1.0) -> list[dict[str, Any]]:
    """Topics needed to tell the best pilot runs apart (module docstring): per adjacent pair of the ``top`` best
    runs by pilot human mean (runs answering every pilot topic), the pilot gap, and the N at the pilot variance of
    the difference (``point``) and at it times ``factor`` (``justified``: the upper-end factor of
    :func:`need_statement`).  ``None`` N when the gap is 0 (no number of topics separates tied runs)."""
    H, J, _ = _clean(H, J)
    D = H - J
    order = np.argsort(-H.mean(0), kind="stable")[:max(2, top)]
    out = []
    for a, b in zip(order[:-1], order[1:]):
        gap = float(H[:, a].mean() - H[:, b].mean())
        s2 = float((D[:, a] - D[:, b]).var(ddof=1))
        s2 = s2 if s2 > 1e-12 else float(np.median((D[:, order[0]:order[0] + 1] - D).var(0, ddof=1)))
        row = {"a": int(a), "b": int(b), "gap": gap, "s_diff": float(np.sqrt(s2))}
        if abs(gap) > 0:
            row["point"] = int(topics_needed(np.array([s2]), abs(gap), total, level)[0])
            row["justified"] = int(topics_needed(np.array([s2 * factor]), abs(gap), total, level)[0])
        else:
            row["point"] = row["justified"] = None
        out.append(row)
    return out


def _guard_rows(s2: np.ndarray, n: int) -> np.ndarray:
    """``moderated_variance`` applied to each world (row) of per-run variances from ``n`` topics."""
    from metaeval.calibration.scorelevel import moderated_variance

    return np.stack([moderated_variance(row, np.full(row.shape, float(n))) for row in s2])


def _summ(v: np.ndarray) -> dict[str, float | None]:
    v = np.asarray(v, dtype=float)
    v = v[np.isfinite(v)]
    if not v.size:
        return {"median": None, "mean": None, "max": None, "min": None}
    return {"median": float(np.median(v)), "mean": float(v.mean()), "max": float(v.max()), "min": float(v.min())}


def _none(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)
