"""Per-run bias of the judge and strictness by nugget importance (computed by the study, rendered by the report).

``run_bias``: for run ``r`` and metric ``m``, with ``d_tr = judge_tr - reference_tr`` the difference of the two
per-answer scores of run ``r`` on topic ``t`` (answers both sides scored),

    bias_r = sum_t d_tr / n_r            (n_r: topics of run r scored by both sides)

and a paired topic-bootstrap percentile interval from :func:`metaeval.analysis.resample.bootstrap_run_means` (the
package's one topic bootstrap, the analysis' ``bootstrap`` replicates on the stream
``random_streams.stream(analysis.seed, "analysis.topic_bootstrap")``),
``bias*_br = sum_t w_bt d_tr / sum_t w_bt 1[d_tr present]``.  Both sides are resampled together
(the same topics), so the interval is that of the difference, not of either mean.  ``mean`` is the same for the
mean over runs of ``bias_r``.  Scores are in [0, 1], so every bias and interval lies in [-1, 1].

``strictness_by_importance``: for cells whose judge labelled the reference's own nuggets, the strictness index
``P(judge < human) - P(judge > human)`` on not_support < partial_support < support, over all doubly labelled
pairs and separately for vital and okay nuggets (the reference's importance), with the topic-clustered CR1
interval on ``G - 1`` degrees of freedom of :func:`metaeval.calibration.strictness.clustered_index`; plus
``support_to_partial``: the share of the reference's ``support`` labels the judge turned into
``partial_support`` (and into ``not_support``) and ``not_raised``: the share of its ``not_support`` labels the judge
raised, per stratum - the plain-language figures of the report's summary.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from metaeval.io.jsonl import finite_or_none

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet


def run_bias(ref_scores: "pd.DataFrame", judge_scores: "pd.DataFrame", metrics: Sequence[str], *, n_boot: int,
             seed: int, level: float = 0.95) -> dict[str, Any]:
    """``{"level", "n_boot", "seed", "metrics": {m: {"mean": {...}, "runs": [{run_id, bias, ci, n_topics,
    judge, reference}, ...]}}}`` (runs in the reference's order, best first)."""
    from metaeval.analysis.resample import bootstrap_run_means, percentile_ci, run_mean_replicates

    j = ref_scores[["qid", "run_id", *metrics]].merge(judge_scores[["qid", "run_id", *metrics]], on=["qid", "run_id"],
                                                        suffixes=("_ref", "_judge"))
    qids = sorted(j["qid"].astype(str).unique())
    runs = sorted(j["run_id"].astype(str).unique())
    ti = j["qid"].astype(str).map({q: i for i, q in enumerate(qids)}).to_numpy(int)
    ri = j["run_id"].astype(str).map({r: i for i, r in enumerate(runs)}).to_numpy(int)
    boot = n_boot > 0 and bool(qids)
    out: dict[str, Any] = {"level": level, "n_boot": n_boot, "seed": seed, "n_topics": len(qids), "metrics": {}}
    for m in metrics:
        R, J = (np.full((len(qids), len(runs)), np.nan) for _ in range(2))
        R[ti, ri] = j[f"{m}_ref"].to_numpy(float)
        J[ti, ri] = j[f"{m}_judge"].to_numpy(float)
        D = J - R
        ok = np.isfinite(D)
        n = ok.sum(0)
        one = np.ones((1, len(qids)))
        est, ref_mean, judge_mean = (run_mean_replicates(np.where(ok, X, np.nan), one)[0] for X in (D, R, J))
        ci_lo = ci_hi = np.full(len(runs), np.nan)
        mean_ci = [None, None]
        if boot:  # the same resamples for every metric (same seed, purpose and topics)
            b = bootstrap_run_means(D, n_boot, seed, alpha=1 - level)  # (B, R) replicates
            ci_lo, ci_hi = b.ci_low, b.ci_high
            with warnings.catch_warnings():  # a replicate with no defined run: NaN, ignored by the interval
                warnings.simplefilter("ignore", RuntimeWarning)
                mrep = np.nanmean(b.replicates, axis=1)
            mean_ci = [finite_or_none(x) for x in percentile_ci(mrep, 1 - level)]
        rows = [{"run_id": r, "bias": finite_or_none(est[k]), "ci": [finite_or_none(ci_lo[k]), finite_or_none(ci_hi[k])], "n_topics": int(n[k]),
                 "reference": finite_or_none(ref_mean[k]), "judge": finite_or_none(judge_mean[k])} for k, r in enumerate(runs)]
        rows.sort(key=lambda x: (-(x["reference"] if x["reference"] is not None else -1), x["run_id"]))
        defined = est[np.isfinite(est)]
        out["metrics"][m] = {"mean": {"bias": finite_or_none(defined.mean()) if len(defined) else None, "ci": mean_ci},
                             "runs": rows}
    return out


def strictness_by_importance(reference: "LabelSet", judge: "LabelSet", *, n_boot: int, seed: int,
                             alpha: float = 0.05) -> dict[str, Any] | None:
    """Strictness index per importance stratum (``all``, ``vital``, ``okay``) with topic-clustered CIs; None when
    fewer than 10 pairs carry valid labels on both sides."""
    from metaeval.calibration.strictness import clustered_index, shift_frame
    from metaeval.errors import ConfigError

    try:
        df = shift_frame(reference, judge)
    except ConfigError:
        return None
    strata: dict[str, Any] = {}
    for name, sub in (("all", df), ("vital", df[df["vital"] == 1.0]), ("okay", df[df["vital"] == 0.0])):
        if len(sub) == 0:
            strata[name] = None
            continue
        ci = clustered_index(sub, alpha, n_boot, seed)
        sup, nots = sub[sub["human"] == 2], sub[sub["human"] == 0]
        strata[name] = {
            "index": finite_or_none(ci.get("strictness_index")), "ci": [finite_or_none(x) for x in ci.get("ci_cluster", [None, None])],
            "ci_method": ci.get("ci_method"), "n_pairs": int(len(sub)), "n_topics": int(ci.get("n_topics", 0)),
            "p_lower": finite_or_none((sub["shift"] < 0).mean()), "p_higher": finite_or_none((sub["shift"] > 0).mean()),
            "n_support": int(len(sup)),
            "support_to_partial": finite_or_none((sup["judge"] == 1).mean()) if len(sup) else None,
            "support_to_not": finite_or_none((sup["judge"] == 0).mean()) if len(sup) else None,
            "not_raised": finite_or_none((nots["judge"] > 0).mean()) if len(nots) else None,
        }
    return {"alpha": alpha, "strata": strata}
