"""A sequential early stop for the repeated splits of a decision whose figures are not reported (the nested runs).

The nested evaluation (:func:`metaeval.study.calibration_workflow.procedure.nested`) re-runs the whole decision inside each
outer split and keeps only its *choice* (method and verdict); the inner splits' figures are thrown away.  Those
choices usually settle long before the ``S`` (``repeats``) inner splits are done, so :func:`evaluate_until_settled`
evaluates the splits one at a time, in their fixed order, and stops after ``s`` of them once no comparison the rule
(:func:`metaeval.study.calibration_workflow.procedure.decide`) rests on could plausibly change its outcome over the
remaining ``S - s`` splits.  The splits evaluated are the first ``s`` of the same ``S`` (same stream, same
topics), so a settled decision is the full one's unless the remaining splits move a comparison by more than ``z``
predictive SDs.

**Predictive band of one comparison.**  For per-split values ``d_1..d_s`` (a paired difference, or a candidate's
errors minus the leader's) with mean ``m_s`` and SD ``sigma``, the mean over all ``S`` splits is
``m_S = (s m_s + (S - s) m_rest) / S``; with the remaining splits drawn like the first (the splits are i.i.d.
given the data) its predictive SD is ``sigma sqrt((S - s) / (S s))``.  The rule compares ``m_S + k se_S`` with 0
(``k = 1`` for "beyond one SE", ``k = 0`` for "lower"), where ``se_S = sqrt((1/S + n_held/n_fit) var_S)`` is the
corrected resampled SE (Nadeau & Bengio 2003): it is projected as ``sqrt((1/S + n_held/n_fit) sigma^2)``, with a
relative uncertainty ``(S - s) / (S sqrt(2 (s - 1)))`` (the SD of a sample SD, for the share of the variance yet
to be seen).  A comparison is *settled* when ``|m_s + k se_proj| > z (sigma sqrt((S - s) / (S s)) + k se_proj
(S - s) / (S sqrt(2 (s - 1))))`` and at least ``min_splits`` finite values are in; ``sigma = 0`` with a non-zero
statistic is settled (identical values on every split so far, e.g. two candidates that coincide).

**What must be settled** (the rule of :func:`~metaeval.study.calibration_workflow.procedure.decide`, per metric):

1. composite's error below raw's (``k = 0``); if so, composite's tau not below raw's beyond one SE (``k = 1``);
2. for every correction ``c``: "beats the baseline by more than one SE" (``k = 1``) settled false, or "tau not
   below raw's beyond one SE" settled false, or both settled true;
3. with two or more passing corrections: the lowest mean error, against each other passing one (``k = 0``).

Defaults ``z = 4``, ``min_splits = 8``: over many seeds and judges (``tests/unit/test_calibration_sequential.py``)
the early-stopped choices equal the full ones.  A candidate that fails to fit only on a split after the stop is
kept where the full run would have dropped it (a failure is an exception raised by the method: none of the
shipped methods raises on a split it could fit at the full count).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

#: predictive SDs a comparison must clear to count as settled
Z = 4.0
#: fewest splits before any stop (a variance from fewer is too rough to trust)
MIN_SPLITS = 8


def _sd_of_sd(d: np.ndarray) -> float:
    """Relative SD of a sample SD from ``s`` values: ``sqrt((kurt - (s - 3) / (s - 1)) / s) / 2`` with the sample
    kurtosis ``kurt`` (never below the normal's ``1 / sqrt(2 (s - 1))``): heavy tails make the SD less certain."""
    return _block_stats(np.asarray(d, dtype=float)[None, :])[2][0]


def _block_stats(D: np.ndarray) -> tuple[list[float], list[float], list[float]]:
    """Per row of ``D`` (k, s) (finite values, ``s >= 2``): mean, SD (ddof 1) and :func:`_sd_of_sd`.

    The rows are reduced along the last axis of one C-contiguous stack, one call per statistic: numpy reduces each
    row with the routine it uses for that row alone (the same pairwise sum) and the elementwise steps are the same
    operations, so every figure is bit-identical to the former per-row ``d.mean()``, ``d.std(ddof=1)`` and
    ``_sd_of_sd(d)`` (``tests/unit/test_calibration_sequential_batched.py`` checks it against that code); the scalar
    steps are the former ones on Python floats (``math.sqrt`` is the correctly rounded square root ``np.sqrt`` is)."""
    D = np.ascontiguousarray(D, dtype=float)
    s = D.shape[1]
    # numpy's own steps, without its wrappers: mean = sum / s; std = sqrt(sum((D - mean)^2) / (s - 1)) with the
    # square as x * x (ndarray.__pow__(2) is np.square); the variance of _sd_of_sd is the same sum / s
    mean = np.add.reduce(D, axis=1) / s
    c = D - mean[:, None]
    ss = np.add.reduce(c * c, axis=1)
    sd = np.sqrt(ss / (s - 1))
    v2 = (ss / s).tolist()
    v4 = (np.add.reduce(c ** 4, axis=1) / s).tolist()
    normal = 1.0 / math.sqrt(2.0 * (s - 1))
    shape = (s - 3) / (s - 1)
    sds = []
    for v, w in zip(v2, v4):
        kurt = w / v ** 2 if v > 0 else 3.0
        sds.append(max(0.5 * math.sqrt(max(kurt - shape, 0.0) / s), normal))
    return mean.tolist(), sd.tolist(), sds


def _bands(D, ks: Sequence[int], total: int, n_fit: int, n_held: int, z: float,
           min_splits: int) -> list[int | None]:
    """:func:`_band` of every row of ``D`` (a (k, s) array, or a list of 1-d arrays) with its ``ks[i]``; the rows'
    statistics are computed together (:func:`_block_stats`, rows of one length at a time)."""
    n = len(D)
    out: list[int | None] = [None] * n
    need = max(min(min_splits, total), 2)
    groups: dict[int, tuple[Any, np.ndarray]] = {}  # finite values per row -> (rows, their finite values)
    if isinstance(D, np.ndarray) and D.ndim == 2:
        fin = np.isfinite(D)
        cnt = fin.sum(axis=1)
        if cnt.min(initial=D.shape[1]) == D.shape[1]:
            if D.shape[1] >= need:
                groups[D.shape[1]] = (range(n), D)
        else:  # each row's finite values in order: boolean selection reads them row by row
            for s in sorted({c for c in cnt.tolist() if c >= need}):
                at = np.flatnonzero(cnt == s)
                groups[s] = (at.tolist(), D[at][fin[at]].reshape(len(at), s))
    else:
        lists: dict[int, tuple[list[int], list[np.ndarray]]] = {}
        for i in range(n):
            d = np.asarray(D[i], dtype=float)
            d = d[np.isfinite(d)]
            if d.size >= need:
                lists.setdefault(d.size, ([], []))[0].append(i)
                lists[d.size][1].append(d)
        groups = {s: (at, np.stack(ds)) for s, (at, ds) in lists.items()}
    r = n_held / max(n_fit, 1)
    c_total = 1.0 / total + r
    for s, (at, block) in groups.items():
        c_now = 1.0 / s + r
        left = max(total - s, 0)
        w_left = math.sqrt(left / (total * s))
        for i, mean, sigma, sds in zip(at, *_block_stats(block)):
            k = ks[i]
            se_proj = math.sqrt(c_total * sigma ** 2)
            g = mean + k * se_proj
            g_now = mean + k * math.sqrt(c_now * sigma ** 2)
            spread = sigma * w_left + k * se_proj * left / total * sds
            if g == 0.0 or abs(g) <= z * spread or g_now == 0.0 or (g > 0) != (g_now > 0):
                continue
            out[i] = 1 if g > 0 else -1
    return out


def _band(d: np.ndarray, k: int, total: int, n_fit: int, n_held: int, z: float, min_splits: int) -> int | None:
    """The sign (+1 / -1) of ``m + k se`` once settled (module docstring): the same now (``se`` on the ``s`` splits
    so far, what the rule computes if it stops here) and, by ``z`` predictive SDs, after all ``total``; else None."""
    return _bands([d], [k], total, n_fit, n_held, z, min_splits)[0]


def can_settle(s: int, total: int, min_splits: int = MIN_SPLITS) -> bool:
    """Whether :func:`status` can say anything after ``s`` of ``total`` splits: below ``min(min_splits, total)``
    (or 2) splits no comparison has enough values, so it is (not settled, nothing excluded) without looking."""
    return s >= total or s >= max(min(min_splits, total), 2)


def status(err: dict[str, np.ndarray], tau: dict[str, np.ndarray], total: int, n_fit: int, n_held: int,
           z: float = Z, min_splits: int = MIN_SPLITS) -> tuple[bool, set[str]]:
    """(whether the rule's outcome on the splits so far, ``{name: (s,)}`` with ``raw`` present, is settled for all
    ``total`` splits; the corrections already settled as not chosen), per the module docstring.

    The comparisons are banded in up to three batches (:func:`_bands`): composite against raw; every correction
    against the baseline and raw; the lowest error against the other passing corrections.  A batch may band a
    comparison the rule then does not read (e.g. composite's tau when its error is not settled): each band is a
    function of its own values only, so the outcome is the one-at-a-time rule's."""
    if len(err["raw"]) >= total:
        return True, set()

    names = list(err)
    if all(n in tau and len(err[n]) == len(err["raw"]) == len(tau[n]) for n in names):  # one stack of all
        X = np.stack([np.asarray(err[n], float) for n in names] + [np.asarray(tau[n], float) for n in names])
        row = {(id(x), n): i + j * len(names) for j, x in enumerate((err, tau)) for i, n in enumerate(names)}
    else:
        X = None

    def signs(reqs):  # [(x, a, b, k)] -> [sign]
        if not reqs:
            return []
        if X is not None:
            D = X[[row[id(x), a] for x, a, _, _ in reqs]] - X[[row[id(x), b] for x, _, b, _ in reqs]]
        else:
            D = [np.asarray(x[a], float) - np.asarray(x[b], float) for x, a, b, _ in reqs]
        return _bands(D, [k for *_, k in reqs], total, n_fit, n_held, z, min_splits)

    base = "raw"
    if "composite" in err:
        lower, tau_c = signs([(err, "composite", "raw", 0), (tau, "composite", "raw", 1)])
        if lower is None:
            return False, set()
        if lower < 0:
            if tau_c is None:  # composite's tau not below raw's beyond one SE: mean + se >= 0
                return False, set()
            base = "composite" if tau_c > 0 else "raw"
    corr = [c for c in err if c not in ("raw", "composite")]
    got = signs([(x, c, b, 1) for c in corr for x, b in ((err, base), (tau, "raw"))])
    passing, out, done = [], set(), True
    for j, c in enumerate(corr):
        beats, g_tau = got[2 * j], got[2 * j + 1]
        if beats is not None and beats > 0:
            out.add(c)  # settled: does not beat the baseline by more than one SE
            continue
        ok = None if g_tau is None else g_tau > 0
        if ok is False:
            out.add(c)  # settled: tau below raw's beyond noise
            continue
        if beats is None or ok is None:
            done = False
            continue
        passing.append(c)
    if done and len(passing) > 1:
        means = {c: np.nanmean(np.asarray(err[c], float)) for c in passing}
        lead = min(passing, key=lambda c: (means[c], c))
        done = all(g is not None for g in signs([(err, c, lead, 0) for c in passing if c != lead]))
    return done, out


def settled(err: dict[str, np.ndarray], tau: dict[str, np.ndarray], total: int, n_fit: int, n_held: int,
            z: float = Z, min_splits: int = MIN_SPLITS) -> bool:
    """Whether the rule's outcome is settled (:func:`status`)."""
    return status(err, tau, total, n_fit, n_held, z, min_splits)[0]


def evaluate_until_settled(evaluate, evaluation, cands, data, metrics: Sequence[str], splits, n_fit: int,
                           n_held: int, z: float = Z, min_splits: int = MIN_SPLITS):
    """:func:`metaeval.study.calibration_workflow.procedure.evaluate` (point estimates only, in this process) on
    the splits of ``splits`` one at a time, until :func:`status` says settled for every metric; a correction
    settled as not chosen on every metric is no longer fitted (its later splits are NaN: the rule reads the
    splits it has).  Returns the :class:`~metaeval.study.calibration_workflow.procedure.Evaluation` of the splits
    evaluated (``err`` and ``tau``: what the rule reads).  ``evaluate`` and ``evaluation`` are the procedure's
    ``evaluate`` and ``Evaluation`` (passed in, so that this module does not import the procedure that calls it)."""

    failed: dict[str, str] = {}
    active = list(cands)
    err: dict[str, dict[str, list[float]]] = {m: {c.name: [] for c in cands} for m in metrics}
    tau: dict[str, dict[str, list[float]]] = {m: {c.name: [] for c in cands} for m in metrics}
    used = 0
    for split in splits:
        ev = evaluate(active, data, metrics, [split], n_fit, n_held, want_ci=False, workers=1, n_levels=0,
                      points_only=True)
        used += 1
        for k, v in ev.failed.items():
            failed.setdefault(k, v)
        for m in metrics:
            for c in cands:
                for store, src in ((err, ev.err), (tau, ev.tau)):
                    store[m][c.name].append(float(src[m][c.name][0]) if c.name in src[m] else np.nan)
        if can_settle(used, len(splits), min_splits):
            names = [c.name for c in cands if c.name not in failed]
            states = [status({n: np.asarray(err[m][n]) for n in names}, {n: np.asarray(tau[m][n]) for n in names},
                             len(splits), n_fit, n_held, z, min_splits) for m in metrics]
        else:  # what status says before any comparison has enough values (can_settle)
            states = [(False, set()) for _ in metrics]
        if used >= len(splits) or all(done for done, _ in states):
            break
        out = set.intersection(*(o for _, o in states)) if states else set()
        active = [c for c in active if c.name not in out and c.name not in failed]
    names = [c.name for c in cands if c.name not in failed]
    res = evaluation(list(splits[:used]), n_fit, n_held, names, failed=failed)
    res.err = {m: {n: np.asarray(err[m][n]) for n in names} for m in metrics}
    res.tau = {m: {n: np.asarray(tau[m][n]) for n in names} for m in metrics}
    return res
