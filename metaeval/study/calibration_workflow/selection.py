"""Held-out figures of every candidate and the one selection record, from the procedure's evaluation
(:mod:`.procedure`); the recommendation line.

Per candidate (``held_out``), over the ``S`` splits at the applied size, each figure on the *whole-track* score
(the leaderboard's estimand: human labels on the split's fit topics where the candidate uses them, its estimate on
the held-out ones, against the human score on both):

* ``mae``: mean over splits of the run-level MAE, ``+-`` the corrected resampled SE (Nadeau & Bengio 2003);
  ``diff_vs_raw``: the paired mean difference to raw (negative = better), ``+-`` its corrected SE;
* ``tau``: ``run`` = mean held-out run-level Kendall tau-b with the human leaderboard; ``tau_diff_vs_raw``
  paired with raw; ``topic_avg`` / ``pooled`` on the held-out topics of the first three splits;
* ``wins``: splits on which it had the lowest error;
* ``coverage`` / ``coverage_worst_run`` / ``mean_ci_width``: of the interval shown *with this candidate's point*
  (PPI++'s bootstrap-t interval widened to contain the point), for the human whole-track run score; ``qualifies``
  = coverage >= ``level - 2 sqrt(level (1 - level) / runs)``.

``selection`` records the one decision: ``method`` (the point estimate shown), ``intervals_by`` (always PPI++
bootstrap-t), ``verdict`` and ``why``, the nested evaluation of the same procedure (``nested_mae``,
``nested_diff_vs_raw``, ``nested_tau_diff_vs_raw``, ``nested_choices``), and ``beats_raw``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from metaeval.study.calibration_workflow.defaults import INTERVALS

INTERVALS_NAME = "PPI++ (t on the pooled-floor variance, with the per-run bootstrap-t)"


def coverage_tolerance(level: float, n_intervals: int) -> float:
    """Two Monte-Carlo SEs of a coverage share at the nominal ``level`` over ``n_intervals`` intervals."""
    return 2.0 * float(np.sqrt(level * (1.0 - level) / max(n_intervals, 1)))


def _mean(v) -> float | None:
    v = np.asarray(v, dtype=float)
    return float(v[np.isfinite(v)].mean()) if np.isfinite(v).any() else None


def _col_mean(x: np.ndarray) -> np.ndarray:
    ok = np.isfinite(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok.sum(0) > 0, np.where(ok, x, 0.0).sum(0) / np.maximum(ok.sum(0), 1), np.nan)


def mean_se(x: np.ndarray, n_fit: int, n_held: int) -> dict[str, float | None]:
    """Mean over splits and its corrected resampled SE."""
    from metaeval.calibration.crossfit import corrected_resampled_se

    v = np.asarray(x, dtype=float)
    v = v[np.isfinite(v)]
    if not v.size:
        return {"mean": None, "se": None}
    se = corrected_resampled_se(v, n_fit, n_held)
    return {"mean": float(v.mean()), "se": se if np.isfinite(se) else None}


def held_out(ev, name: str, metric: str, level: float, cand_level: str) -> dict[str, Any]:
    """Held-out figures of one candidate (see the module docstring)."""
    from metaeval.study.calibration_workflow.procedure import paired

    a, b = ev.n_fit, ev.n_held
    err, tau, bias = ev.err[metric][name], ev.tau[metric][name], ev.bias[metric][name]
    e = bias[np.isfinite(bias)]
    errs = np.stack([ev.err[metric][n] for n in ev.names])
    wins = int(sum(1 for s in range(errs.shape[1]) if np.isfinite(errs[:, s]).any()
                   and ev.names[int(np.nanargmin(errs[:, s]))] == name))
    lv = ev.levels[metric].get(name, {})
    out = {"mae": mean_se(err, a, b), "bias": float(e.mean()) if e.size else None,
           "rmse": float(np.sqrt(np.mean(e ** 2))) if e.size else None,
           "diff_vs_raw": paired(err, ev.err[metric]["raw"], a, b),
           "tau": {"run": _mean(tau), "topic_avg": _mean(lv.get("topic_avg", [])), "pooled": _mean(lv.get("pooled", []))},
           "tau_diff_vs_raw": paired(tau, ev.tau[metric]["raw"], a, b), "wins": wins,
           "splits": len(err), "fit_topics": a, "held_out_topics": b, "n_estimates": int(e.size),
           "point": "point estimate" + ("" if cand_level == "score" else " (label-level: its own intervals are not used)"),
           "intervals": f"{INTERVALS_NAME}, widened to contain this point",
           "coverage": None, "coverage_worst_run": None, "mean_ci_width": None, "zero_width": None, "qualifies": False}
    cov = ev.cover.get(metric, {}).get(name)
    if cov is not None:
        w = ev.width[metric][name]
        per_run = _col_mean(cov)
        fin = cov[np.isfinite(cov)]
        tol = coverage_tolerance(level, cov.shape[1])
        out.update({"coverage": float(fin.mean()) if fin.size else None,
                    "coverage_worst_run": float(np.nanmin(per_run)) if np.isfinite(per_run).any() else None,
                    "mean_ci_width": _mean(w), "zero_width": int((w[np.isfinite(w)] <= 0).sum()),
                    "coverage_needed": level - tol, "qualifies": bool(fin.size and fin.mean() >= level - tol)})
    return out


def selection_record(metric: str, decision, nest: dict[str, Any] | None, candidates: dict[str, Any], s: dict[str, Any],
                     n_topics: int, n_applied: int) -> dict[str, Any]:
    """The ``selection`` block: the one decision and the nested evaluation of the same procedure."""
    from metaeval.study.calibration_workflow.procedure import paired

    ch = decision.choice[metric]
    method = ch["method"]
    sel = {"method": method, "verdict": ch["verdict"], "why": ch["why"], "intervals_by": INTERVALS,
           "intervals": INTERVALS_NAME,
           "intervals_why": ("the interval method differs from the point method: points by "
                             f"{method}, intervals by {INTERVALS_NAME} widened to contain the point"
                             if method != INTERVALS else f"points and intervals by {INTERVALS_NAME}"),
           "rule": ("splits of the human-labelled topics at the applied size; composite replaces raw if its error is "
                    "lower with tau not below raw's beyond noise; a correction replaces that only if it beats it by "
                    "more than one corrected SE with tau not below raw's beyond noise; "
                    f">= {s['min_topics']} human-labelled topics and >= 3 runs"),
           "n_topics": int(n_topics), "n_applied": int(n_applied), "splits": 0, "fit_topics": decision.n_fit,
           "held_out_topics": decision.n_held, "beats_raw": False,
           "wins": {k: c["held_out"]["wins"] for k, c in candidates.items() if c.get("held_out")},
           "nested_mae": {"mean": None, "se": None}, "nested_diff_vs_raw": {"mean": None, "se": None},
           "nested_tau_diff_vs_raw": {"mean": None, "se": None}, "nested_choices": {}, "nested_splits": 0,
           "raw_mae": (candidates.get("raw", {}).get("held_out") or {}).get("mae", {"mean": None, "se": None}),
           "held_out_mae": (candidates.get(method, {}).get("held_out") or {}).get("mae", {"mean": None, "se": None}),
           "note": "held-out = whole-track figures on random splits of the human-labelled topics whose fit / held-out "
                   "sizes mimic human-labelled / judge-only; nested = the same procedure re-run inside each split's "
                   "fit topics and scored on the split; +- = corrected resampled SE (Nadeau & Bengio 2003)"}
    ev = decision.evaluation
    if ev is not None:
        d = candidates[method]["held_out"]["diff_vs_raw"]
        sel.update({"splits": len(ev.splits),
                    "beats_raw": method != "raw" and d["mean"] is not None and d["mean"] < 0})
    if nest is not None and metric in nest:
        nm = nest[metric]
        a, b = ev.n_fit, ev.n_held
        sel.update({"nested_mae": mean_se(nm["err"], a, b), "nested_diff_vs_raw": paired(nm["err"], nm["raw_err"], a, b),
                    "nested_tau_diff_vs_raw": paired(nm["tau"], nm["raw_tau"], a, b),
                    "nested_choices": {c: nm["choices"].count(c) for c in sorted(set(nm["choices"]))},
                    "nested_splits": len(nm["choices"])})
    return sel


def shown_name(method: str) -> str:
    """How the shown leaderboard is named in one line."""
    return {"raw": "the raw judge", "composite": "composite (human labels where they exist, the raw judge elsewhere)"
            }.get(method, method)


def recommendation(metric: str, sel: dict[str, Any], candidates: dict[str, Any]) -> str:
    """One line: what is shown (the one decision), why, the held-out error and tau of what is shown vs raw, the
    nested error of the procedure, and the held-out coverage of the intervals shown."""
    from metaeval.formatting import NA, fixed, mean_se
    from metaeval.measures import display_name

    name = display_name(metric)
    m = sel["method"]
    head = f"{name}: leaderboard by {shown_name(m)}; intervals by {INTERVALS_NAME}"
    if m != INTERVALS:
        head += " (the interval method differs from the point method: each interval is widened to contain its point)"
    if not sel["splits"]:
        return f"{head} - {sel['why']}: nothing evaluated, nothing fitted is shown"
    h, raw = candidates[m]["held_out"], candidates["raw"]["held_out"]
    scope = (f"{sel['splits']} splits of {sel['n_topics']} human-labelled topics, fit {sel['fit_topics']} / held out "
             f"{sel['held_out_topics']}")
    parts = [f"{head} - {sel['why']}",
             f"held-out whole-track MAE {mean_se(h['mae'], sep=' +- ', missing=NA)} vs raw {mean_se(raw['mae'], sep=' +- ', missing=NA)} ({scope})",
             f"run tau raw {fixed(raw['tau']['run'], 3, missing=NA)} -> {m} {fixed(h['tau']['run'], 3, missing=NA)}"]
    if sel.get("nested_splits"):
        ch = ", ".join(f"{k} {v}" for k, v in sel["nested_choices"].items())
        parts.append(f"nested (the same procedure inside {sel['nested_splits']} splits' fit topics): MAE "
                     f"{mean_se(sel['nested_mae'], sep=' +- ', missing=NA)}, vs raw {mean_se(sel['nested_diff_vs_raw'], sep=' +- ', missing=NA)} (chose {ch})")
    if h.get("coverage") is not None:
        parts.append(f"intervals shown: held-out coverage {fixed(h['coverage'], 2, missing=NA)}, worst run {fixed(h['coverage_worst_run'], 2, missing=NA)}"
                     + ("" if h.get("qualifies") else " (below the nominal level)"))
    return "; ".join(parts)

