"""Coverage study of the leaderboard ``metaeval calibrate`` shows, through the CLI only, on NIST with several judges.

For each judge and design (how many of the 21 NIST topics keep their human labels: ``half`` = 10, ``quarter`` = 5,
``n20`` = 20) and split ``i = 0..S-1``:

1. draw the labelled topics at random without replacement (stream ``simulation.calibration_validity``, keys judge,
   design, i) - except ``n20``, whose split ``i`` leaves topic ``i mod 21`` judge-only: there are only 21 such
   splits, so random draws repeat topics and add noise that says nothing about the interval, while ``--splits 21k``
   visits every topic ``k`` times (``--seed i``: fresh bootstrap draws) and gives the exact design-based per-run
   coverage (:func:`labelled_topics`); write the NIST labels of those topics to a file;
2. run ``metaeval calibrate --human <labelled> --judge <all judge labels> --metric V_strict --seed i --workers 1``
   (in-process ``metaeval.cli.main``, default settings otherwise, or the given ``--method`` list);
3. read ``calibration.json``'s leaderboard (what the tool shows) and check, per run, whether ``human_estimate_ci``
   holds the human run score over all 21 topics (and ``corrected_judge_only_ci`` the one on the judge-only topics);
   the MAE and run-level Kendall tau of ``human_estimate`` against that human score, beside raw's (the judge's own
   score over the 21 topics) and the composite's (human labels on the labelled topics, the raw judge elsewhere).

Per judge x design: coverage, worst run, widths, MAE and tau of shown / raw / composite with the paired differences
(+- SE over splits), and which method was shown.  Writes ``--out`` (JSON) and prints a Markdown table.

The worst run is the lowest of ~45 per-run shares over ``S`` splits: a minimum of noisy binomial shares, biased low
(with ``S = 100`` and every run at exactly 0.90, the minimum is <= 0.84 about half the time).  Beside it the table
gives ``below 0.85``: how many runs the splits show below 0.85 (one-sided exact binomial test of coverage >= 0.85,
Holm over runs, 5%; :func:`runs_below`).

``--interval-only`` skips the CLI: per split, PPI++ is fitted on the labelled topics and applied to the judge-only
ones in process (:func:`interval_split`: the same functions, the same bootstrap stream and keys as ``calibrate``'s
leaderboard, so the interval equals the one ``calibrate --seed i`` computes before it is widened to the shown point).
Its coverage is a lower bound of the shown interval's (widening can only add coverage), at ~0.01 s a split instead
of ~3 s: the sharp check of the per-run coverage (1000 splits).

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
#: `metaeval sweep ... dataset.nuggets=.../rag24_nuggets_mistral.jsonl name=nist_lexical_mistral`); embedding_auto is
#: the embedding judge on the same Mistral-made nuggets (`labels.py auto --until=HH:MM`)
JUDGES = ("lexical", "lexical_auto", "lexical_strict", "embedding", "embedding_auto", "fig6", "run_bias", "hetero", "skewed")
FILES = {"lexical_auto": ROOT / "results" / "nist_lexical_mistral" / "cells" / "lexical__human_auto" / "labels.jsonl"}
#: labelled topics of the 21: half, quarter, and 20 of 21 (a 1-topic judge-only part)
DESIGNS = {"half": 10, "quarter": 5, "n20": 20}


def judge_file(judge: str) -> Path:
    return FILES.get(judge, LABELS / f"{judge}.jl")


def judged_runs(human, judge_ls):
    """``human`` on the judge's runs when the judge file holds only some of them (a partial label file, written
    run by run: ``labels.py embedding --until``); every topic of those runs stays."""
    runs = set(judge_ls.labels["run_id"].astype(str))
    if runs >= set(human.labels["run_id"].astype(str)):
        return human
    return human.subset(run_ids=sorted(runs))


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


def labelled_topics(judge: str, design: str, i: int, all_qids: list[str]) -> list[str]:
    """The labelled topics of split ``i``: ``n20`` leaves topic ``i mod N`` judge-only (every topic in turn); the
    other designs draw ``DESIGNS[design]`` topics at random (stream ``simulation.calibration_validity``)."""
    from metaeval.random_streams import stream

    n_lab = DESIGNS[design]
    if n_lab == len(all_qids) - 1:
        return sorted(q for k, q in enumerate(all_qids) if k != i % len(all_qids))
    rng = stream(i, "simulation.calibration_validity", judge, design)
    return sorted(rng.choice(all_qids, n_lab, replace=False).tolist())


def interval_split(H, J, lab, seed: int, metric: str = "v_strict", level: float = 0.95, n_boot: int = 999):
    """PPI++'s interval for the human run score on the judge-only topics (``~lab``), as ``calibrate --seed seed``
    computes it for its leaderboard (fit on every labelled topic; bootstrap stream ``calibration.bootstrap_t`` keyed
    by the metric and the judge-only topic indices, as
    :func:`metaeval.study.calibration_workflow.data.score_candidate`)."""
    from metaeval.calibration.scorelevel import apply_score_method, fit_score_method
    from metaeval.random_streams import stream

    only = np.flatnonzero(~lab)
    key = ",".join(map(str, only.tolist()))
    model = fit_score_method("ppi_pp", H[lab], J[lab])
    return apply_score_method(model, J[only], level, rng=stream(seed, "calibration.bootstrap_t", metric, key),
                              n_boot=n_boot)


def runs_below(cover: np.ndarray, goal: float = 0.85, alpha: float = 0.05) -> int:
    """How many runs (columns of ``cover``, (S, R) of 0/1/NaN) cover below ``goal``: one-sided exact binomial test
    of ``coverage >= goal`` per run (p = P(Bin(n, goal) <= hits)), Holm's step-down over runs at ``alpha``."""
    from scipy.stats import binom

    n = np.isfinite(cover).sum(axis=0)
    hits = np.nansum(cover, axis=0)
    p = np.sort(binom.cdf(hits[n > 0], n[n > 0], goal))
    below = 0
    for k, pk in enumerate(p):
        if pk > alpha / (len(p) - k):
            break
        below += 1
    return below


def interval_study(judge: str, design: str, splits: int, human, all_qids: list[str]) -> dict:
    """``--interval-only``: coverage / worst run / width of PPI++'s judge-only interval (:func:`interval_split`)
    over ``splits`` splits; whole-track coverage is the same event (the labelled part is observed)."""
    from metaeval.io import load_labels
    from metaeval.study.calibration_workflow.data import nanmean

    human = judged_runs(human, load_labels(str(judge_file(judge))))
    H, runs = score_matrix(human, all_qids)
    J, jruns = score_matrix(load_labels(str(judge_file(judge))), all_qids)
    assert jruns == runs, "judge and human runs differ"
    cover = np.full((splits, len(runs)), np.nan)
    width = cover.copy()
    t0 = time.perf_counter()
    for i in range(splits):
        lab = np.isin(all_qids, labelled_topics(judge, design, i, all_qids))
        r = interval_split(H, J, lab, i)
        truth_u = nanmean(H[~lab], axis=0)
        ok = np.isfinite(truth_u) & np.isfinite(r.lo) & np.isfinite(r.hi)
        cover[i, ok] = (r.lo[ok] <= truth_u[ok]) & (truth_u[ok] <= r.hi[ok])
        width[i, ok] = (r.hi - r.lo)[ok]
    per = np.nanmean(cover, axis=0)
    return {"judge": judge, "design": design, "labelled_topics": DESIGNS[design], "splits": splits, "runs": len(runs),
            "what": "PPI++ judge-only interval in process (before widening to the shown point)",
            "coverage": float(np.nanmean(cover)), "worst_run": float(np.nanmin(per)),
            "worst_run_id": runs[int(np.nanargmin(per))], "below_085": runs_below(cover),
            "mean_width_judge_only": float(np.nanmean(width)), "seconds": round(time.perf_counter() - t0, 1)}


def _tau(x, y) -> float:
    from scipy.stats import kendalltau

    ok = np.isfinite(x) & np.isfinite(y)
    return float(kendalltau(x[ok], y[ok]).statistic)


def study(judge: str, design: str, splits: int, human, all_qids: list[str], methods=None, until: float | None = None,
          partial: Path | None = None) -> dict:
    """One judge x design over ``splits`` CLI splits (module docstring); stops after the split that passes the wall
    clock ``until`` (epoch seconds; ``splits`` then says how many ran) and rewrites ``partial`` (JSON) after each."""
    from metaeval.io import load_labels

    jfile = judge_file(judge)
    human = judged_runs(human, load_labels(str(jfile)))
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
            labelled = labelled_topics(judge, design, i, all_qids)
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
            out = summarize(judge, design, n_lab, runs, methods, figs, shown, zero, time.perf_counter() - t0)
            if partial is not None:
                partial.write_text(json.dumps(out, indent=1), encoding="utf-8")
            if until is not None and time.time() > until:
                break
    return out


def summarize(judge, design, n_lab, runs, methods, figs, shown, zero, seconds) -> dict:
    """The row's figures from the per-split lists of :func:`study`."""
    a = {k: np.array(v, dtype=float) for k, v in figs.items()}
    per_u, per_a = np.nanmean(a["cover_u"], axis=0), np.nanmean(a["cover_a"], axis=0)

    def ms(x):
        x = x[np.isfinite(x)]
        return {"mean": float(x.mean()), "se": float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else None}

    return {"judge": judge, "design": design, "labelled_topics": n_lab, "splits": len(figs["cover_a"]), "runs": len(runs),
            "methods": methods or "default (all)",
            "judge_only": {"coverage": float(np.nanmean(a["cover_u"])), "worst_run": float(np.nanmin(per_u)),
                           "worst_run_id": runs[int(np.nanargmin(per_u))], "mean_width": float(np.nanmean(a["width_u"]))},
            "whole_track": {"coverage": float(np.nanmean(a["cover_a"])), "worst_run": float(np.nanmin(per_a)),
                            "worst_run_id": runs[int(np.nanargmin(per_a))], "below_085": runs_below(a["cover_a"]),
                            "mean_width": float(np.nanmean(a["width_a"]))},
            "mae": {k: ms(a[f"err_{k}"]) for k in ("shown", "raw", "comp")},
            "mae_shown_minus_raw": ms(a["err_shown"] - a["err_raw"]),
            "mae_shown_minus_comp": ms(a["err_shown"] - a["err_comp"]),
            "tau": {k: ms(a[f"tau_{k}"]) for k in ("shown", "raw", "comp")},
            "tau_shown_minus_raw": ms(a["tau_shown"] - a["tau_raw"]),
            "zero_width": zero, "shown": shown, "seconds": round(seconds, 1)}


def _pm(d) -> str:
    return f"{d['mean']:.3f}" + (f" +- {d['se']:.3f}" if d.get("se") is not None else "")


def table(results) -> str:
    head = ("| judge | labelled topics | splits | coverage (whole track) | worst run | below 0.85 | width (whole track) | "
            "judge-only width | held-out MAE shown / raw / composite | shown - raw | run tau shown / raw / composite | "
            "shown - raw | shown (splits) | s |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        a, u, e, t = r["whole_track"], r["judge_only"], r["mae"], r["tau"]
        shown = ", ".join(f"{k} {v}" for k, v in sorted(r["shown"].items(), key=lambda kv: -kv[1]))
        lines.append(f"| {r['judge']} | {r['labelled_topics']} | {r['splits']} | {a['coverage']:.3f} | {a['worst_run']:.2f} | "
                     f"{a.get('below_085', '')} | "
                     f"{a['mean_width']:.3f} | {u['mean_width']:.3f} | {e['shown']['mean']:.4f} / {e['raw']['mean']:.4f} / "
                     f"{e['comp']['mean']:.4f} | {_pm(r['mae_shown_minus_raw'])} | {t['shown']['mean']:.3f} / "
                     f"{t['raw']['mean']:.3f} / {t['comp']['mean']:.3f} | {_pm(r['tau_shown_minus_raw'])} | {shown} | "
                     f"{r['seconds']:.0f} |")
    return "\n".join(lines)


def interval_table(results) -> str:
    head = "| judge | labelled topics | splits | coverage | worst run (run) | below 0.85 | judge-only width | s |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        lines.append(f"| {r['judge']} | {r['labelled_topics']} | {r['splits']} | {r['coverage']:.3f} | "
                     f"{r['worst_run']:.3f} ({r['worst_run_id']}) | {r['below_085']} | {r['mean_width_judge_only']:.3f} | "
                     f"{r['seconds']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    from metaeval.io import load_labels

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=40, help="random splits per judge x design (default 40)")
    ap.add_argument("--judge", action="append", choices=JUDGES, help="judges (default: every one with a label file)")
    ap.add_argument("--design", action="append", choices=list(DESIGNS), help="designs (default half, quarter)")
    ap.add_argument("--method", action="append", help="calibrate --method (repeat; default: calibrate's default)")
    ap.add_argument("--interval-only", action="store_true",
                    help="PPI++'s interval alone, in process, no CLI (interval_split; fast: use 1000 splits)")
    ap.add_argument("--until", help="UTC wall clock HH:MM: finish the split under way, record the row with the "
                    "splits done, skip the rows left (listed as not run)")
    ap.add_argument("--out", default=str(OUT / "coverage.json"), help="JSON output (default results/.../coverage.json)")
    args = ap.parse_args()
    human = load_labels(str(LABELS / "nist.jl"), name="nist")
    all_qids = sorted(human.qids)
    until = None
    if args.until:
        import datetime as dt

        now = dt.datetime.now(dt.timezone.utc)
        h, m = map(int, args.until.split(":"))
        until = now.replace(hour=h, minute=m, second=0, microsecond=0).timestamp()
    results, missing, not_run = [], [], []
    out = Path(args.out)
    for judge in args.judge or JUDGES:
        if not judge_file(judge).exists():
            missing.append(judge)
            continue
        for design in args.design or ["half", "quarter"]:
            if until is not None and time.time() > until:
                not_run.append(f"{judge} {design}")
                continue
            r = (interval_study(judge, design, args.splits, human, all_qids) if args.interval_only
                 else study(judge, design, args.splits, human, all_qids, args.method, until,
                            out.with_suffix(f".partial.{judge}.{design}.json")))
            results.append(r)
            print(f"{judge} {design}: {json.dumps(r)}", file=sys.stderr, flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"splits": args.splits, "results": results, "missing": missing, "not_run": not_run},
                              indent=1), encoding="utf-8")
    print(interval_table(results) if args.interval_only else table(results))
    for row in not_run:
        print(f"\n{row}: not run (--until {args.until} passed)")
    for judge in missing:
        print(f"\n{judge}: no label file (labels.py could not build it: optional extra not installed)")


if __name__ == "__main__":
    main()
