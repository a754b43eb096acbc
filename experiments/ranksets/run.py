"""Rank-sets and the whole-track tau on held-back real topics (issue 30, items 3, 4 and 6).

NIST TREC 2024 RAG (21 topics, the 43 runs that answered every topic), the offline lexical judge's labels of the
NIST nuggets (``metaeval sweep ... name=nist_lexical``, see README).  Per design (``n`` of the 21 topics
human-labelled, the rest held back: the judge alone sees them) and split (drawn without replacement, stream
``calibration.rank_sets.validation``), :func:`metaeval.calibration.ranksets.pairwise_intervals` is computed from the labelled
topics only, and checked against the human leaderboard on all 21 topics (the estimand):

* rank-sets: share of splits in which every run's human rank lies in its rank-set (simultaneous coverage), mean
  rank-set size; beside them the naive per-run ranks: the point rank (coverage = every run's point rank right) and
  the per-run bootstrap rank interval (each run at 95% on its own), with their joint coverage and size;
* pairwise intervals: share of splits in which every one of the 903 intervals holds the human difference;
  share of pairs decided;
* tau: coverage and width of the 95% interval for tau_b(shown, human leaderboard on all topics), for the PPI++
  leaderboard, for the raw judge's and for the naive composite (human labels on the labelled topics, the judge on
  the rest: fitted on the labelled topics, its interval treats it as fixed); the mean estimate beside the mean true
  tau; and beside them the coverage and mean width of the bounds holding for any ranking (``track_tau``'s
  ``bounds``).

Also prints the plain and topic-clustered Stuart-Maxwell test of the lexical labels against NIST's (finding 7).

    .venv/bin/python experiments/ranksets/run.py --splits 100
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
NIST = Path("/work/shared/data/trec-rag-2024/nugget_assignment.20241108.jl")
if not NIST.exists():
    NIST = ROOT.parent / "shared" / "data" / "trec-rag-2024" / "nugget_assignment.20241108.jl"
LEXICAL = ROOT / "results" / "nist_lexical" / "cells" / "lexical__human_auto" / "labels.jsonl"
OUT = ROOT / "results" / "ranksets"


def matrices():
    from metaeval.io import load_labels
    from metaeval.study.calibration_workflow.data import CalibrationData

    human, judge = load_labels(str(NIST), name="nist"), load_labels(str(LEXICAL), name="lexical")
    d = CalibrationData(human, judge, ["v_strict"])
    H, J = d.H["v_strict"], d.J["v_strict"]
    keep = np.isfinite(H).all(0) & np.isfinite(J).all(0)
    return human, judge, H[:, keep], J[:, keep], [r for r, k in zip(d.runs, keep) if k]


def one_design(H, J, runs, n, splits, n_boot):
    from metaeval.analysis.kendall import tau_b
    from metaeval.calibration.ranksets import (TrackSample, bootstrap_rank_intervals, linear_leaderboard, pairwise_intervals,
                                               rank_sets, track_tau)
    from metaeval.random_streams import stream

    T = H.shape[0]
    truth = H.mean(0)
    true_rank = 1 + (truth[None, :] > truth[:, None]).sum(1)
    raw = J.mean(0)
    acc = {k: [] for k in ("rs_cover", "rs_size", "point_cover", "point_runs", "naive_cover", "naive_size",
                           "pair_cover", "decided", "false_decisions", "tau_ppi_cover", "tau_ppi_width",
                           "tau_ppi_est", "tau_ppi_true", "tau_raw_cover", "tau_raw_width", "tau_raw_est",
                           "tau_raw_true")}
    acc.update({f"{x}_{key}_{y}": [] for key in ("ppi", "raw", "comp", "refit") for x, y in (
        ("bound", "cover"), ("bound", "width"), ("tau", "cover"), ("tau", "width"), ("tau", "est"), ("tau", "true"))
        if f"{x}_{key}_{y}" not in acc})
    for s in range(splits):
        L = stream(s, "calibration.rank_sets.validation", n).permutation(T)[:n]
        pw = pairwise_intervals(TrackSample(H[L], J[L], J, runs), n_boot=n_boot, seed=s)
        lo, hi = rank_sets(pw)
        acc["rs_cover"].append(bool(((true_rank >= lo) & (true_rank <= hi)).all()))
        acc["rs_size"].append(float((hi - lo + 1).mean()))
        point = 1 + (pw.estimate[None, :] > pw.estimate[:, None]).sum(1)
        acc["point_cover"].append(bool((point == true_rank).all()))
        acc["point_runs"].append(float((point == true_rank).mean()))
        nlo, nhi = bootstrap_rank_intervals(pw)
        acc["naive_cover"].append(bool(((true_rank >= nlo) & (true_rank <= nhi)).all()))
        acc["naive_size"].append(float((nhi - nlo + 1).mean()))
        d = truth[pw.pair_i] - truth[pw.pair_j]
        acc["pair_cover"].append(bool(((d >= pw.lo) & (d <= pw.hi)).all()))
        dec = (pw.lo > 0) | (pw.hi < 0)
        acc["decided"].append(float(dec.mean()))
        acc["false_decisions"].append(int(((pw.lo > 0) & (d <= 0)).sum() + ((pw.hi < 0) & (d >= 0)).sum()))
        U = np.setdiff1d(np.arange(T), L)
        composite = (H[L].sum(0) + J[U].sum(0)) / T
        _, comp_reps = linear_leaderboard(TrackSample(H[L], J[L], J, runs), pw, "composite")
        for key, shown in (("ppi", "estimate"), ("raw", raw), ("comp", composite), ("refit", composite)):
            t = track_tau(pw, shown, shown_replicates=comp_reps if key == "refit" else None)
            true = tau_b(pw.estimate if key == "ppi" else shown, truth)
            acc[f"tau_{key}_cover"].append(bool(t["ci"][0] <= true <= t["ci"][1]))
            acc[f"tau_{key}_width"].append(t["ci"][1] - t["ci"][0])
            acc[f"tau_{key}_est"].append(t["estimate"])
            acc[f"tau_{key}_true"].append(true)
            acc[f"bound_{key}_cover"].append(bool(t["bounds"][0] <= true <= t["bounds"][1]))
            acc[f"bound_{key}_width"].append(t["bounds"][1] - t["bounds"][0])
    out = {"labelled": n, "held_back": T - n, "splits": splits, "n_boot": n_boot}
    for k, v in acc.items():
        v = np.asarray(v, dtype=float)
        out[k] = float(v.mean())
        if k.endswith("cover"):
            out[k + "_se"] = float(np.sqrt(v.mean() * (1 - v.mean()) / len(v)))
    return out


def stuart_maxwell_lines(human, judge):
    from metaeval.analysis.agreement import label_agreement
    from metaeval.report.model import p_text

    a = label_agreement(human, judge, n_boot=0)
    return [f"Stuart-Maxwell, lexical vs NIST support labels ({a['n']} label pairs, "
            f"{a['stuart_maxwell_clustered_topics']} topics):",
            f"  plain (labels independent): X2 = {a['stuart_maxwell_stat']:.1f} on {a['stuart_maxwell_df']} df, "
            f"{p_text(a['stuart_maxwell_p'])}",
            f"  topic-clustered Wald: X2 = {a['stuart_maxwell_clustered_stat']:.1f} on {a['stuart_maxwell_clustered_df']}"
            f" df, F({a['stuart_maxwell_clustered_df']}, {a['stuart_maxwell_clustered_topics'] - 1}) "
            f"{p_text(a['stuart_maxwell_clustered_p'])} (chi-square {p_text(a['stuart_maxwell_clustered_p_chi2'])})"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=100)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--labelled", type=int, nargs="+", default=[5, 10, 15])
    args = ap.parse_args()
    if not LEXICAL.exists():
        sys.exit(f"{LEXICAL} missing: run the sweep in experiments/ranksets/README.md first")
    t0 = time.time()
    human, judge, H, J, runs = matrices()
    rows = [one_design(H, J, runs, n, args.splits, args.n_boot) for n in args.labelled]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "ranksets.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(f"NIST 21 topics x {len(runs)} runs, V_strict, lexical judge; {args.splits} splits per design, "
          f"{args.n_boot} bootstrap resamples; estimand = the human leaderboard on all 21 topics; +- = MC SE")
    print("| labelled (held back) | rank-sets: joint coverage | mean size | point ranks: all right / share right | "
          "naive per-run intervals: joint coverage / mean size | pairs: joint coverage | pairs decided | "
          "wrong decisions per split |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['labelled']} ({r['held_back']}) | {r['rs_cover']:.2f} +- {r['rs_cover_se']:.2f} | "
              f"{r['rs_size']:.1f} of {len(runs)} | {r['point_cover']:.2f} / {r['point_runs']:.2f} | "
              f"{r['naive_cover']:.2f} / {r['naive_size']:.1f} | {r['pair_cover']:.2f} | {r['decided']:.3f} | "
              f"{r['false_decisions']:.2f} |")
    print()
    print("| labelled (held back) | shown | tau interval coverage | mean width | mean estimate | mean true tau | "
          "bounds for any ranking: coverage | mean width |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        for key, name in (("ppi", "PPI++ leaderboard"), ("raw", "raw judge"), ("comp", "composite, held fixed"),
                          ("refit", "composite, refitted in each replicate")):
            print(f"| {r['labelled']} ({r['held_back']}) | {name} | {r[f'tau_{key}_cover']:.2f} +- "
                  f"{r[f'tau_{key}_cover_se']:.2f} | {r[f'tau_{key}_width']:.3f} | {r[f'tau_{key}_est']:.3f} | "
                  f"{r[f'tau_{key}_true']:.3f} | {r[f'bound_{key}_cover']:.2f} +- {r[f'bound_{key}_cover_se']:.2f} | "
                  f"{r[f'bound_{key}_width']:.3f} |")
    print()
    print("\n".join(stuart_maxwell_lines(human, judge)))
    print(f"\n{time.time() - t0:.0f} s; wrote {OUT / 'ranksets.json'}")


if __name__ == "__main__":
    main()
