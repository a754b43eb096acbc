"""The study's rank-sets block (``calibration.json`` -> ``rank_sets``): which runs can be told apart on the
whole-track human score, each run's rank-set, indistinguishable groups, and tau with the human leaderboard.

The statistics are :mod:`metaeval.calibration.ranksets` (max-t topic bootstrap over paired prediction-powered
differences); this module takes the per-topic scores the calibrated leaderboard uses (``CalibrationData``: human
scores on the labelled topics, judge scores on every topic) and lays the result out as JSON.  Rank-sets and
decisions are PPI++'s (lambda power-tuned, pooled over runs) whatever point method the leaderboard shows; the block
says so in ``note``.  Runs without a score on every topic are left out (listed in ``runs_left_out``): their
whole-track score is over other topics than the others'.  Each tau (``tau.ppi_pp``, ``tau.raw_judge``,
``tau.shown``) carries its basic-bootstrap ``estimate`` / ``ci`` and the ``bounds`` holding for any ranking
(``bounds_method``); a ranking whose interval treats it as fixed says so in ``treated_as``, pointing to the bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: ``treated_as`` of a shown leaderboard refitted in every replicate (``ranksets.linear_leaderboard``)
REFIT_NOTE = ("refitted in every replicate ({by}: linear in the labelled topics' human-minus-judge scores, recomputed "
              "on each resample of them beside the PPI++ estimate)")

#: replicates of the rank-set bootstrap (about 1 s for 45 runs on one core)
N_BOOT = 2000


@dataclass
class RankSetIntervals:
    """The bootstrap part of a rank-sets block (:func:`rank_set_intervals`), which needs no leaderboard: it can run
    in a worker while the calibration's splits run (``calibrate_alongside``) and is laid out by
    :func:`rank_sets_block`.  ``error``: why it cannot be computed (then the rest is None)."""

    sample: Any = None
    pw: Any = None
    runs: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    topics: Any = None
    complete: Any = None
    error: str | None = None


def rank_set_intervals(data: Any, metric: str, *, level: float = 0.95, n_boot: int = N_BOOT,
                       seed: int = 0) -> RankSetIntervals:
    """The pairwise intervals of ``metric``'s whole-track PPI++ scores on the runs with a score on every topic
    (``ranksets.pairwise_intervals``, stream ``calibration.rank_sets`` of ``seed``), compacted to what the block
    reads (:meth:`~metaeval.calibration.ranksets.PairwiseIntervals.compact`)."""
    from metaeval.calibration.ranksets import TrackSample, pairwise_intervals
    from metaeval.errors import ConfigError

    H, J = data.H[metric], data.J[metric]
    lab = np.asarray(data.labelled)
    topics = np.union1d(lab, np.asarray(data.judge_only)).astype(int)
    complete = np.isfinite(H[lab]).all(axis=0) & np.isfinite(J[topics]).all(axis=0)
    runs = [r for r, ok in zip(data.runs, complete) if ok]
    left_out = [r for r, ok in zip(data.runs, complete) if not ok]
    try:
        sample = TrackSample(H[np.ix_(lab, complete)], J[np.ix_(lab, complete)], J[np.ix_(topics, complete)], runs)
        pw = pairwise_intervals(sample, level=level, n_boot=n_boot, seed=seed).compact(level)
    except ConfigError as exc:
        return RankSetIntervals(error=str(exc))
    return RankSetIntervals(sample, pw, runs, left_out, topics, complete)


def rank_sets_block(data: Any, metric: str, leaderboard: dict[str, Any] | None, *, level: float = 0.95,
                    n_boot: int = N_BOOT, seed: int = 0, intervals: RankSetIntervals | None = None) -> dict[str, Any]:
    """JSON-ready rank-sets block for ``metric`` (module docstring); ``{"status": "n/a", "reason"}`` when it
    cannot be computed (fewer than 2 labelled topics or runs).  ``intervals``: :func:`rank_set_intervals` of the
    same arguments, computed elsewhere (else here)."""
    from metaeval.calibration.letters import compact_letters, letter_columns
    from metaeval.calibration.ranksets import (FIXED_RANKING_CAVEAT, LINEAR, bootstrap_rank_intervals,
                                               linear_leaderboard, rank_sets, track_tau)

    iv = intervals if intervals is not None else rank_set_intervals(data, metric, level=level, n_boot=n_boot,
                                                                    seed=seed)
    if iv.error is not None:
        return {"status": "n/a", "reason": iv.error, "metric": metric}
    sample, pw, runs, left_out, topics, complete = iv.sample, iv.pw, iv.runs, iv.left_out, iv.topics, iv.complete
    J = data.J[metric]
    lo, hi = rank_sets(pw)
    nlo, nhi = bootstrap_rank_intervals(pw)
    groups = letter_columns(pw)
    letters = compact_letters(pw, groups)
    dec = pw.decisions()
    point_rank = 1 + (pw.estimate[None, :] > pw.estimate[:, None]).sum(axis=1)
    rows = [{"run_id": r, "estimate": float(pw.estimate[k]), "rank": int(point_rank[k]),
             "rank_set": [int(lo[k]), int(hi[k])], "naive_rank_interval": [int(nlo[k]), int(nhi[k])],
             "group": letters[k], "beats": int((dec[k] == 1).sum()), "beaten_by": int((dec[k] == -1).sum())}
            for k, r in enumerate(runs)]
    rows.sort(key=lambda x: (x["rank"], x["run_id"]))
    pairs = [{"a": runs[a], "b": runs[b], "diff": float(pw.diff[k]), "ci": [float(pw.lo[k]), float(pw.hi[k])],
              "decision": ">" if pw.lo[k] > 0 else ("<" if pw.hi[k] < 0 else "~")}
             for k, (a, b) in enumerate(zip(pw.pair_i.tolist(), pw.pair_j.tolist()))]
    decided = sum(p["decision"] != "~" for p in pairs)
    tau = {"ppi_pp": track_tau(pw, "estimate"),
           "raw_judge": {**track_tau(pw, J[np.ix_(topics, complete)].mean(axis=0)),
                         "treated_as": f"fixed: {FIXED_RANKING_CAVEAT}"}}
    shown = _shown(leaderboard, runs)
    if shown is not None and leaderboard is not None:
        # the PPI++ leaderboard is this estimator (its lambda pools every run, these only the complete ones)
        by = leaderboard.get("estimated_by")
        same = by == "ppi_pp" or np.allclose(shown, pw.estimate, atol=1e-9)
        refit = None
        if not same and by in LINEAR:  # linear in the labelled topics: refitted inside each replicate
            scores, reps = linear_leaderboard(sample, pw, by)
            refit = reps if np.allclose(scores, shown, atol=1e-9) else None  # the leaderboard's own numbers, or fixed
        if same:
            t, how = track_tau(pw, "estimate"), "the PPI++ estimate"
        elif refit is not None:
            t, how = track_tau(pw, shown, shown_replicates=refit), REFIT_NOTE.format(by=by)
        else:
            t, how = track_tau(pw, shown), f"fixed (its dependence on the labelled topics is not resampled): {FIXED_RANKING_CAVEAT}"
        tau["shown"] = {**t, "by": by, "treated_as": how}
    return {"status": "ok", "metric": metric, "method": "ppi_pp", "lambda": pw.lam, "level": level, "n_boot": n_boot,
            "seed": seed, "critical_value": pw.critical, "human_labelled_topics": pw.n_labelled, "topics": pw.n_topics,
            "runs": len(runs), "runs_left_out": left_out,
            "summary": {"pairs": len(pairs), "decided_pairs": decided,
                        "mean_rank_set_size": float(np.mean(hi - lo + 1)),
                        "mean_naive_interval_size": float(np.mean(nhi - nlo + 1)), "groups": len(groups)},
            "note": (f"rank-sets, groups and A > B decisions: PPI++ run scores over all {pw.n_topics} topics, "
                     f"{level:.0%} simultaneous over all {len(pairs)} run pairs (max-t topic bootstrap, {n_boot} "
                     f"resamples of the {pw.n_labelled} human-labelled topics), whatever point method the leaderboard shows"
                     if pw.n_labelled < pw.n_topics else
                     f"every one of the {pw.n_topics} topics is human-labelled: the human leaderboard is observed, so the "
                     "rank-sets are its ranks (ties share a range) and A > B is the observed order"),
            "columns": {"rank_set": "ranks the run can hold at the stated simultaneous confidence (1 = best)",
                        "naive_rank_interval": "per-run percentile interval of the bootstrap rank (not simultaneous)",
                        "group": "runs sharing a letter cannot be told apart (compact letter display)",
                        "beats / beaten_by": "runs it is above / below with simultaneous confidence"},
            "rows": rows, "pairs": pairs, "tau": tau}


def _shown(leaderboard: dict[str, Any] | None, runs: list[str]) -> np.ndarray | None:
    """The leaderboard's ``human_estimate`` in ``runs`` order (None when a run has none)."""
    if not leaderboard:
        return None
    by = {r["run_id"]: r.get("human_estimate") for r in leaderboard.get("rows") or []}
    vals = [by.get(r) for r in runs]
    return None if any(v is None for v in vals) else np.array(vals, dtype=float)

