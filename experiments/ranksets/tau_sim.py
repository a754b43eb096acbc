"""The whole-track tau interval on simulated tracks with run-biased judges (issue 30, item 4).

Where the NIST held-back check (``run.py``) has one track, this draws a new one per repetition: 30 topics x 12 runs,
human score = run effect (0.02 apart) + topic effect (sd 0.15) + noise (sd 0.12), clipped to [0, 1]; the judge =
human + a per-run bias (sd 0.04, larger than the gap between runs) + noise (sd 0.15); ``n`` random topics labelled.
Reported per ``n``: the share of tracks whose interval for ``tau_b(raw judge, human on all 30 topics)`` holds it,
the same for the PPI++ leaderboard's own tau, and the mean estimate beside the mean true tau (200 tracks, 300
bootstrap resamples; draws from ``numpy.random.default_rng(seed)``, seed 7 by default, as the figures quoted in
``docs/calibration.md``); then, for the raw judge, the PPI++ leaderboard and the naive composite (human labels on
the labelled topics, the judge elsewhere: fitted on them), the coverage and mean width of the bounds holding for
any ranking (``track_tau``'s ``bounds``) beside the basic-bootstrap interval's.

    .venv/bin/python experiments/ranksets/tau_sim.py            # about 1 min (load 13)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def track(rng, T=30, R=12, gap=0.02):
    effect = gap * np.arange(R)[::-1]
    topic = rng.normal(0, 0.15, size=(T, 1))
    H = np.clip(0.5 + effect[None, :] + topic + rng.normal(0, 0.12, size=(T, R)), 0, 1)
    bias = rng.normal(0, 0.04, size=R)
    J = np.clip(H + bias[None, :] + rng.normal(0, 0.15, size=(T, R)), 0, 1)
    return H, J


def main() -> None:
    from metaeval.analysis.kendall import tau_b
    from metaeval.calibration.ranksets import TrackSample, linear_leaderboard, pairwise_intervals, track_tau

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tracks", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--labelled", type=int, nargs="+", default=[5, 10, 15])
    args = ap.parse_args()
    print("| labelled of 30 | raw judge: tau interval coverage | PPI++: coverage | "
          "raw: mean estimate / mean true tau |")
    print("|---|---|---|---|")
    bounds = {}
    for n in args.labelled:
        rng = np.random.default_rng(args.seed)
        raw_cover, ppi_cover, est, true = [], [], [], []
        acc = bounds[n] = {k: {"ci": [], "ci_width": [], "bound": [], "bound_width": []} for k in ("raw", "ppi", "comp", "refit")}
        for rep in range(args.tracks):
            H, J = track(rng)
            L = rng.permutation(H.shape[0])[:n]
            truth = H.mean(0)
            names = [f"r{k}" for k in range(H.shape[1])]
            pw = pairwise_intervals(TrackSample(H[L], J[L], J, names), n_boot=300, seed=rep)
            raw = track_tau(pw, J.mean(0))
            t = tau_b(J.mean(0), truth)
            raw_cover.append(raw["ci"][0] <= t <= raw["ci"][1])
            est.append(raw["estimate"])
            true.append(t)
            ppi = track_tau(pw, "estimate")
            t = tau_b(pw.estimate, truth)
            ppi_cover.append(ppi["ci"][0] <= t <= ppi["ci"][1])
            U = np.setdiff1d(np.arange(H.shape[0]), L)
            comp_scores = (H[L].sum(0) + J[U].sum(0)) / H.shape[0]
            comp = track_tau(pw, comp_scores)
            refit = track_tau(pw, comp_scores, shown_replicates=linear_leaderboard(
                TrackSample(H[L], J[L], J, names), pw, "composite")[1])
            for key, out, shown in (("raw", raw, J.mean(0)), ("ppi", ppi, pw.estimate), ("comp", comp, comp_scores),
                                    ("refit", refit, comp_scores)):
                t = tau_b(shown, truth)
                acc[key]["ci"].append(out["ci"][0] <= t <= out["ci"][1])
                acc[key]["ci_width"].append(out["ci"][1] - out["ci"][0])
                acc[key]["bound"].append(out["bounds"][0] <= t <= out["bounds"][1])
                acc[key]["bound_width"].append(out["bounds"][1] - out["bounds"][0])
        se = np.sqrt(np.mean(raw_cover) * (1 - np.mean(raw_cover)) / args.tracks)
        print(f"| {n} | {np.mean(raw_cover):.2f} +- {se:.2f} | {np.mean(ppi_cover):.2f} | "
              f"{np.mean(est):.3f} / {np.mean(true):.3f} |")
    print()
    print("| labelled of 30 | shown | basic-bootstrap interval: coverage / mean width | bounds for any ranking: "
          "coverage / mean width |")
    print("|---|---|---|---|")
    for n, acc in bounds.items():
        for key, name in (("raw", "raw judge"), ("ppi", "PPI++ leaderboard"), ("comp", "composite, held fixed"),
                          ("refit", "composite, refitted in each replicate")):
            a = {k: float(np.mean(v)) for k, v in acc[key].items()}
            print(f"| {n} | {name} | {a['ci']:.2f} / {a['ci_width']:.3f} | {a['bound']:.2f} / {a['bound_width']:.3f} |")


if __name__ == "__main__":
    main()
