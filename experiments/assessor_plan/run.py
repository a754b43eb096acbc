"""Assessor planning on the public TREC 2024 RAG labels (21 topics x 45 runs, NIST ManualAssign) - issue 16.

Run from the repository root:

    .venv/bin/python experiments/assessor_plan/run.py                  # defaults below; ~3-4 min on 2 busy cores
    .venv/bin/python experiments/assessor_plan/run.py --seeds 2 --reps 100 --replay-reps 40   # quick look
    .venv/bin/python experiments/assessor_plan/run.py --labels-only   # only the judges' label files (seconds)

Judges: a Figure 6 simulated judge (``simulate_judge``, paper-fig6-edits; a fresh draw per seed and per replay)
and the offline lexical judge (``LexicalJudge`` run here on every NIST (nugget, answer) pair; deterministic).

(a) precision curves (``metaeval.study.assessor_plan.plan_study``): the NIST 21 topics are the pilot; the track is assumed
    to have T = 301 judged topics (the RAG24 test set) - widths of the calibrated V_strict run means vs labelled
    topics, analytic PPI vs topic resampling, per seed; also T = 21 (the error against the human leaderboard on
    exactly these topics);
(b) the labelling loop replayed (``replay_plan``): 5-topic pilot, 16 topics held back, random vs active orders
    (confusion, runs) vs greedy, Monte-Carlo SEs;
(c) a k = 5 sampling judge (``simulate_sampling_judge``, Figure 6 marginals, alpha = 2): flip rate, tau spread
    over draws vs the topic bootstrap, soft (vote share) vs hard score-level calibration, and the votes order in
    the replay; flip rate for alpha = 0.5 / 2 / 8.

Outputs in ``results/assessor_plan/`` (git-ignored): ``summary.json``, ``lexical.jl`` (the lexical judge's labels),
``fig6_seed0.jl``, ``plan_<judge>_T301/`` (plan.json, plan.md) and ``curves_T301.svg`` (all seeds).
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

from metaeval.io import load_labels  # noqa: E402
from metaeval.io.assignments import write_assignments  # noqa: E402
from metaeval.planning.consistency import flip_stats, sample_codes, simulate_sampling_judge  # noqa: E402
from metaeval.report.plan_section import render_markdown, write_plot  # noqa: E402
from metaeval.simulation import simulate_judge  # noqa: E402
from metaeval.study.assessor_plan import plan_study, replay_plan  # noqa: E402

NIST = "../shared/data/trec-rag-2024/nugget_assignment.20241108.jl"
OUT = ROOT / "results" / "assessor_plan"


def lexical_labels(human):
    """The offline lexical judge on every (nugget, answer) pair of the human label set (same rows)."""
    from metaeval.judges.base import SyncJudge
    from metaeval.judges.lexical import LexicalJudge
    from metaeval.types import Answer, Topic

    lab = human.labels
    texts = dict(zip(zip(human.answers["qid"], human.answers["run_id"]), human.answers["answer_text"]))
    out = np.empty(len(lab), dtype=object)
    with SyncJudge(LexicalJudge()) as judge:
        for (q, r), idx in lab.groupby(["qid", "run_id"], sort=False).indices.items():
            nuggets = lab["nugget"].to_numpy()[idx].tolist()
            labels = []
            for i in range(0, len(nuggets), 10):
                res = judge.assign(Topic(q, human.topics.get(q, "")), Answer(r, q, texts[(q, r)] or ""), nuggets[i:i + 10])
                labels += [lb.value for lb in res.labels]
            out[idx] = labels
    return human.with_labels(out, name="lexical", provenance={"judge": "lexical (defaults)", "on": human.name})


def curve_rows(plan: dict) -> list[dict]:
    return [{"n": r["n"], "analytic": r["analytic_half"]["median"], "resampled": r["empirical_half"]["median"],
             "plugin": r["plugin_half"]["median"], "coverage": r["plugin_coverage"]["median"], "tau": r["tau_mean"],
             "swap_0.02": r["swap"]["0.02"]["empirical"], "hours": r["hours"]}
            for r in plan["curves"]["v_strict"]["rows"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=200, help="topic-resampling worlds per curve")
    ap.add_argument("--replay-reps", type=int, default=200)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--labels-only", action="store_true", help="only write lexical.jl and fig6_seed0.jl (seconds)")
    args = ap.parse_args()
    t0 = time.time()
    OUT.mkdir(parents=True, exist_ok=True)
    human = load_labels(NIST, name="nist")
    lex = lexical_labels(human)
    write_assignments(lex, OUT / "lexical.jl")
    fig6 = [simulate_judge(human, "paper-fig6-edits", seed=s, name=f"fig6-s{s}") for s in range(args.seeds)]
    write_assignments(fig6[0], OUT / "fig6_seed0.jl")
    if args.labels_only:
        print(f"wrote {OUT / 'lexical.jl'} and {OUT / 'fig6_seed0.jl'}")
        return
    summary: dict = {"command": " ".join(sys.argv), "args": vars(args), "curves": {}, "agreement": {}, "need": {}}

    base = {"metrics": ["v_strict"], "reps": args.reps, "replay_reps": 0}
    plots = []
    for T in (301, 21):
        for name, judges in (("fig6", fig6), ("lexical", [lex] * args.seeds)):
            per_seed = []
            for s, j in enumerate(judges):
                p = plan_study(human, j, {**base, "total_topics": T}, seed=s)
                p["label"] = f"{name} s{s}"
                per_seed.append(p)
                if T == 301 and s == 0:
                    d = OUT / f"plan_{name}_T301"
                    d.mkdir(exist_ok=True)
                    (d / "plan.json").write_text(json.dumps(p, indent=2), encoding="utf-8")
                    (d / "plan.md").write_text(render_markdown(p, heading=True, plot=None) + "\n", encoding="utf-8")
                if T == 301:
                    plots.append(p)
            key = f"{name}_T{T}"
            summary["curves"][key] = [curve_rows(p) for p in per_seed]
            summary["agreement"][key] = [p["agreement"] for p in per_seed]
            summary["need"][key] = [{k: p["need"]["v_strict"][k] for k in ("median_run", "worst_run", "hours_median_run",
                                                                          "hours_worst_run", "line")} for p in per_seed]
            print(f"[{time.time() - t0:.0f}s] {key}: " + summary["need"][key][0]["line"], flush=True)
            print("   agreement seed 0: " + per_seed[0]["agreement"]["line"], flush=True)
    write_plot(plots[0], OUT / "curves_T301.svg", extra=plots[1:])

    # (b) replay: random vs active orders
    summary["replay"] = {}
    sampler = lambda rng: simulate_judge(human, "paper-fig6-edits", seed=rng)  # noqa: E731
    for name, judge, samp in (("fig6", fig6[0], sampler), ("lexical", lex, None)):
        rp = replay_plan(human, judge, "v_strict", strategies=["random", "confusion", "runs", "greedy"], pilot=5,
                         reps=args.replay_reps, seed=11, judge_sampler=samp)
        summary["replay"][name] = rp
        print(f"[{time.time() - t0:.0f}s] replay {name}: " + " | ".join(rp["lines"]), flush=True)

    # (c) k-sample judge
    sets = simulate_sampling_judge(human, args.k, "paper-fig6-edits", alpha=2.0, seed=0, name="fig6-sampling")
    p = plan_study(human, sets, {**base, "total_topics": 301, "crossfit_repeats": 20}, seed=0)
    summary["sampling"] = {"consistency": p["consistency"], "need_hard_draw0": p["need"]["v_strict"]["line"]}
    print(f"[{time.time() - t0:.0f}s] sampling k={args.k}: " + p["consistency"]["line"], flush=True)
    cal = p["consistency"]["calibration"]["variants"]
    for v, res in cal.items():
        print(f"   {v}: " + ", ".join(f"{m} {res[m]['mae']:.4f}±{res[m]['se']:.4f}" for m in res if m != "s_delta")
              + f", s(H-J) {res['s_delta']:.3f}")
    kSampler = lambda rng: simulate_sampling_judge(human, args.k, "paper-fig6-edits", alpha=2.0, seed=rng)  # noqa: E731
    rp = replay_plan(human, sets, "v_strict", strategies=["random", "confusion", "votes"], pilot=5,
                     reps=args.replay_reps, seed=12, judge_sampler=kSampler)
    summary["replay"]["fig6_sampling_k5"] = rp
    print(f"[{time.time() - t0:.0f}s] replay sampling judge: " + " | ".join(rp["lines"]), flush=True)
    summary["alpha"] = {}
    for alpha in (0.5, 2.0, 8.0):
        st = flip_stats(sample_codes(simulate_sampling_judge(human, args.k, alpha=alpha, seed=1))[1])
        summary["alpha"][str(alpha)] = st["flip_rate"]
    print("   flip rate by alpha: " + ", ".join(f"{a}: {f:.3f}" for a, f in summary["alpha"].items()))
    summary["wall_s"] = time.time() - t0
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2, default=float), encoding="utf-8")
    print(f"wrote {OUT}/summary.json in {summary['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
