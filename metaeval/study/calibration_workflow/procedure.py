"""One procedure, evaluated as used: the decision behind the leaderboard, at the size it is applied.

**What is decided.**  ``n_L`` topics carry human labels, ``n_U`` only judge labels.  The leaderboard estimates each
run's human score over all ``N = n_L + n_U`` topics.  Every candidate gives a *whole-track* run score:

* ``raw``: the judge's score on every topic, ``(sum_L J + sum_U J) / N`` (no human label used);
* ``composite``: human labels where they exist, the raw judge elsewhere, ``(sum_L H + n_U mean_U J) / N``;
* a correction ``c`` (``ppi``, ``ppi_pp``, ``regression``, label-level): fitted on ``L``, applied to ``U``:
  ``(sum_L H + n_U theta^c_U) / N`` (:func:`whole_track`).

**How it is judged** (:func:`evaluate`): ``S`` random splits of the labelled topics (``repeats``, default 20)
into a fit part ``A`` and a held-out part ``B`` whose sizes mimic ``n_L : n_U``
(:func:`metaeval.calibration.crossfit.applied_split_sizes`; when ``n_U = 0`` the fit share is ``1 - 1/folds``).
On each split every candidate is fitted on ``A`` and applied to ``B`` exactly as it would be on the track, and its
whole-track score over ``A + B`` is compared with the human one there: error = mean over runs of ``|est - H|``,
run-level Kendall tau-b, and - for the intervals shown, PPI++'s bootstrap-t interval on ``B`` carried to the
whole track and widened to contain this candidate's point - coverage and width.  Differences to raw are paired
over splits with the corrected resampled SE of Nadeau & Bengio (2003)
(:func:`metaeval.calibration.crossfit.corrected_resampled_se`); "beyond noise" = by more than that one SE.

**The rule** (:func:`decide`), per metric:

1. ``composite`` replaces ``raw`` when its mean error is lower and its tau is not below raw's beyond noise;
2. a correction replaces that baseline only if it beats the baseline's error by more than one SE *and* its tau
   is not below raw's beyond noise (so no leaderboard is shown whose held-out error or tau is worse than raw's
   beyond noise); of those that pass, the lowest error wins;
3. with fewer than ``min_topics`` human-labelled topics or fewer than 3 runs nothing can be decided: no split is
   computed (nothing it could yield would be used) and ``composite`` (nothing fitted) is shown.

**Intervals**, whatever point is chosen: PPI++'s per-run bootstrap-t interval for the human score
(:func:`metaeval.calibration.scorelevel.bootstrap_t_bounds`), widened to contain the shown point when it lies
outside (coverage can only rise).  The held-out coverage reported for each candidate is of exactly that interval.

**Nested evaluation** (:func:`nested`): the first ``nested_splits`` splits are re-used as outer splits; inside
each outer fit part ``A_o`` the whole procedure above (:func:`run_procedure`, the same function with the same
settings, sizes mimicking ``|A_o| : |B_o|``, the same fallback) makes its choice, which is scored on the outer
split.  Its mean error and tau beside raw's are the honest figures for the procedure as used (at ``|A_o|``
labelled topics, a little fewer than ``n_L``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from metaeval.study.calibration_workflow.defaults import DEFAULT_POINT, INTERVALS

#: fewest runs on which a choice can be made (run-level tau needs 3)
MIN_RUNS = 3


def whole_track(H_lab: np.ndarray, J_lab: np.ndarray, est_u: np.ndarray, n_u: np.ndarray,
                uses_labels: bool) -> np.ndarray:
    """Per-run score over the labelled topics (human scores, or the judge's for raw) and ``n_u`` applied topics
    scored ``est_u``: ``(sum_L X + n_u est_u) / (n_L + n_u)`` (``X`` = ``H_lab`` or ``J_lab``); ``mean_L X``
    where ``n_u = 0``."""
    return _whole_track(labelled_sums(H_lab if uses_labels else J_lab), est_u, n_u)


def labelled_sums(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per run, the number ``n_L`` and the sum ``sum_L X`` of the finite values of ``X`` (labelled topics x runs):
    the labelled part of :func:`whole_track`, the same for every candidate of a split (computed once there)."""
    ok = np.isfinite(X)
    return ok.sum(axis=0).astype(float), np.where(ok, X, 0.0).sum(axis=0)


def _whole_track(sums: tuple[np.ndarray, np.ndarray], est_u: np.ndarray, n_u: np.ndarray) -> np.ndarray:
    """:func:`whole_track` from the labelled part's :func:`labelled_sums`."""
    n_l, s_l = sums
    n_u = np.asarray(n_u, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        part_u = np.where(n_u > 0, n_u * np.asarray(est_u, dtype=float), 0.0)
        return np.where(n_l + n_u > 0, (s_l + part_u) / (n_l + n_u), np.nan)


def shown_interval(H_lab: np.ndarray, lo_u: np.ndarray, hi_u: np.ndarray, n_u: np.ndarray,
                   point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The whole-track interval shown beside ``point``: the applied-topic interval carried to the whole track
    (the labelled part is observed) and widened to contain ``point``."""
    return _shown_interval(labelled_sums(H_lab), lo_u, hi_u, n_u, point)


def _shown_interval(h_sums, lo_u, hi_u, n_u, point) -> tuple[np.ndarray, np.ndarray]:
    """:func:`shown_interval` from the human scores' :func:`labelled_sums`."""
    lo = _whole_track(h_sums, lo_u, n_u)
    hi = _whole_track(h_sums, hi_u, n_u)
    with np.errstate(invalid="ignore"):
        return np.fmin(lo, point), np.fmax(hi, point)


@dataclass
class Evaluation:
    """Per-split figures of every candidate: ``err[metric][name]`` (S,), ``tau`` (S,), ``cover`` / ``width``
    (S, R) of the interval shown with that candidate's point, ``bias`` (S, R); ``levels`` per-topic / pooled tau
    on the held-out topics of the first splits."""

    splits: list[tuple[np.ndarray, np.ndarray]]
    n_fit: int
    n_held: int
    names: list[str]
    err: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    tau: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    cover: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    width: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    bias: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    levels: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def _one_split(cands, data, metrics, split, want_ci: bool, levels: bool) -> dict[str, Any]:
    from metaeval.analysis.kendall import tau_b_batch

    A, B = split
    preds, failed = {}, {}
    for c in cands:
        ci = want_ci and c.name == INTERVALS
        fit = c.fit if ci or c.fit_point is None else c.fit_point
        apply = c.apply if ci or levels or c.apply_point is None else c.apply_point  # answers read for levels only
        try:
            preds[c.name] = apply(fit(A), B, ci)
        except Exception as exc:  # a method that cannot fit this split is recorded, never hidden
            if c.name == "raw":
                raise
            failed[c.name] = f"{type(exc).__name__}: {exc}"
    out: dict[str, Any] = {"failed": failed, "metrics": {}}
    both = np.concatenate([A, B])
    for m in metrics:
        H, J = data.H[m], data.J[m]
        truth = _nanmean(H[both])
        n_u = np.isfinite(J[B]).sum(axis=0).astype(float)
        sums = {True: labelled_sums(H[A]), False: labelled_sums(J[A])}  # the labelled part, shared by candidates
        ests = {c.name: _whole_track(sums[bool(c.uses_labels)], preds[c.name][m].est, n_u)
                for c in cands if c.name in preds}
        fig: dict[str, Any] = {"err": {}, "tau": {}, "bias": {}, "cover": {}, "width": {}, "levels": {}}
        ip = preds.get(INTERVALS, {}).get(m) if want_ci else None
        taus = _taus(ests, truth, tau_b_batch)
        for name, est in ests.items():
            ok = np.isfinite(est) & np.isfinite(truth)
            fig["err"][name] = float(np.abs(est[ok] - truth[ok]).mean()) if ok.any() else np.nan
            fig["tau"][name] = taus[name] if ok.sum() >= MIN_RUNS else np.nan
            fig["bias"][name] = est - truth
            if ip is not None:
                lo, hi = _shown_interval(sums[True], ip.lo, ip.hi, n_u, est)
                has = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(truth) & (n_u > 0)
                cov = np.full(len(truth), np.nan)
                cov[has] = (lo[has] <= truth[has]) & (truth[has] <= hi[has])
                fig["cover"][name] = cov
                fig["width"][name] = np.where(has, hi - lo, np.nan)
            if levels and preds[name][m].answers is not None:
                from metaeval.analysis.levels import levels_matrix

                p = preds[name][m]
                lv = levels_matrix(H[B], p.answers, x_run=_nanmean(H[B]), y_run=p.est)
                fig["levels"][name] = {k: float(lv[k]) for k in ("topic_avg", "pooled")}
        out["metrics"][m] = fig
    return out


def _taus(ests: dict[str, np.ndarray], truth: np.ndarray, tau_b_batch) -> dict[str, float]:
    """Run-level tau-b of every candidate's estimate with ``truth`` in one batch: a run missing on either side is
    NaN there, and a pair with a NaN counts nowhere (the same counts, so the same tau, as the runs present)."""
    names = list(ests)
    if not names:
        return {}
    est = np.stack([ests[n] for n in names])
    tru = np.broadcast_to(truth, est.shape)
    bad = ~(np.isfinite(est) & np.isfinite(tru))
    t = np.atleast_1d(tau_b_batch(np.where(bad, np.nan, est), np.where(bad, np.nan, tru)))
    return {n: float(t[k]) for k, n in enumerate(names)}


def evaluate(cands, data, metrics: Sequence[str], splits, n_fit: int, n_held: int, *, want_ci: bool,
             workers: int | str | None = 1, n_levels: int = 3, points_only: bool = False) -> Evaluation:
    """Every candidate on every split (see the module docstring); splits run in ``workers`` forked processes
    (each split's numbers depend only on its topics: the same in any process).  ``points_only``: ``err`` and
    ``tau`` only (what the rule reads; the sequential stop asks for nothing else)."""
    from metaeval.forked import fork_map

    res = fork_map(_call, split_tasks(cands, data, metrics, splits, want_ci, n_levels), workers)
    return assemble(res, cands, metrics, splits, n_fit, n_held, want_ci=want_ci, points_only=points_only)


def _call(task):
    return task()


def split_tasks(cands, data, metrics: Sequence[str], splits, want_ci: bool, n_levels: int = 3) -> list:
    """One task (a function of no argument) per split: :func:`_one_split` of every candidate there."""
    return [lambda i=i: _one_split(cands, data, metrics, splits[i], want_ci, want_ci and i < n_levels)
            for i in range(len(splits))]


def assemble(res: Sequence[dict[str, Any]], cands, metrics: Sequence[str], splits, n_fit: int, n_held: int, *,
             want_ci: bool, points_only: bool = False) -> Evaluation:
    """The :class:`Evaluation` of the per-split results ``res`` (of :func:`split_tasks`, in split order)."""
    failed: dict[str, str] = {}
    for r in res:
        for k, v in r["failed"].items():
            failed.setdefault(k, v)
    names = [c.name for c in cands if c.name not in failed]
    ev = Evaluation(splits, n_fit, n_held, names, failed=failed)
    for m in metrics:
        ev.err[m] = {n: np.array([r["metrics"][m]["err"][n] for r in res]) for n in names}
        ev.tau[m] = {n: np.array([r["metrics"][m]["tau"][n] for r in res]) for n in names}
        if points_only:
            continue
        ev.bias[m] = {n: np.stack([r["metrics"][m]["bias"][n] for r in res]) for n in names}
        if want_ci and INTERVALS in names:
            ev.cover[m] = {n: np.stack([r["metrics"][m]["cover"][n] for r in res]) for n in names}
            ev.width[m] = {n: np.stack([r["metrics"][m]["width"][n] for r in res]) for n in names}
        ev.levels[m] = {n: {k: [r["metrics"][m]["levels"][n][k] for r in res if n in r["metrics"][m]["levels"]]
                            for k in ("topic_avg", "pooled")} for n in names}
    return ev


def paired(a: np.ndarray, b: np.ndarray, n_fit: int, n_held: int) -> dict[str, float | None]:
    """Mean of ``a - b`` over splits and its corrected resampled SE."""
    from metaeval.calibration.crossfit import corrected_resampled_se

    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d = d[np.isfinite(d)]
    if not d.size:
        return {"mean": None, "se": None}
    se = corrected_resampled_se(d, n_fit, n_held)
    return {"mean": float(d.mean()), "se": se if np.isfinite(se) else None}


def decide(err: dict[str, np.ndarray], tau: dict[str, np.ndarray], n_fit: int, n_held: int) -> dict[str, Any]:
    """The rule of the module docstring on per-split errors and taus ``{name: (S,)}`` (``raw`` present)."""
    def d(a, b, x):
        return paired(x[a], x[b], n_fit, n_held)

    def tau_ok(c) -> bool:
        t = d(c, "raw", tau)
        return t["mean"] is None or t["mean"] >= -(t["se"] or 0.0)

    def mean(c) -> float:
        v = err[c][np.isfinite(err[c])]
        return float(v.mean()) if v.size else np.inf

    base, why = "raw", "composite is not better than raw"
    if "composite" in err:
        e = d("composite", "raw", err)
        if e["mean"] is not None and e["mean"] < 0 and tau_ok("composite"):
            base = "composite"
            why = f"composite's held-out error is {-e['mean']:.4f} below raw's, its tau not below raw's beyond noise"
        elif e["mean"] is not None and e["mean"] < 0:
            why = "composite's tau is below raw's beyond noise"
    passing = []
    for c in err:
        if c in ("raw", "composite"):
            continue
        e = d(c, base, err)
        if e["mean"] is not None and e["mean"] + (np.inf if e["se"] is None else e["se"]) < 0 and tau_ok(c):
            passing.append(c)
    if passing:
        c = min(passing, key=lambda x: (mean(x), x))
        e = d(c, base, err)
        return {"method": c, "verdict": "correction beats the baseline",
                "why": (f"{c} beats {base} by {-e['mean']:.4f} (> one corrected SE {e['se']:.4f}) and its tau is not "
                        "below raw's beyond noise")}
    return {"method": base, "verdict": "no correction beats the baseline",
            "why": why + "; no correction beats it by more than one corrected SE with a tau not below raw's"}


def cannot_decide(n_labelled: int, n_runs: int, min_topics: int) -> str | None:
    """Why no choice can be made (None: it can)."""
    if n_labelled < max(min_topics, 3):
        return f"too few human-labelled topics to evaluate a correction ({n_labelled} < min_topics {min_topics})"
    if n_runs < MIN_RUNS:
        return f"too few runs to compare leaderboards ({n_runs} < {MIN_RUNS})"
    return None


@dataclass
class Decision:
    choice: dict[str, dict[str, Any]]        # metric -> {method, verdict, why}
    evaluation: Evaluation | None
    n_fit: int | None
    n_held: int | None


def plan_splits(data, labelled: np.ndarray, n_applied: int, s: dict[str, Any], seed: int,
                key=()) -> tuple[int, int, list] | str:
    """``(n_fit, n_held, splits)`` of the decision for ``labelled`` topics applied to ``n_applied`` others (splits
    from stream ``calibration.splits``, keys ``key``), or why no choice can be made (:func:`cannot_decide`)."""
    from metaeval.calibration.crossfit import applied_split_sizes, applied_splits
    from metaeval.random_streams import stream

    why = cannot_decide(len(labelled), len(data.runs), s["min_topics"])
    if why:
        return why
    a, b = applied_split_sizes(len(labelled), n_applied, s["folds"])
    return a, b, applied_splits(labelled, a, s["repeats"], stream(seed, "calibration.splits", *key))


def _undecided(metrics: Sequence[str], why: str) -> Decision:
    return Decision({m: {"method": DEFAULT_POINT, "verdict": "cannot decide", "why": why} for m in metrics},
                    None, None, None)


def run_procedure(cands, data, labelled: np.ndarray, n_applied: int, s: dict[str, Any], seed: int, key=(), *,
                  want_ci: bool, workers: int | str | None = 1, sequential: bool = False) -> Decision:
    """The whole decision for ``labelled`` human-labelled topics applied to ``n_applied`` others (module
    docstring): splits from stream ``calibration.splits`` (keys ``key``), evaluation, rule per metric.
    ``sequential`` (only the choice is used, not the figures): the splits stop once the choice is settled
    (:mod:`.sequential`; the evaluation then holds the splits evaluated)."""
    metrics = s["metrics"]
    plan = plan_splits(data, labelled, n_applied, s, seed, key)
    if isinstance(plan, str):
        return _undecided(metrics, plan)
    a, b, splits = plan
    if sequential and not want_ci:
        from metaeval.study.calibration_workflow.sequential import evaluate_until_settled

        ev = evaluate_until_settled(evaluate, Evaluation, cands, data, metrics, splits, a, b)
    else:
        ev = evaluate(cands, data, metrics, splits, a, b, want_ci=want_ci, workers=workers)
    return Decision({m: decide(ev.err[m], ev.tau[m], a, b) for m in metrics}, ev, a, b)


def nested(cands, data, top: Decision, s: dict[str, Any], seed: int,
           workers: int | str | None = 1, sequential: bool = True) -> dict[str, dict[str, Any]]:
    """The procedure re-run inside the fit part of each of the first ``nested_splits`` splits and scored on the
    split (module docstring).  Per metric: ``choices`` (per outer split), ``err`` / ``raw_err`` / ``tau`` /
    ``raw_tau`` (per outer split).  Only the inner choices are used, so each inner run stops its splits once its
    choice is settled (``sequential``, :mod:`.sequential`)."""
    from metaeval.forked import fork_map

    ev = top.evaluation
    inner = fork_map(_call, nested_tasks(cands, data, ev.splits, s, seed, sequential), workers)
    return nested_figures(inner, ev, s)


def nested_tasks(cands, data, splits, s: dict[str, Any], seed: int, sequential: bool = True) -> list:
    """One task per outer split of :func:`nested` (the first ``nested_splits`` of ``splits``): the inner choice."""
    n = min(s["nested_splits"], len(splits))
    return [lambda o=o: run_procedure(cands, data, splits[o][0], len(splits[o][1]), s, seed, ("nested", o),
                                      want_ci=False, sequential=sequential).choice
            for o in range(n)]


def nested_figures(inner: Sequence[dict[str, Any]], ev: Evaluation, s: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """:func:`nested`'s figures from the inner choices ``inner`` (of :func:`nested_tasks`) and the outer ``ev``."""
    n = len(inner)
    out = {}
    for m in s["metrics"]:
        ch = [inner[o][m]["method"] for o in range(n)]
        ch = [c if c in ev.names else DEFAULT_POINT for c in ch]
        out[m] = {"choices": ch, "err": np.array([ev.err[m][c][o] for o, c in enumerate(ch)]),
                  "raw_err": ev.err[m]["raw"][:n], "tau": np.array([ev.tau[m][c][o] for o, c in enumerate(ch)]),
                  "raw_tau": ev.tau[m]["raw"][:n], "verdicts": [inner[o][m]["verdict"] for o in range(n)]}
    return out


#: what the splits' and the nested runs' tasks import lazily, imported before the map forks
#: (:func:`metaeval.forked.preload`)
TASK_MODULES = ("scipy.special", "metaeval.analysis.kendall", "metaeval.analysis.levels",
                "metaeval.study.calibration_workflow.sequential", "metaeval.calibration.ranksets",
                "metaeval.analysis.resample")


def decide_and_nest(cands, data, s: dict[str, Any], seed: int, workers: int | str | None = 1,
                    alongside: Sequence = ()) -> tuple[Decision, dict[str, dict[str, Any]] | None, list]:
    """The top decision (:func:`run_procedure` with intervals, on every human-labelled topic applied to the
    judge-only ones) and its :func:`nested` evaluation, with their tasks in *one* map over ``workers`` forked
    processes, longest first (the nested runs, then ``alongside``, then the splits) so that the cores stay busy to
    the end; ``alongside``: other independent tasks (functions of no argument) of the caller, run in the same map
    (a cell's analysis, say).  Returns ``(decision, nested figures or None, alongside's results)``.  The same
    numbers as :func:`run_procedure` then :func:`nested`: every task draws from its own stream."""
    from metaeval.forked import fork_map, preload

    metrics = s["metrics"]
    preload(TASK_MODULES)
    plan = plan_splits(data, data.labelled, len(data.judge_only), s, seed)
    if isinstance(plan, str):
        return _undecided(metrics, plan), None, fork_map(_call, list(alongside), workers)
    a, b, splits = plan
    inner = nested_tasks(cands, data, splits, s, seed) if s["nested_splits"] > 0 else []
    outer = split_tasks(cands, data, metrics, splits, want_ci=True)
    res = fork_map(_call, [*inner, *alongside, *outer], workers)
    n_in, n_al = len(inner), len(alongside)
    ev = assemble(res[n_in + n_al:], cands, metrics, splits, a, b, want_ci=True)
    top = Decision({m: decide(ev.err[m], ev.tau[m], a, b) for m in metrics}, ev, a, b)
    return top, (nested_figures(res[:n_in], ev, s) if inner else None), res[n_in:n_in + n_al]


def _nanmean(x: np.ndarray) -> np.ndarray:
    from metaeval.study.calibration_workflow.data import nanmean

    return nanmean(x, axis=0)
