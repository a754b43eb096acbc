"""Held-out figures of every candidate over repeated cross-fitting, and the decision rule that picks a method.

Input: ``R`` repeats x ``K`` outer folds (:func:`metaeval.calibration.crossfit.repeated_crossfit`).  Per candidate:

* **error**: fold error ``MAE_k`` (mean over runs of ``|theta_hat_r - H_r|`` on the fold's topics, fitted without
  them); the candidate's held-out error is the mean over the ``R K`` folds, ``+-`` the mean over repeats of the
  fold SE ``sd_k / sqrt(K)`` (repeats reuse the same topics, so their average is not a sharper SE);
* **wins**: in how many repeats it had the lowest mean fold error (raw included);
* **coverage**: share of held-out (repeat, fold, run) intervals holding the human run score on the fold's topics;
  ``coverage_worst_run`` is the lowest per-run share.  Only score-level candidates report intervals: the
  label-level methods' intervals treat label pairs as independent (no topic clustering; their actual error is
  1.3-2x the stated SE on real data), so they give point estimates only;
* **qualifies**: score-level and ``coverage >= level - 2 sqrt(level (1 - level) / (K R_runs))`` (the nominal level
  within two Monte-Carlo SEs of one repeat's ``K x runs`` held-out intervals);
* **tau**: Kendall tau-b of the held-out run scores with the human run scores on each fold, averaged (run level
  over every fold of every repeat; per-topic average and pooled over the first repeat's folds).

**Nested error**: the whole procedure (select by the inner folds, then apply) scored on each outer fold: the honest
error of "calibrate, then use what looked best"; the decision is led by it.

**Decision** (:func:`decide`): with fewer than ``min_topics`` (default 10) human-labelled topics no method is chosen
(verdict "too few human-labelled topics to choose a method": PPI++).  Cross-validation on a handful of topics cannot
tell methods apart, and with one topic per fold every repeat has the same folds, so the win share would say
"stable" about pure topic-sampling noise.  Otherwise let ``c`` be the candidate that won the most repeats.  ``c`` is chosen when it won at
least ``win_share`` (default 0.8) of the repeats and, unless ``c`` is raw, beats raw by more than one SE on the
paired fold differences while the nested error is below raw's.  Otherwise the verdict is **"unstable: methods within
noise"** and the leaderboard uses PPI++ (:data:`~metaeval.study.calibration.settings.FALLBACK`).  The leaderboard's
intervals come from the chosen method when it qualifies, else from PPI++ with the reason.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from metaeval.study.calibration.settings import FALLBACK


def fold_mae_of(fr, name: str, metric: str) -> float:
    from metaeval.calibration.crossfit import fold_mae

    p = fr.preds.get(name, {}).get(metric)
    return fold_mae(p, fr.truth[metric]) if p is not None else float("nan")


def mean_se(per_repeat: Sequence[np.ndarray]) -> dict[str, float | None]:
    """Mean over every fold of every repeat, SE = mean over repeats of the fold SE ``sd_k / sqrt(K)``."""
    vals = [np.asarray(x, dtype=float)[np.isfinite(x)] for x in per_repeat]
    vals = [v for v in vals if v.size]
    if not vals:
        return {"mean": None, "se": None}
    ses = [float(v.std(ddof=1) / np.sqrt(v.size)) for v in vals if v.size > 1]
    return {"mean": float(np.concatenate(vals).mean()), "se": float(np.mean(ses)) if ses else None}


def coverage_tolerance(level: float, n_intervals: int) -> float:
    """Two Monte-Carlo SEs of a coverage share at the nominal ``level`` over ``n_intervals`` intervals."""
    return 2.0 * float(np.sqrt(level * (1.0 - level) / max(n_intervals, 1)))


def held_out(repeats, cand, metric: str, data, level: float) -> dict[str, Any]:
    """Outer-fold figures of one candidate over every repeat (see the module docstring)."""
    from metaeval.analysis.kendall import tau_b_batch
    from metaeval.analysis.levels import levels_matrix

    name, intervals = cand.name, cand.level == "score"
    errs = [np.array([fold_mae_of(f, name, metric) for f in folds]) for folds in repeats]
    raw = [np.array([fold_mae_of(f, "none", metric) for f in folds]) for folds in repeats]
    err, hits, widths, zero, run_tau, taus = [], [], [], 0, [], {"topic_avg": [], "pooled": []}
    for i, folds in enumerate(repeats):
        for f in folds:
            p, t = f.preds[name][metric], f.truth[metric]
            ok = np.isfinite(p.est) & np.isfinite(t)
            err.append(p.est[ok] - t[ok])
            run_tau.append(float(tau_b_batch(p.est[ok], t[ok])) if ok.sum() > 2 else np.nan)
            if intervals:
                has = ok & np.isfinite(p.lo) & np.isfinite(p.hi)
                c = np.full(len(t), np.nan)
                c[has] = (p.lo[has] <= t[has]) & (t[has] <= p.hi[has])
                hits.append(c)
                widths.append((p.hi - p.lo)[has])
                zero += int(((p.hi - p.lo)[has] <= 0).sum())
            if i == 0 and p.answers is not None and ok.sum() > 2:
                lv = levels_matrix(data.H[metric][f.topics], p.answers, x_run=t, y_run=p.est)
                for k in taus:
                    taus[k].append(float(lv[k]))
    e = np.concatenate(err) if err else np.array([])
    out = {"mae": mean_se(errs), "bias": float(e.mean()) if e.size else None,
           "rmse": float(np.sqrt(np.mean(e ** 2))) if e.size else None,
           "diff_vs_raw": mean_se([a - b for a, b in zip(errs, raw)]),
           "tau": {"run": _mean(run_tau), **{k: _mean(v) for k, v in taus.items()}},
           "n_estimates": int(e.size), "intervals": "topic-clustered t" if intervals else "point estimates only",
           "coverage": None, "coverage_worst_run": None, "mean_ci_width": None, "zero_width": None, "qualifies": False}
    if intervals and hits:
        H = np.stack(hits)                       # (repeats x folds, runs)
        cov = H[np.isfinite(H)]
        per_run = _col_mean(H)
        n_one = int(np.isfinite(H[: len(repeats[0])]).sum())
        tol = coverage_tolerance(level, n_one)
        out.update({"coverage": float(cov.mean()) if cov.size else None,
                    "coverage_worst_run": float(np.nanmin(per_run)) if np.isfinite(per_run).any() else None,
                    "mean_ci_width": float(np.concatenate(widths).mean()) if cov.size else None,
                    "zero_width": zero, "coverage_needed": level - tol,
                    "qualifies": bool(cov.size and cov.mean() >= level - tol)})
    return out


def _mean(v) -> float | None:
    v = np.asarray(v, dtype=float)
    return float(v[np.isfinite(v)].mean()) if np.isfinite(v).any() else None


def _col_mean(x: np.ndarray) -> np.ndarray:
    ok = np.isfinite(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok.sum(0) > 0, np.where(ok, x, 0.0).sum(0) / np.maximum(ok.sum(0), 1), np.nan)


def repeat_winners(repeats, names: Sequence[str], metric: str) -> list[str]:
    """Per repeat: the candidate with the lowest mean outer-fold error (ties: raw first, then by name)."""
    out = []
    for folds in repeats:
        means = {c: float(np.nanmean([fold_mae_of(f, c, metric) for f in folds])) for c in names}
        means = {c: v for c, v in means.items() if np.isfinite(v)}
        out.append(min(sorted(means), key=lambda c: (means[c], c != "none")))
    return out


def nested_errors(repeats, metric: str) -> tuple[list[np.ndarray], list[list[str]]]:
    """Per repeat: the fold errors of the nested choice, and the choices."""
    errs, choices = [], []
    for folds in repeats:
        ch = [f.nested_choice.get(metric, "none") for f in folds]
        errs.append(np.array([fold_mae_of(f, c, metric) for f, c in zip(folds, ch)]))
        choices.append(ch)
    return errs, choices


def decide(candidates: dict[str, Any], winners: list[str], nested: dict, win_share: float, n_topics: int,
           min_topics: int) -> dict[str, Any]:
    """The decision rule of the module docstring; returns ``method``, ``verdict``, ``why`` and the interval source."""
    counts = {c: winners.count(c) for c in sorted(set(winners), key=lambda c: (-winners.count(c), c))}
    top, n_top, reps = next(iter(counts)), next(iter(counts.values())), len(winners)
    share = n_top / reps
    d = candidates[top]["held_out"]["diff_vs_raw"]
    beats = top == "none" or (d["mean"] is not None and d["mean"] + (d["se"] or 0.0) < 0
                              and (nested["diff_vs_raw"]["mean"] or 0.0) < 0)
    if n_topics < min_topics:
        method, verdict = FALLBACK, "too few human-labelled topics to choose a method"
        why = f"{n_topics} human-labelled topics < min_topics {min_topics}"
    elif share >= win_share and beats:
        method, verdict = top, "stable"
        why = (f"{top} won {n_top} of {reps} repeats" + ("" if top == "none" else
               f" and beats raw by {-d['mean']:.4f} (> one SE {d['se'] or 0:.4f}); the nested error is below raw's"))
    else:
        method, verdict = FALLBACK, "unstable: methods within noise"
        if share < win_share:
            why = f"no method won at least {win_share:.0%} of the {reps} repeats (most: {top}, {n_top})"
        else:
            why = f"{top} won {n_top} of {reps} repeats but does not beat raw by more than one SE, or the nested error does not"
    fb = candidates.get(FALLBACK, {})
    if candidates.get(method, {}).get("held_out", {}).get("qualifies"):
        ci_by, ci_why = method, f"{method}'s held-out coverage meets the nominal level"
    else:
        ci_by = FALLBACK
        own = candidates.get(method, {}).get("held_out", {})
        ci_why = (f"{method} gives point estimates only (label-level intervals ignore topic clustering)"
                  if own.get("intervals") == "point estimates only" else
                  f"{method}'s held-out coverage {_f2(own.get('coverage'))} is below {_f2(own.get('coverage_needed'))}")
        if method == FALLBACK:
            ci_why = "PPI++ is the fallback"
        if not fb.get("held_out", {}).get("qualifies"):
            ci_why += (f"; no method qualifies: PPI++ intervals shown (held-out coverage "
                       f"{_f2(fb.get('held_out', {}).get('coverage'))})")
    return {"method": method, "verdict": verdict, "why": why, "wins": counts, "intervals_by": ci_by,
            "intervals_why": ci_why}


def _f2(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def recommendation(metric: str, sel: dict[str, Any], candidates: dict[str, Any]) -> str:
    """One line, led by the nested error; says the verdict, the wins, and what the correction does to the ranking
    (held-out run-level tau raw vs the leaderboard's method) and to worst-run coverage."""
    from metaeval.measures import display_name

    name = display_name(metric)
    wins = ", ".join(f"{k} {v}" for k, v in sel["wins"].items())
    scope = f"{sel['repeats']} x {sel['folds']}-fold over {sel['n_topics']} human-labelled topics"
    lead = (f"nested error {_ms(sel['nested_mae'])} vs raw {_ms(sel['raw_mae'])} ({scope}; wins per repeat: {wins})")
    m, ci = sel["method"], sel["intervals_by"]
    h = candidates[ci]["held_out"]
    tau_raw = candidates["none"]["held_out"]["tau"]["run"]
    tau_m = candidates[m]["held_out"]["tau"]["run"]
    tail = (f"held-out run tau raw {_f3(tau_raw)} -> {m} {_f3(tau_m)}; intervals by {ci}: held-out coverage "
            f"{_f2(h['coverage'])}, worst run {_f2(h['coverage_worst_run'])}")
    if sel["verdict"] != "stable":
        return f"{name}: {sel['verdict']} - {sel['why']}; {lead}; leaderboard by PPI++; {tail}"
    if m == "none":
        return f"{name}: keep the raw judge scores - {sel['why']}; {lead}; {tail} ({sel['intervals_why']})"
    return f"{name}: use {m} - {sel['why']}; {lead}; {tail} ({sel['intervals_why']})"


def _ms(d: dict) -> str:
    if d.get("mean") is None:
        return "n/a"
    return f"{d['mean']:.4f}" + (f" +- {d['se']:.4f}" if d.get("se") is not None else "")


def _f3(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"
