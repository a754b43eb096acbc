"""Leave-topics-out K-fold validation of calibration methods.

Topics are shuffled with the seed and dealt into ``K`` folds.  For each fold, every method is fitted on the
other folds' topics (human + judge labels) and applied to the held-out fold's *judge* labels only; the result
is compared with the held-out *human* scores.  A fold's fitted and evaluated topics are disjoint; this is
asserted in code (``check_disjoint``), never assumed.

Per method and metric the read-out is (means over folds x runs unless said otherwise):

* ``mae_before`` / ``mae_after``: mean |run score - human run score| of the raw judge / the correction;
* ``bias_before`` / ``bias_after``: mean signed error; ``abs_bias_*``: mean over runs of |mean error over folds|;
* ``coverage``: share of held-out run scores inside the method's CI (nominal ``level``);
* ``tau_before`` / ``tau_after``: Kendall tau-b at the run, per-topic-average and pooled levels between human
  and judge / corrected scores on the held-out topics, averaged over folds.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from metaeval.calibration.methods.base import ArrayPrediction, get_method
from metaeval.calibration.pairs import METRICS, Pairs, align_pairs

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

log = logging.getLogger(__name__)
DEFAULT_METHODS: tuple[str, ...] = ("posterior", "matrix", "matrix_unconstrained", "ordinal", "ppi")


def topic_folds(n_topics: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Shuffle topic indices and deal them into ``k`` folds (sizes differ by at most one)."""
    from metaeval.errors import ConfigError

    if k < 2 or k > n_topics:
        raise ConfigError(f"--folds {k}: need 2 <= K <= number of topics ({n_topics})")
    perm = rng.permutation(n_topics)
    return [np.sort(perm[i::k]) for i in range(k)]


def check_disjoint(fit_topics: Sequence[int], eval_topics: Sequence[int]) -> None:
    """Refuse to evaluate a calibration on topics it was fitted on."""
    overlap = set(np.asarray(fit_topics).tolist()) & set(np.asarray(eval_topics).tolist())
    if overlap:
        raise AssertionError(f"calibration evaluated on {len(overlap)} topic(s) it was fitted on: {sorted(overlap)[:5]}")


@dataclass
class FoldRecord:
    """One (fold, method, metric) outcome on held-out topics: arrays over runs."""

    fold: int
    method: str
    metric: str
    truth: np.ndarray
    raw: np.ndarray
    est: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    tau_before: dict[str, float] = field(default_factory=dict)
    tau_after: dict[str, float] = field(default_factory=dict)


def fit_apply(method: str, train_j: Pairs, train_h: np.ndarray, test_j: Pairs, metrics: Sequence[str],
              level: float, rng: np.random.Generator, options: dict[str, Any] | None = None) -> ArrayPrediction:
    m = get_method(method)
    opts = dict((options or {}).get(method, {}))
    model = m.fit_pairs(train_j, train_h, **opts)
    return m.apply_pairs(model, test_j, metrics=metrics, level=level, rng=rng)


def cross_validate_pairs(judge: Pairs, human: np.ndarray, methods: Sequence[str] = DEFAULT_METHODS, folds: int = 5,
                         rng: np.random.Generator | None = None, metrics: Sequence[str] = METRICS, level: float = 0.95,
                         options: dict[str, Any] | None = None, tau: str = "fast",
                         plan: Sequence[np.ndarray] | None = None) -> list[FoldRecord]:
    """K-fold validation on aligned arrays; returns one record per (fold, method, metric).

    ``tau``: ``"fast"`` (``tau3_matrix``), ``"analysis"`` (``metaeval.analysis.levels.tau_levels`` on per-answer
    tables) or ``"none"``.  ``plan``: explicit held-out topic index sets (default: ``folds`` random folds).
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    human_p = judge.with_support(human)
    records: list[FoldRecord] = []
    plan = topic_folds(len(judge.qids), folds, rng) if plan is None else plan
    for f, held in enumerate(plan):
        train = np.setdiff1d(np.arange(len(judge.qids)), held)
        check_disjoint(train, held)
        tj, th = judge.select_topics(train), human_p.select_topics(train).sup
        ej, eh = judge.select_topics(held), human_p.select_topics(held)
        check_disjoint(np.unique(tj.ans_topic), np.unique(ej.ans_topic))
        truth_a, raw_a = eh.observed_scores(metrics), ej.observed_scores(metrics)
        preds = {m: fit_apply(m, tj, th, ej, metrics, level, rng, options) for m in methods}
        tau_fn = _tau_function(ej, tau)
        for metric in metrics:
            truth, raw = eh.run_means(truth_a[metric]), ej.run_means(raw_a[metric])
            tb = tau_fn(metric, truth_a[metric], raw_a[metric], truth, raw)
            for m, p in preds.items():
                ta = tau_fn(metric, truth_a[metric], p.answers[metric], truth, p.run[metric])
                records.append(FoldRecord(f, m, metric, truth, raw, p.run[metric], p.lo.get(metric, np.full_like(truth, np.nan)),
                                          p.hi.get(metric, np.full_like(truth, np.nan)), tb, ta))
    return records


def _tau_function(ej: Pairs, how: str):
    """f(metric, ref_answers, cand_answers, ref_run, cand_run) -> {run, topic_avg, pooled} on held-out topics."""
    from metaeval.calibration.tau import tau3_matrix, tau_before_after

    present = np.unique(ej.ans_run)
    if how == "none":
        return lambda *a: {}
    if how == "fast":
        grid = _grid(ej)
        return lambda metric, ra, ca, rr, cr: tau3_matrix(grid(ra), grid(ca), rr[present], cr[present])
    import pandas as pd

    frame = ej.answers_frame()
    runs = pd.Index(np.asarray(ej.run_ids, dtype=object)[present])

    def analysis_tau(metric, ra, ca, rr, cr):
        ref, cand = frame.assign(**{metric: ra}), frame.assign(**{metric: ca})
        out = tau_before_after(ref, cand, metric, pd.Series(rr[present], index=runs), pd.Series(cr[present], index=runs))
        return {k: out[k] for k in ("run", "topic_avg", "pooled")}

    return analysis_tau


def _grid(p: Pairs):
    """Callable turning per-answer values into a dense (topic, run) matrix over the held-out topics (NaN for
    a run that did not answer a topic)."""
    topics = np.unique(p.ans_topic)
    runs = np.unique(p.ans_run)
    ti = np.searchsorted(topics, p.ans_topic)
    ri = np.searchsorted(runs, p.ans_run)

    def grid(values: np.ndarray) -> np.ndarray:
        out = np.full((len(topics), len(runs)), np.nan)
        out[ti, ri] = values
        return out

    return grid


def _renumber_topics(p: Pairs) -> Pairs:
    """Drop topics without answers from ``qids`` so that folds deal only labelled topics."""
    from dataclasses import replace

    used = np.unique(p.ans_topic)
    remap = np.full(len(p.qids), -1)
    remap[used] = np.arange(len(used))
    return replace(p, ans_topic=remap[p.ans_topic], qids=tuple(p.qids[i] for i in used))


def summarize(records: list[FoldRecord]) -> dict[str, dict[str, dict[str, Any]]]:
    """Aggregate fold records into ``{method: {metric: figures}}`` (see the module docstring)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    keys = sorted({(r.method, r.metric) for r in records})
    for method, metric in keys:
        rs = [r for r in records if r.method == method and r.metric == metric]
        truth = np.stack([r.truth for r in rs])
        raw, est = np.stack([r.raw for r in rs]), np.stack([r.est for r in rs])
        lo, hi = np.stack([r.lo for r in rs]), np.stack([r.hi for r in rs])
        e0, e1 = raw - truth, est - truth
        ok = np.isfinite(truth) & np.isfinite(est)
        has_ci = np.isfinite(lo) & np.isfinite(hi) & ok
        cov = ((lo <= truth) & (truth <= hi))[has_ci]
        fig = {
            "n_folds": len(rs), "n_estimates": int(ok.sum()),
            "mae_before": _m(np.abs(e0[ok])), "mae_after": _m(np.abs(e1[ok])),
            "bias_before": _m(e0[ok]), "bias_after": _m(e1[ok]),
            "abs_bias_before": _m(np.abs(_colmean(np.where(ok, e0, np.nan)))),
            "abs_bias_after": _m(np.abs(_colmean(np.where(ok, e1, np.nan)))),
            "rmse_before": float(np.sqrt(np.mean(e0[ok] ** 2))), "rmse_after": float(np.sqrt(np.mean(e1[ok] ** 2))),
            "coverage": _m(cov) if cov.size else None,
            "mean_ci_width": _m((hi - lo)[has_ci]) if has_ci.any() else None,
        }
        for side in ("before", "after"):
            taus = [getattr(r, f"tau_{side}") for r in rs if getattr(r, f"tau_{side}")]
            if taus:
                fig[f"tau_{side}"] = {lv: _m(np.array([t[lv] for t in taus], dtype=float)) for lv in ("run", "topic_avg", "pooled")}
        out.setdefault(method, {})[metric] = fig
    return out


def _colmean(x: np.ndarray) -> np.ndarray:
    """Column means over finite entries (NaN for a column with none, without a warning)."""
    n = np.isfinite(x).sum(axis=0)
    return np.where(n > 0, np.nansum(x, axis=0) / np.maximum(n, 1), np.nan)


def _m(x: np.ndarray) -> float | None:
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else None


def cross_validate(human: "LabelSet", judge: "LabelSet", methods: Sequence[str] = DEFAULT_METHODS, folds: int = 5,
                   seed: int = 0, metrics: Sequence[str] = METRICS, level: float = 0.95,
                   options: dict[str, Any] | None = None) -> dict[str, Any]:
    """K-fold validation on label sets (pairs matched on qid, run_id, nugget_id; topics need human labels)."""
    from metaeval.errors import ConfigError

    jp, h = align_pairs(human, judge)
    labelled_answer = np.bincount(jp.ans, weights=h >= 0, minlength=jp.n_answers) > 0
    labelled = np.bincount(jp.ans_topic[labelled_answer], minlength=len(jp.qids)) > 0
    if labelled.sum() < folds:
        raise ConfigError(f"{_src(human)} vs {_src(judge)}: only {int(labelled.sum())} topic(s) carry both human and judge "
                          f"labels on the same (topic, run, nugget) - {_overlap(human, judge)}; need at least {folds}")
    # validate only where the truth is known: answers with human labels, renumbered to the labelled topics
    h = h[labelled_answer[jp.ans]]
    jp = jp.select_answers(labelled_answer)
    jp = _renumber_topics(jp)
    recs = cross_validate_pairs(jp, h, methods, folds, np.random.default_rng(seed), metrics, level, options, tau="analysis")
    return {"folds": folds, "seed": seed, "level": level, "n_topics": int(labelled.sum()), "n_runs": len(jp.run_ids),
            "methods": summarize(recs), "tau_note": "tau-b; per fold on held-out topics, averaged over folds"}


def _src(ls: "LabelSet") -> str:
    """The file a label set was read from, else its name."""
    return str((ls.provenance or {}).get("path") or ls.name)


def _overlap(human: "LabelSet", judge: "LabelSet") -> str:
    """Say which side of the overlap is missing: topics, runs, or the (topic, run) cells."""
    hq, jq = set(human.labels["qid"]), set(judge.labels["qid"])
    hr, jr = set(human.labels["run_id"]), set(judge.labels["run_id"])
    return (f"shared topics {len(hq & jq)} (human {len(hq)}, judge {len(jq)}), "
            f"shared runs {len(hr & jr)} (human {len(hr)}, judge {len(jr)})")
