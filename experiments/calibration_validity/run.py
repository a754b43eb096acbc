"""Coverage study of the leaderboard ``metaeval calibrate`` shows, through the CLI only, on NIST with several judges.

For each judge and design (how many of the 21 NIST topics keep their human labels: ``half`` = 10, ``quarter`` = 5,
``n20`` = 20) and split ``i = 0..S-1``:

1. draw the labelled topics at random without replacement (stream ``simulation.calibration_validity``, keys judge,
   design, i); write the NIST labels of those topics to a file;
2. run ``metaeval calibrate --human <labelled> --judge <all judge labels> --metric V_strict --seed i --workers 1``
   (in-process ``metaeval.cli.main``, default settings otherwise, or the given ``--method`` list);
3. read ``calibration.json``'s leaderboard (what the tool shows) and check, per run, whether ``human_estimate_ci``
   holds the human run score over all 21 topics (and ``corrected_judge_only_ci`` the one on the judge-only topics);
   the MAE and run-level Kendall tau of ``human_estimate`` against that human score, beside raw's (the judge's own
   score over the 21 topics) and the composite's (human labels on the labelled topics, the raw judge elsewhere).

Per judge x design: coverage, worst run, widths, MAE and tau of shown / raw / composite with the paired differences
(+- SE over splits), and which method was shown.  Writes ``--out`` (JSON) and prints a Markdown table.

    .venv/bin/python experiments/calibration_validity/labels.py          # judge label files
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
#: judge label files: LABELS/<name>.jl, except the auto_auto cell (the lexical judge on Mistral-made nuggets, from
#: `metaeval sweep ... dataset.nuggets=.../rag24_nuggets_mistral.jsonl name=nist_lexical_mistral`)
JUDGES = ("lexical", "lexical_auto", "lexical_strict", "embedding", "fig6", "run_bias", "hetero", "skewed")
FILES = {"lexical_auto": ROOT / "results" / "nist_lexical_mistral" / "cells" / "lexical__human_auto" / "labels.jsonl"}
#: labelled topics of the 21: half, quarter, and 20 of 21 (a 1-topic judge-only part)
DESIGNS = {"half": 10, "quarter": 5, "n20": 20}


def judge_file(judge: str) -> Path:
    return FILES.get(judge, LABELS / f"{judge}.jl")


def score_matrix(ls, qids):
    """V_strict (topic x run) matrix over ``qids`` and the run ids."""
    from metaeval.scoring import score_answers
    from metaeval.study.calibration_workflow.data import score_matrix as dense

    sc = score_answers(ls)
    runs = sorted(sc["run_id"].astype(str).unique())
    return dense(sc, list(qids), runs, ["v_strict"])["v_strict"], runs


def one_split(human, judge_file: Path, labelled: list[str], seed: int, work: Path, methods) -> dict:
    from metaeval.cli import main
    from metaeval.io.assignments import write_assignments

    hfile = work / "human.jl"
    write_assignments(human.subset(qids=labelled), hfile)
    out = work / "out"
    extra = [a for m in methods or [] for a in ("--method", m)]
    with contextlib.redirect_stdout(io.StringIO()):
        rc = main(["calibrate", "--human", str(hfile), "--judge", str(judge_file), "--metric", "V_strict",
                   "--seed", str(seed), "--out", str(out), "--workers", "1", *extra])
    if rc != 0:
        raise RuntimeError(f"calibrate exited {rc}")
    return json.loads((out / "calibration.json").read_text(encoding="utf-8"))


def _tau(x, y) -> float:
    from scipy.stats import kendalltau

    ok = np.isfinite(x) & np.isfinite(y)
    return float(kendalltau(x[ok], y[ok]).statistic)


def study(judge: str, design: str, splits: int, human, all_qids: list[str], methods=None) -> dict:
    from metaeval.io import load_labels
    from metaeval.random_streams import stream

    jfile = judge_file(judge)
    H, runs = score_matrix(human, all_qids)
    J, jruns = score_matrix(load_labels(str(jfile)), all_qids)
    assert jruns == runs, "judge and human runs differ"
    truth_all = np.nanmean(H, axis=0)
    raw_all = np.nanmean(J, axis=0)
    n_lab = DESIGNS[design]
    figs = {k: [] for k in ("cover_u", "cover_a", "width_u", "width_a", "err_shown", "err_raw", "err_comp",
                            "tau_shown", "tau_raw", "tau_comp")}
    shown, zero = {}, 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(splits):
            rng = stream(i, "simulation.calibration_validity", judge, design)
            labelled = sorted(rng.choice(all_qids, n_lab, replace=False).tolist())
            lab = np.isin(all_qids, labelled)
            truth_u = np.nanmean(H[~lab], axis=0)
            res = one_split(human, jfile, labelled, i, Path(tmp), methods)
            sel = res["selection"]
            shown[sel["method"]] = shown.get(sel["method"], 0) + 1
            rows = {r["run_id"]: r for r in res["leaderboard"]["rows"]}
            est = np.array([rows[r]["human_estimate"] if rows[r]["human_estimate"] is not None else np.nan for r in runs])
            nl, nu = np.isfinite(H[lab]).sum(0), np.isfinite(J[~lab]).sum(0)
            comp = (np.nansum(H[lab], 0) + nu * np.nanmean(J[~lab], axis=0)) / (nl + nu)
            cu, ca, wu, wa = [], [], [], []
            for k, run in enumerate(runs):
                r = rows[run]
                lo, hi = r.get("corrected_judge_only_ci") or [None, None]
                ok = lo is not None and np.isfinite(truth_u[k])
                cu.append(float(lo <= truth_u[k] <= hi) if ok else np.nan)
                wu.append(hi - lo if ok else np.nan)
                zero += int(ok and hi - lo <= 0)
                lo2, hi2 = r.get("human_estimate_ci") or [None, None]
                ok2 = lo2 is not None
                ca.append(float(lo2 <= truth_all[k] <= hi2) if ok2 else np.nan)
                wa.append(hi2 - lo2 if ok2 else np.nan)
            figs["cover_u"].append(cu)
            figs["cover_a"].append(ca)
            figs["width_u"].append(wu)
            figs["width_a"].append(wa)
            for name, x in (("shown", est), ("raw", raw_all), ("comp", comp)):
                figs[f"err_{name}"].append(float(np.nanmean(np.abs(x - truth_all))))
                figs[f"tau_{name}"].append(_tau(x, truth_all))
    a = {k: np.array(v, dtype=float) for k, v in figs.items()}
    per_u, per_a = np.nanmean(a["cover_u"], axis=0), np.nanmean(a["cover_a"], axis=0)

    def ms(x):
        x = x[np.isfinite(x)]
        return {"mean": float(x.mean()), "se": float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else None}

    return {"judge": judge, "design": design, "labelled_topics": n_lab, "splits": splits,
            "methods": methods or "default (all)",
            "judge_only": {"coverage": float(np.nanmean(a["cover_u"])), "worst_run": float(np.nanmin(per_u)),
                           "worst_run_id": runs[int(np.nanargmin(per_u))], "mean_width": float(np.nanmean(a["width_u"]))},
            "whole_track": {"coverage": float(np.nanmean(a["cover_a"])), "worst_run": float(np.nanmin(per_a)),
                            "mean_width": float(np.nanmean(a["width_a"]))},
            "mae": {k: ms(a[f"err_{k}"]) for k in ("shown", "raw", "comp")},
            "mae_shown_minus_raw": ms(a["err_shown"] - a["err_raw"]),
            "mae_shown_minus_comp": ms(a["err_shown"] - a["err_comp"]),
            "tau": {k: ms(a[f"tau_{k}"]) for k in ("shown", "raw", "comp")},
            "tau_shown_minus_raw": ms(a["tau_shown"] - a["tau_raw"]),
            "zero_width": zero, "shown": shown, "seconds": round(time.perf_counter() - t0, 1)}


def _pm(d) -> str:
    return f"{d['mean']:.3f}" + (f" +- {d['se']:.3f}" if d.get("se") is not None else "")


def table(results) -> str:
    head = ("| judge | labelled topics | splits | coverage (whole track) | worst run | width (whole track) | "
            "judge-only width | held-out MAE shown / raw / composite | shown - raw | run tau shown / raw / composite | "
            "shown - raw | shown (splits) | s |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        a, u, e, t = r["whole_track"], r["judge_only"], r["mae"], r["tau"]
        shown = ", ".join(f"{k} {v}" for k, v in sorted(r["shown"].items(), key=lambda kv: -kv[1]))
        lines.append(f"| {r['judge']} | {r['labelled_topics']} | {r['splits']} | {a['coverage']:.3f} | {a['worst_run']:.2f} | "
                     f"{a['mean_width']:.3f} | {u['mean_width']:.3f} | {e['shown']['mean']:.4f} / {e['raw']['mean']:.4f} / "
                     f"{e['comp']['mean']:.4f} | {_pm(r['mae_shown_minus_raw'])} | {t['shown']['mean']:.3f} / "
                     f"{t['raw']['mean']:.3f} / {t['comp']['mean']:.3f} | {_pm(r['tau_shown_minus_raw'])} | {shown} | "
                     f"{r['seconds']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    from metaeval.io import load_labels

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=40, help="random splits per judge x design (default 40)")
    ap.add_argument("--judge", action="append", choices=JUDGES, help="judges (default: every one with a label file)")
    ap.add_argument("--design", action="append", choices=list(DESIGNS), help="designs (default half, quarter)")
    ap.add_argument("--method", action="append", help="calibrate --method (repeat; default: calibrate's default)")
    ap.add_argument("--out", default=str(OUT / "coverage.json"), help="JSON output (default results/.../coverage.json)")
    args = ap.parse_args()
    human = load_labels(str(LABELS / "nist.jl"), name="nist")
    all_qids = sorted(human.qids)
    results, missing = [], []
    for judge in args.judge or JUDGES:
        if not judge_file(judge).exists():
            missing.append(judge)
            continue
        for design in args.design or ["half", "quarter"]:
            r = study(judge, design, args.splits, human, all_qids, args.method)
            results.append(r)
            print(f"{judge} {design}: {json.dumps(r)}", file=sys.stderr, flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"splits": args.splits, "results": results, "missing": missing}, indent=1),
                              encoding="utf-8")
    print(table(results))
    for judge in missing:
        print(f"\n{judge}: no label file (labels.py could not build it: optional extra not installed)")


if __name__ == "__main__":
    main()
