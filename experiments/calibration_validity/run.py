"""Coverage study of what ``metaeval calibrate`` recommends, through the CLI only, on NIST with several judges.

For each judge and design (share of the 21 NIST topics that keep their human labels: ``half`` = 10 topics,
``quarter`` = 5) and split ``i = 0..S-1``:

1. draw the labelled topics at random without replacement (stream ``simulation.calibration_validity``, keys judge,
   design, i); write the NIST labels of those topics to a file;
2. run ``metaeval calibrate --human <labelled> --judge <all judge labels> --metric V_strict --seed i`` (in-process
   ``metaeval.cli.main``, default settings otherwise);
3. read ``calibration.json``'s leaderboard (the one the tool recommends) and check, per run, whether
   ``corrected_judge_only_ci`` holds the human run score on the judge-only topics, and whether
   ``human_estimate_ci`` holds the human run score over all 21 topics (the leaderboard's estimand).

Figures per judge x design: overall coverage (all runs x splits), worst-run coverage (the run with the lowest share
over splits), mean width, zero-width intervals, and how often each verdict / method was recommended.  Writes
``results/calibration_validity/coverage.json`` and prints a Markdown table.

    .venv/bin/python experiments/calibration_validity/labels.py          # judge label files (seconds)
    .venv/bin/python experiments/calibration_validity/run.py --splits 40 # the table in README.md
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
LABELS = ROOT / "results" / "calibration_validity" / "labels"
OUT = ROOT / "results" / "calibration_validity"
JUDGES = ("lexical", "lexical_strict", "embedding", "fig6", "run_bias")
DESIGNS = {"half": 0.5, "quarter": 0.25}


def human_run_scores(ls, qids):
    """Human V_strict run means over ``qids`` (dict run -> score)."""
    from metaeval.scoring import run_scores, score_answers

    rs = run_scores(score_answers(ls.subset(qids=list(qids))))
    return dict(zip(rs["run_id"].astype(str), rs["v_strict"].astype(float)))


def one_split(human, judge_file: Path, labelled: list[str], seed: int, work: Path) -> dict:
    from metaeval.cli import main
    from metaeval.io.assignments import write_assignments

    hfile = work / "human.jl"
    write_assignments(human.subset(qids=labelled), hfile)
    out = work / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        rc = main(["calibrate", "--human", str(hfile), "--judge", str(judge_file), "--metric", "V_strict",
                   "--seed", str(seed), "--out", str(out)])
    if rc != 0:
        raise RuntimeError(f"calibrate exited {rc}")
    return json.loads((out / "calibration.json").read_text(encoding="utf-8"))


def study(judge: str, design: str, splits: int, human, all_qids: list[str]) -> dict:
    from metaeval.random_streams import stream

    jfile = LABELS / f"{judge}.jl"
    truth_all = human_run_scores(human, all_qids)
    n_lab = int(round(DESIGNS[design] * len(all_qids)))
    cover_u, cover_all, width_u, width_all, zero, verdicts = [], [], [], [], 0, {}
    runs = sorted(truth_all)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(splits):
            rng = stream(i, "simulation.calibration_validity", judge, design)
            labelled = sorted(rng.choice(all_qids, n_lab, replace=False).tolist())
            only = [q for q in all_qids if q not in labelled]
            truth_u = human_run_scores(human, only)
            res = one_split(human, jfile, labelled, i, Path(tmp))
            sel = res["selection"]
            key = f"{sel['verdict']} -> {sel['method']}" if sel["verdict"] != "stable" else f"stable: {sel['method']}"
            verdicts[key] = verdicts.get(key, 0) + 1
            rows = {r["run_id"]: r for r in res["leaderboard"]["rows"]}
            cu, ca = [], []
            for run in runs:  # a run with no answer on the judge-only topics has no judge-only truth: NaN
                r = rows.get(run) or {}
                ci_u, ci_a = r.get("corrected_judge_only_ci") or [None, None], r.get("human_estimate_ci") or [None, None]
                if run in truth_u and None not in ci_u:
                    lo, hi = ci_u
                    cu.append(lo <= truth_u[run] <= hi)
                    width_u.append(hi - lo)
                    zero += int(hi - lo <= 0)
                else:
                    cu.append(np.nan)
                if None not in ci_a:
                    lo2, hi2 = ci_a
                    ca.append(lo2 <= truth_all[run] <= hi2)
                    width_all.append(hi2 - lo2)
                else:
                    ca.append(np.nan)
            cover_u.append(cu)
            cover_all.append(ca)
    cu, ca = np.array(cover_u, dtype=float), np.array(cover_all, dtype=float)
    per_u, per_a = np.nanmean(cu, axis=0), np.nanmean(ca, axis=0)
    return {"judge": judge, "design": design, "labelled_topics": n_lab, "splits": splits,
            "judge_only": {"coverage": float(np.nanmean(cu)), "worst_run": float(np.nanmin(per_u)),
                           "worst_run_id": runs[int(np.nanargmin(per_u))], "mean_width": float(np.mean(width_u)),
                           "intervals": int(np.isfinite(cu).sum())},
            "whole_track": {"coverage": float(np.nanmean(ca)), "worst_run": float(np.nanmin(per_a)),
                            "mean_width": float(np.mean(width_all)), "intervals": int(np.isfinite(ca).sum())},
            "zero_width": zero, "recommended": verdicts, "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    from metaeval.io import load_labels

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=40, help="random splits per judge x design (default 40)")
    ap.add_argument("--judge", action="append", choices=JUDGES, help="judges (default: every one with a label file)")
    ap.add_argument("--design", action="append", choices=list(DESIGNS), help="designs (default both)")
    args = ap.parse_args()
    human = load_labels(str(LABELS / "nist.jl"), name="nist")
    all_qids = sorted(human.qids)
    results, missing = [], []
    for judge in args.judge or JUDGES:
        if not (LABELS / f"{judge}.jl").exists():
            missing.append(judge)
            continue
        for design in args.design or list(DESIGNS):
            r = study(judge, design, args.splits, human, all_qids)
            results.append(r)
            print(f"{judge} {design}: {json.dumps(r)}", file=sys.stderr)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "coverage.json").write_text(json.dumps({"splits": args.splits, "results": results, "missing": missing},
                                                  indent=1), encoding="utf-8")
    print("| judge | design (labelled topics) | splits | judge-only coverage | worst run | mean width | whole-track "
          "coverage | worst run | mean width | zero-width | recommended (verdict -> leaderboard method: splits) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        u, a = r["judge_only"], r["whole_track"]
        rec = ", ".join(f"{k}: {v}" for k, v in sorted(r["recommended"].items(), key=lambda kv: -kv[1]))
        print(f"| {r['judge']} | {r['design']} ({r['labelled_topics']}) | {r['splits']} | {u['coverage']:.3f} | "
              f"{u['worst_run']:.2f} | {u['mean_width']:.3f} | {a['coverage']:.3f} | {a['worst_run']:.2f} | "
              f"{a['mean_width']:.3f} | {r['zero_width']} | {rec} |")
    for judge in missing:
        print(f"\n{judge}: no label file (labels.py could not build it: optional extra not installed)")


if __name__ == "__main__":
    main()
