"""The planner against real subsampling on NIST (issue 30, item 5; finding 6).

Track: the 21 NIST TREC 2024 RAG topics (T = 21), the 43 runs with every topic, V_strict, the offline lexical
judge's labels of the NIST nuggets.  **Needed N** for a target half-width ``h``: the smallest ``n`` at which real
subsampling - 4,000 random sets of ``n`` of the 21 topics (without replacement) - gives a median-run 95% half-width
``1.96 RMSE(mean_L D - mean_T D)`` of at most ``h`` (``D`` = human minus judge per topic, the PPI error of the
calibrated run mean against the human mean on all 21 topics).  Three targets: the half-widths real subsampling
gives at 6, 10 and 14 topics.

**Planner**: for pilots of 4, 8, 12 and 16 topics (200 each, drawn without replacement, stream ``planning.validation``)
``metaeval plan``'s ``need_statement`` on the pilot (with its differences, so the effective df is used) gives the
justified N (what the plan leads with) and the point N; ``before`` is the first rule (chi-square upper end on
``n_p - 1`` df of the moderated variance), ``2/Var`` the session-10 rule (effective df ``2 / Var*(log median s^2)``,
the large-df form of the trigamma inversion the planner now uses).  Reported: median ratio to the needed N (10-90%
range), the share of pilots where it is more than one topic below the needed N (under-predicts beyond the integer
step), the share above 1.5x.

    .venv/bin/python experiments/ranksets/planner.py --pilots 200
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
sys.path.insert(0, str(ROOT / "experiments" / "ranksets"))


def realized_half(D: np.ndarray, n: int, subsamples: int, rng) -> float:
    """Median-run 1.96 RMSE of ``mean_L D - mean_T D`` over ``subsamples`` random ``n``-topic sets."""
    T = D.shape[0]
    idx = np.argsort(rng.random((subsamples, T)), axis=1)[:, :n]
    err = D[idx].mean(axis=1) - D.mean(axis=0)[None, :]
    return float(1.96 * np.median(np.sqrt((err ** 2).mean(axis=0))))


def main() -> None:
    from scipy.stats import chi2

    from run import matrices  # experiments/ranksets/run.py: the same NIST / lexical matrices

    from metaeval.planning.precision import (guarded_s2, log_variance_of_median, need_statement, planning_s2,
                                             topics_needed)
    from metaeval.random_streams import stream

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pilots", type=int, default=200)
    ap.add_argument("--subsamples", type=int, default=4000)
    args = ap.parse_args()
    t0 = time.time()
    _, _, H, J, runs = matrices()
    D = H - J
    T = D.shape[0]
    rng = stream(0, "planning.validation", "subsampling")
    curve = {n: realized_half(D, n, args.subsamples, rng) for n in range(2, T + 1)}
    rows = []
    for at in (6, 10, 14):
        h = curve[at]
        need = min(n for n, v in curve.items() if v <= h + 1e-12)
        for p in (4, 8, 12, 16):
            just, point, before, large_df = [], [], [], []
            for d in range(args.pilots):
                P = stream(d, "planning.validation", "pilot", p).permutation(T)[:p]
                s2 = D[P].var(0, ddof=1)
                nd = need_statement(s2, h, T, 0.95, "V_strict", pilot_topics=p, deltas=D[P], seed=d)
                just.append(nd["median_run"])
                point.append(nd["point"]["median_run"])
                g, _ = guarded_s2(s2, p)
                before.append(int(np.ceil(np.median(topics_needed(g * (p - 1) / chi2.ppf(0.1, p - 1), h, T)))))
                v = log_variance_of_median(D[P], seed=d)
                df2 = float(p - 1) if v is None else float(np.clip(2.0 / v, p - 1, D.shape[1] * (p - 1)))
                large_df.append(int(np.ceil(np.median(topics_needed(planning_s2(s2, p)[0] * df2 / chi2.ppf(0.1, df2),
                                                                    h, T)))))
            row = {"target_at": at, "half_width": h, "needed": need, "pilot": p, "pilots": args.pilots}
            for key, v in (("justified", just), ("point", point), ("before", before), ("large_df", large_df)):
                v = np.asarray(v, dtype=float)
                r = v / need
                row[key] = {"median_ratio": float(np.median(r)), "ratio_10_90": [float(np.quantile(r, 0.1)),
                                                                                  float(np.quantile(r, 0.9))],
                            "below_by_more_than_one": float((v < need - 1).mean()), "above_1_5x": float((r > 1.5).mean())}
            rows.append(row)
    out = ROOT / "results" / "ranksets"
    out.mkdir(parents=True, exist_ok=True)
    (out / "planner.json").write_text(json.dumps({"curve": curve, "rows": rows}, indent=1), encoding="utf-8")
    print(f"NIST T = {T} topics x {len(runs)} runs, V_strict, lexical judge; needed N from {args.subsamples} real "
          f"subsamples per n; {args.pilots} pilots per size; ratio = planner N / needed N (median run)")
    print("| target +/- (needed N) | pilot | justified: median ratio (10-90%) | more than 1 topic below | above 1.5x | "
          "point: median ratio (10-90%) | more than 1 below | 2/Var rule: median ratio / above 1.5x | "
          "first rule: median ratio / above 1.5x |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        j, q, b, o = r["justified"], r["point"], r["before"], r["large_df"]
        print(f"| {r['half_width']:.3f} ({r['needed']}) | {r['pilot']} | {j['median_ratio']:.2f} "
              f"({j['ratio_10_90'][0]:.2f}-{j['ratio_10_90'][1]:.2f}) | {j['below_by_more_than_one']:.2f} | "
              f"{j['above_1_5x']:.2f} | {q['median_ratio']:.2f} ({q['ratio_10_90'][0]:.2f}-{q['ratio_10_90'][1]:.2f}) | "
              f"{q['below_by_more_than_one']:.2f} | {o['median_ratio']:.2f} / {o['above_1_5x']:.2f} | "
              f"{b['median_ratio']:.2f} / {b['above_1_5x']:.2f} |")
    print(f"\n{time.time() - t0:.0f} s; wrote {out / 'planner.json'}")


if __name__ == "__main__":
    main()
