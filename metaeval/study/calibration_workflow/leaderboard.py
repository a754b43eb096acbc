"""The calibrated leaderboard: an estimate of the human leaderboard over the whole track, with intervals.

Estimand (PPI's own, Angelopoulos et al. 2023): for run ``r``, the human run score over every topic the judge
scored, ``theta_r = (n_L mean_L H + n_U mean_U H) / (n_L + n_U)``, where ``L`` are the human-labelled topics (the
run's ``n_L`` topics with a human score) and ``U`` the judge-only topics (``n_U``).  The first part is observed;
the second is estimated by the corrected judge on ``U`` (the method fitted on every labelled topic):

    theta_hat_r = (n_L mean_L H + n_U theta_hat_U) / (n_L + n_U),

and since ``mean_L H`` is known exactly, the interval is ``[(n_L mean_L H + n_U lo_U) / N, (n_L mean_L H + n_U hi_U)
/ N]``: the judge-only interval ``[lo_U, hi_U]`` (whose variance ``s^2 (1/n_L + 1/n_U)`` holds both the labelled
sample, through the fitted correction, and the judge-only topics' own spread) scaled by the judge-only share
``n_U / N``.  It lies inside [0, 1] because ``[lo_U, hi_U]`` does.  With no judge-only topics the human score is
observed everywhere and no interval is needed (``null``).

Columns: ``human_estimate`` (+ ``_ci``, ``_rank``) the estimate above; ``human_labelled`` the human run score on the
labelled topics; ``corrected_judge_only`` (+ ``_ci``) the corrected judge on the judge-only topics (an estimate of
the human score there); ``judge_score`` (+ ``_ci``, ``_rank``) the judge's own run score over every judge topic
with its topic-bootstrap interval - an interval for the *judge's* score, from the one raw leaderboard
(:func:`metaeval.study.leaderboard.raw_leaderboards`, seeded by ``analysis.seed``), never shown as an interval
for the human score.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from metaeval.io.jsonl import finite_or_none as _f
from metaeval.study.calibration_workflow.data import nanmean


def calibrated_leaderboard(metric: str, sel: dict[str, Any], data, cands, full, judge_rows: dict[str, dict]) -> dict[str, Any]:
    """Rows per run (see the module docstring), sorted by ``human_estimate_rank``: the point of the chosen method
    (``sel['method']``), the interval of ``sel['intervals_by']`` widened to contain it
    (:func:`metaeval.study.calibration_workflow.procedure.shown_interval`)."""
    from metaeval.analysis.ranks import ranks
    from metaeval.study.calibration_workflow.procedure import shown_interval, whole_track

    H, J = data.H[metric], data.J[metric]
    lab, only = data.labelled, data.judge_only
    method, ci_by = sel["method"], sel["intervals_by"]
    n_l = np.isfinite(H[lab]).sum(axis=0).astype(float)
    h_l = nanmean(H[lab], axis=0)
    n_u = np.isfinite(J[only]).sum(axis=0).astype(float) if len(only) else np.zeros(len(data.runs))
    by = {c.name: c for c in cands}
    nan = np.full(len(data.runs), np.nan)
    est_u, lo_u, hi_u = nan, nan, nan
    if len(only):
        est_u = by[method].apply(full.get(by[method]), only, False)[metric].est
        pu = by[ci_by].apply(full.get(by[ci_by]), only, True)[metric]
        with np.errstate(invalid="ignore"):
            lo_u, hi_u = np.fmin(pu.lo, est_u), np.fmax(pu.hi, est_u)
    est = whole_track(H[lab], J[lab], est_u, n_u, by[method].uses_labels)
    lo, hi = shown_interval(H[lab], lo_u, hi_u, n_u, est)
    runs = list(data.runs)
    est_rank = ranks(dict(zip(runs, est.tolist())))
    lab_rank = ranks(dict(zip(runs, h_l.tolist())))
    judge = {r: (judge_rows.get(r) or {}) for r in runs}
    judge_rank = ranks({r: (judge[r].get("raw") if judge[r].get("raw") is not None else float("nan")) for r in runs})
    rows = []
    for i, run in enumerate(runs):
        row = {"run_id": run, "human_estimate": _f(est[i]),
               "human_estimate_ci": [_f(lo[i]), _f(hi[i])] if n_u[i] > 0 else None,
               "human_estimate_rank": est_rank[run],
               "human_labelled": _f(h_l[i]), "human_labelled_rank": lab_rank[run] if np.isfinite(h_l[i]) else None,
               "judge_score": judge[run].get("raw"), "judge_score_ci": judge[run].get("raw_ci"),
               "judge_score_rank": judge_rank[run], "n_human_labelled": int(n_l[i]), "n_judge_only": int(n_u[i])}
        if len(only):
            row.update({"corrected_judge_only": _f(est_u[i]), "corrected_judge_only_ci": [_f(lo_u[i]), _f(hi_u[i])]})
        rows.append(row)
    rows.sort(key=lambda x: (x["human_estimate_rank"], x["run_id"]))
    where = ("the judge's own scores on every topic (human labels unused)" if method == "raw" else
             f"human labels on the human-labelled topics, {method} on the judge-only topics")
    cols = {"human_estimate": f"estimated human run score over the whole track: {where}; interval for the human score "
                              f"by {sel.get('intervals', ci_by)} on the judge-only topics (carried to the whole track), "
                              "widened to contain the point",
            "human_labelled": "human run score over the human-labelled topics (observed)",
            "corrected_judge_only": f"{method} on the judge-only topics (fitted on every human-labelled topic where "
                                    "it fits anything): an estimate of the human run score there, with the interval",
            "judge_score": "the judge's own run score over every judge topic; its interval (topic bootstrap, analysis.seed) "
                           "is for the judge's score, not the human's"}
    return {"metric": metric, "estimand": "human run score over every judge topic (human-labelled + judge-only)",
            "estimated_by": method, "intervals_by": ci_by, "chosen": method, "intervals_why": sel["intervals_why"],
            "human_labelled_topics": int(len(lab)), "judge_only_topics": int(len(only)),
            "columns": cols, "rows": rows}
