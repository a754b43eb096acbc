"""Simulation harness: does a calibration method recover the human run scores from a synthetic judge?

For replication ``r = 1..R`` (one ``numpy`` Generator seeded once, so the study is reproducible):

1. draw a synthetic judge from the human labels through a confusion matrix ``C[h, j] = P(judge j | human h)``
   (``simulate.simulate_codes``; default the paper's Figure 6 matrix, row-normalised);
2. split the topics into calibration and held-out topics (``design="split"``: a random ``holdout`` share per
   replication; ``design="kfold"``: ``folds`` folds) and, for every method, fit on the calibration topics'
   human + judge labels and apply to the held-out topics' judge labels;
3. compare each held-out run score with the *true* one, the human run score on the same held-out topics.

Use ``design="split"`` (the default) to judge bias.  Under ``kfold`` a replication's folds reuse each topic
as calibration data for the other folds, so fold errors are not independent: for PPI, whose error on fold f
is ``mean_{L_f} Delta - mean_{U_f} Delta``, the fold-size-weighted errors cancel exactly when folds are equal,
and its kfold "bias" is near zero by construction, not by merit.

Read-out per method and metric, over all (replication, fold, run) estimates ``e = estimate - truth``:

* ``bias`` = mean e; ``mean_abs_bias`` = mean over runs of |mean over replications of e| (the run-level
  systematic error; its noise floor is about ``sd(e) / sqrt(R)``); ``bias_reduction`` = 1 - mean_abs_bias of
  the method / mean_abs_bias of the raw judge;
* ``rmse`` = sqrt(mean e^2), ``mae`` = mean |e|;
* ``coverage`` = share of intervals (nominal ``level``) that contain the truth, ``mean_ci_width`` and
  ``median_ci_width`` (the mean is sensitive to the rare replication whose calibration sample leaves a
  misclassification matrix nearly singular);
* ``tau_before`` / ``tau_after``: Kendall tau-b (run, per-topic average, pooled) of raw / corrected scores
  against the human scores on the held-out topics, averaged over replications.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from metaeval.calibration.pairs import Pairs, pairs_from_labelset
from metaeval.simulation import DEFAULT_CONFUSION, resolve_confusion, simulate_codes
from metaeval.calibration.validate import DEFAULT_METHODS, FoldRecord, cross_validate_pairs, topic_folds
from metaeval.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

log = logging.getLogger(__name__)
DESIGNS = ("split", "kfold")


def estimate_confusion(human: "LabelSet", judge: "LabelSet") -> np.ndarray:
    """3x3 counts of (human, judge) labels on the pairs both sides labelled (FAILED on either side left out),
    for simulating a judge like an observed one."""
    from metaeval.calibration.pairs import align_pairs

    jp, h = align_pairs(human, judge)
    ok = (h >= 0) & (jp.sup >= 0)
    if not ok.any():
        raise ConfigError(f"{human.name} and {judge.name} share no validly labelled (qid, run_id, nugget_id) pair")
    counts = np.zeros((3, 3))
    np.add.at(counts, (h[ok].astype(int), jp.sup[ok].astype(int)), 1)
    return counts


def _plan(n_topics: int, design: str, holdout: float, folds: int, rng: np.random.Generator) -> list[np.ndarray]:
    if design == "kfold":
        return topic_folds(n_topics, folds, rng)
    if design == "split":
        k = int(round(holdout * n_topics))
        if not 1 <= k < n_topics - 1:
            raise ConfigError(f"holdout share {holdout} leaves {k} held-out topic(s) of {n_topics}")
        return [np.sort(rng.choice(n_topics, size=k, replace=False))]
    raise ConfigError(f"design {design!r}; expected one of {', '.join(DESIGNS)}")


def run_study(human: "LabelSet | Pairs", confusion: Any = DEFAULT_CONFUSION, reps: int = 200, seed: int = 0,
              methods: Sequence[str] = DEFAULT_METHODS, metrics: Sequence[str] = ("v_strict", "a_strict"),
              design: str = "split", holdout: float = 0.25, folds: int = 5, level: float = 0.95,
              options: dict[str, Any] | None = None, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Run the simulation study; returns a JSON-ready dict (see the module docstring)."""
    hp = human if isinstance(human, Pairs) else pairs_from_labelset(human)
    conf = resolve_confusion(confusion)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    records: list[tuple[int, FoldRecord]] = []
    for r in range(reps):
        judge = hp.with_support(simulate_codes(hp.sup, conf, rng))
        plan = _plan(len(hp.qids), design, holdout, folds, rng)
        recs = cross_validate_pairs(judge, hp.sup, methods, folds, rng, metrics, level, options, tau="fast", plan=plan)
        records.extend((r, rec) for rec in recs)
        if progress:
            progress(r + 1)
    out = summarize_study(records, methods, metrics, reps)
    out["config"] = {"reps": reps, "seed": seed, "design": design, "holdout": holdout if design == "split" else None,
                     "folds": folds if design == "kfold" else None, "level": level, "methods": list(methods),
                     "metrics": list(metrics), "confusion": np.round(conf, 6).tolist(),
                     "confusion_name": confusion if isinstance(confusion, str) else "array",
                     "n_topics": len(hp.qids), "n_runs": len(hp.run_ids), "n_pairs": int(len(hp.sup))}
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


def _figures(err: np.ndarray, runs: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None, truth: np.ndarray) -> dict[str, Any]:
    ok = np.isfinite(err)
    e, rr = err[ok], runs[ok]
    per_run = np.bincount(rr, weights=e) / np.maximum(np.bincount(rr), 1)
    seen = np.bincount(rr) > 0
    fig = {"n": int(ok.sum()), "bias": float(e.mean()), "mean_abs_bias": float(np.abs(per_run[seen]).mean()),
           "max_abs_bias": float(np.abs(per_run[seen]).max()),
           "rmse": float(np.sqrt(np.mean(e ** 2))), "mae": float(np.abs(e).mean())}
    if lo is not None:
        has = ok & np.isfinite(lo) & np.isfinite(hi)
        fig["coverage"] = float(((lo[has] <= truth[has]) & (truth[has] <= hi[has])).mean()) if has.any() else None
        fig["mean_ci_width"] = float((hi[has] - lo[has]).mean()) if has.any() else None
        fig["median_ci_width"] = float(np.median(hi[has] - lo[has])) if has.any() else None
    return fig


def summarize_study(records: list[tuple[int, FoldRecord]], methods: Sequence[str], metrics: Sequence[str], reps: int) -> dict[str, Any]:
    out: dict[str, Any] = {"raw": {}, "methods": {m: {} for m in methods}}
    for metric in metrics:
        rs = [rec for _, rec in records if rec.metric == metric]
        for method in methods:
            sel = [rec for rec in rs if rec.method == method]
            truth = np.concatenate([x.truth for x in sel])
            runs = np.concatenate([np.arange(len(x.truth)) for x in sel])
            est = np.concatenate([x.est for x in sel])
            raw = np.concatenate([x.raw for x in sel])
            lo, hi = np.concatenate([x.lo for x in sel]), np.concatenate([x.hi for x in sel])
            fig = _figures(est - truth, runs, lo, hi, truth)
            if metric not in out["raw"]:
                out["raw"][metric] = _figures(raw - truth, runs, None, None, truth)
                out["raw"][metric]["tau"] = _mean_tau([x.tau_before for x in sel])
            base = out["raw"][metric]["mean_abs_bias"]
            fig["bias_reduction"] = float(1.0 - fig["mean_abs_bias"] / base) if base > 0 else None
            fig["tau_before"] = out["raw"][metric]["tau"]
            fig["tau_after"] = _mean_tau([x.tau_after for x in sel])
            out["methods"][method][metric] = fig
    return out


def _mean_tau(taus: list[dict[str, float]]) -> dict[str, float | None]:
    res = {}
    for lv in ("run", "topic_avg", "pooled"):
        v = np.array([t.get(lv, np.nan) for t in taus], dtype=float)
        res[lv] = float(np.nanmean(v)) if np.isfinite(v).any() else None
    return res
