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

Defaults ``z = 3``, ``min_splits = 8``: over many seeds and judges (``tests/unit/test_calibration_sequential.py``)
the early-stopped choices equal the full ones.  A candidate that fails to fit only on a split after the stop is
kept where the full run would have dropped it (a failure is an exception raised by the method: none of the
shipped methods raises on a split it could fit at the full count).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

#: predictive SDs a comparison must clear to count as settled
Z = 4.0
#: fewest splits before any stop (a variance from fewer is too rough to trust)
MIN_SPLITS = 8


def _sd_of_sd(d: np.ndarray) -> float:
    """Relative SD of a sample SD from ``s`` values: ``sqrt((kurt - (s - 3) / (s - 1)) / s) / 2`` with the sample
    kurtosis ``kurt`` (never below the normal's ``1 / sqrt(2 (s - 1))``): heavy tails make the SD less certain."""
    s = d.size
    c = d - d.mean()
    v = float((c ** 2).mean())
    kurt = float((c ** 4).mean()) / v ** 2 if v > 0 else 3.0
    return max(0.5 * np.sqrt(max(kurt - (s - 3) / (s - 1), 0.0) / s), 1.0 / np.sqrt(2.0 * (s - 1)))


def _band(d: np.ndarray, k: int, total: int, n_fit: int, n_held: int, z: float, min_splits: int) -> int | None:
    """The sign (+1 / -1) of ``m + k se`` once settled (module docstring): the same now (``se`` on the ``s`` splits
    so far, what the rule computes if it stops here) and, by ``z`` predictive SDs, after all ``total``; else None."""
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    s = d.size
    if s < min(min_splits, total) or s < 2:
        return None
    r = n_held / max(n_fit, 1)
    sigma = float(d.std(ddof=1))
    se_proj = float(np.sqrt((1.0 / total + r) * sigma ** 2))
    g = float(d.mean()) + k * se_proj
    g_now = float(d.mean()) + k * float(np.sqrt((1.0 / s + r) * sigma ** 2))
    left = max(total - s, 0)
    spread = sigma * np.sqrt(left / (total * s)) + k * se_proj * left / total * _sd_of_sd(d)
    if g == 0.0 or abs(g) <= z * spread or g_now == 0.0 or (g > 0) != (g_now > 0):
        return None
    return 1 if g > 0 else -1


def status(err: dict[str, np.ndarray], tau: dict[str, np.ndarray], total: int, n_fit: int, n_held: int,
           z: float = Z, min_splits: int = MIN_SPLITS) -> tuple[bool, set[str]]:
    """(whether the rule's outcome on the splits so far, ``{name: (s,)}`` with ``raw`` present, is settled for all
    ``total`` splits; the corrections already settled as not chosen), per the module docstring."""
    if len(err["raw"]) >= total:
        return True, set()

    def sign(x, a, b, k):
        return _band(np.asarray(x[a], float) - np.asarray(x[b], float), k, total, n_fit, n_held, z, min_splits)

    def tau_ok(c) -> bool | None:  # tau not below raw's beyond one SE: mean + se >= 0
        g = sign(tau, c, "raw", 1)
        return None if g is None else g > 0

    base = "raw"
    if "composite" in err:
        lower = sign(err, "composite", "raw", 0)
        if lower is None:
            return False, set()
        if lower < 0:
            ok = tau_ok("composite")
            if ok is None:
                return False, set()
            base = "composite" if ok else "raw"
    passing, out, done = [], set(), True
    for c in err:
        if c in ("raw", "composite"):
            continue
        beats = sign(err, c, base, 1)
        if beats is not None and beats > 0:
            out.add(c)  # settled: does not beat the baseline by more than one SE
            continue
        ok = tau_ok(c)
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
        done = all(sign(err, c, lead, 0) is not None for c in passing if c != lead)
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
        ev = evaluate(active, data, metrics, [split], n_fit, n_held, want_ci=False, workers=1, n_levels=0)
        used += 1
        for k, v in ev.failed.items():
            failed.setdefault(k, v)
        for m in metrics:
            for c in cands:
                for store, src in ((err, ev.err), (tau, ev.tau)):
                    store[m][c.name].append(float(src[m][c.name][0]) if c.name in src[m] else np.nan)
        names = [c.name for c in cands if c.name not in failed]
        arr = {m: ({n: np.asarray(err[m][n]) for n in names}, {n: np.asarray(tau[m][n]) for n in names})
               for m in metrics}
        states = [status(arr[m][0], arr[m][1], len(splits), n_fit, n_held, z, min_splits) for m in metrics]
        if used >= len(splits) or all(done for done, _ in states):
            break
        out = set.intersection(*(o for _, o in states)) if states else set()
        active = [c for c in active if c.name not in out and c.name not in failed]
    names = [c.name for c in cands if c.name not in failed]
    res = evaluation(list(splits[:used]), n_fit, n_held, names, failed=failed)
    res.err = {m: {n: np.asarray(err[m][n]) for n in names} for m in metrics}
    res.tau = {m: {n: np.asarray(tau[m][n]) for n in names} for m in metrics}
    return res
