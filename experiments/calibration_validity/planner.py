"""Planner validation on held-back real topics (issue 21, item 5): does a pilot predict the PPI width?

For a judge and a pilot size ``p`` in 4/8/12/16, draw ``D`` pilots of ``p`` NIST topics *without replacement*
(stream ``planning.validation``); on the pilot compute what ``metaeval plan`` computes (per-run variance of the
human-minus-judge V_strict difference, guarded by ``planning.precision.guarded_s2``), and on the remaining ``21 - p``
topics the same variance the pilot never saw.  The predicted 95% half-width of the calibrated run mean for ``n``
labelled topics of a ``T``-topic track is ``z sqrt(S^2 (1/n - 1/T))`` per run; its median over runs is compared with
the same figure from the held-back topics' variance ("realized").  The ratio does not depend on ``n`` or ``T``.

Reported per judge x pilot size, over the ``D`` pilots: the share of pilots whose median-run predicted width is
within 10% of the realized one, the median ratio predicted / realized (and its 10-90% range), and the same for the
*justified* prediction ``metaeval plan`` now leads with (the upper end of the 80% chi-square range of the pilot's
variance), with the share of pilots where that prediction is at least the realized width (not optimistic).

    .venv/bin/python experiments/calibration_validity/planner.py --draws 200
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
LABELS = ROOT / "results" / "calibration_validity" / "labels"
OUT = ROOT / "results" / "calibration_validity"


def delta_matrix(human, judge) -> np.ndarray:
    """(topics x runs) human-minus-judge V_strict per answer, runs answering every topic only."""
    from metaeval.planning.matrices import common_runs, score_matrix

    runs = common_runs(human, judge)
    qids = sorted(human.qids)
    _, _, H = score_matrix(human, "v_strict", qids, runs)
    _, _, J = score_matrix(judge, "v_strict", qids, runs)
    D = H - J
    return D[:, np.isfinite(D).all(0)]


def validate(D: np.ndarray, pilot: int, draws: int, judge: str, confidence: float = 0.8) -> dict:
    from scipy.stats import chi2

    from metaeval.planning.precision import guarded_s2
    from metaeval.random_streams import stream

    T = D.shape[0]
    ratio, ratio_up = [], []
    df = pilot - 1
    widen = df / chi2.ppf((1 - confidence) / 2, df)  # S^2 multiplier at the upper end of the range
    for d in range(draws):
        rng = stream(d, "planning.validation", judge, pilot)
        idx = rng.permutation(T)
        p, rest = idx[:pilot], idx[pilot:]
        s2p, _ = guarded_s2(D[p].var(0, ddof=1), pilot)
        s2r = D[rest].var(0, ddof=1)
        real = np.median(np.sqrt(s2r))
        if real <= 0:
            continue
        ratio.append(float(np.median(np.sqrt(s2p)) / real))
        ratio_up.append(float(np.median(np.sqrt(s2p * widen)) / real))
    r, u = np.array(ratio), np.array(ratio_up)
    return {"judge": judge, "pilot": pilot, "held_back": T - pilot, "draws": len(r),
            "within_10pct": float((np.abs(r - 1) <= 0.10).mean()), "median_ratio": float(np.median(r)),
            "ratio_10_90": [float(np.quantile(r, 0.1)), float(np.quantile(r, 0.9))],
            "justified_median_ratio": float(np.median(u)), "justified_not_optimistic": float((u >= 1).mean()),
            "justified_within_10pct": float((np.abs(u - 1) <= 0.10).mean())}


def main() -> None:
    from metaeval.io import load_labels

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draws", type=int, default=200, help="pilots per judge x size (default 200)")
    args = ap.parse_args()
    human = load_labels(str(LABELS / "nist.jl"), name="nist")
    rows = []
    for judge in ("lexical", "fig6"):
        D = delta_matrix(human, load_labels(str(LABELS / f"{judge}.jl"), name=judge))
        for pilot in (4, 8, 12, 16):
            rows.append(validate(D, pilot, args.draws, judge))
    (OUT / "planner.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print("| judge | pilot topics (held back) | pilots | point: within 10% | point: median ratio (10-90%) | "
          "justified: median ratio | justified >= realized |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['judge']} | {r['pilot']} ({r['held_back']}) | {r['draws']} | {r['within_10pct']:.2f} | "
              f"{r['median_ratio']:.2f} ({r['ratio_10_90'][0]:.2f}-{r['ratio_10_90'][1]:.2f}) | "
              f"{r['justified_median_ratio']:.2f} | {r['justified_not_optimistic']:.2f} |")


if __name__ == "__main__":
    main()
