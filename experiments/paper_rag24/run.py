"""Paper replication on the public TREC 2024 RAG labels (21 topics x 45 runs, NIST ManualAssign).

Run from the repository root:

    .venv/bin/python experiments/paper_rag24/run.py            # about 2 minutes on 2 cores

(a) Table 4 statistics of the NIST labels beside the paper's human rows (1a, 1b) - ``describe_labels``;
(b) simulated judges drawn through the paper's Figure 6 profiles (``simulate_judge``), ``--seeds`` seeds each ->
    Kendall tau-b at the run / per-topic-average / pooled levels for V_strict and A_strict (``tau_levels``),
    beside the paper's C3 / C4 values; seed 0 also with 1,000-replicate topic-bootstrap CIs; and the same
    judges on 20 / 21 / 36 topics (``tau_topic_count``: how much of the run-level tau is topic count);
(c) calibration on the seed-0 simulated judge of each profile: ``metaeval calibrate`` (5-fold leave-topics-out)
    and ``metaeval simulate --reps R`` (fresh judges per replication), run as the commands printed.

Everything lands in ``results/paper_rag24/`` (git-ignored): ``descriptive.csv``, ``tau_seeds.csv``,
``tau_summary.csv``, ``tau_seed0_ci.csv``, ``tau_topic_count.csv``, ``judge_<profile>_seed0.jl``, ``calibrate_<profile>/``, ``simulate_<profile>/``,
``*.txt`` (the commands' printed output) and ``results.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from metaeval.analysis import describe_labels, tau_levels  # noqa: E402
from metaeval.calibration import simulate_judge  # noqa: E402
from metaeval.io import load_labels  # noqa: E402
from metaeval.io.assignments import write_assignments  # noqa: E402
from metaeval.paper import KENDALL_TAU, TABLE4, TABLE4_COLUMNS  # noqa: E402

NIST = "../shared/data/trec-rag-2024/nugget_assignment.20241108.jl"
#: profile -> (short name, the paper's comparison with the same nuggets, Table 4 human row, Table 4 judge row)
PROFILES = {
    "paper-fig6-edits": ("edits", "C3_edits_auto_vs_edits_manual", "1a_autonuggets_edits__manualassign",
                         "3a_autonuggets_edits__autoassign"),
    "paper-fig6-manual": ("manual", "C4_manual_auto_vs_manual_manual", "1b_manualnuggets__manualassign",
                          "3b_manualnuggets__autoassign"),
}
METRICS = {"v_strict": "V_strict", "a_strict": "A_strict"}
LEVELS = ("run", "topic_avg", "pooled")


def descriptive(human, judges: dict) -> pd.DataFrame:
    """Table 4 columns: the NIST labels, the seed-0 simulated judges, and the paper's rows."""
    rows = [{"source": "NIST 21 topics (this file)", **{c: describe_labels(human)[c] for c in TABLE4_COLUMNS}}]
    for profile, judge in judges.items():
        d = describe_labels(judge)
        rows.append({"source": f"simulated {profile}, seed 0", **{c: d[c] for c in TABLE4_COLUMNS}})
    for key in ("1a_autonuggets_edits__manualassign", "1b_manualnuggets__manualassign",
                "3a_autonuggets_edits__autoassign", "3b_manualnuggets__autoassign"):
        rows.append({"source": f"paper {key}", **dict(zip(TABLE4_COLUMNS, TABLE4[key]))})
    return pd.DataFrame(rows)


def tau_seeds(human, seeds: int) -> pd.DataFrame:
    """Tau at three levels for every profile x seed x metric (no bootstrap)."""
    rows = []
    for profile in PROFILES:
        for seed in range(seeds):
            judge = simulate_judge(human, profile, seed=seed, name=f"{profile}-s{seed}")
            for metric in METRICS:
                t = tau_levels(human, judge, metric=metric)
                rows.append({"profile": profile, "seed": seed, "metric": metric, "run": t.run,
                             "topic_avg": t.topic_avg, "pooled": t.pooled, "n_topics_skipped": t.n_topics_skipped})
    return pd.DataFrame(rows)


def tau_summary(seeds_df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (profile, metric), g in seeds_df.groupby(["profile", "metric"], sort=False):
        comp = PROFILES[profile][1]
        paper = KENDALL_TAU[comp][METRICS[metric]]
        for i, lvl in enumerate(LEVELS):
            v = g[lvl].to_numpy()
            rows.append({"profile": profile, "metric": metric, "level": lvl, "seeds": len(v), "mean": v.mean(),
                         "sd": v.std(ddof=1) if len(v) > 1 else float("nan"), "min": v.min(), "max": v.max(),
                         "paper": paper[i], "paper_comparison": comp.split("_")[0], "gap": paper[i] - v.mean()})
    return pd.DataFrame(rows)


def tau_topic_count(human, counts: tuple[int, ...], seeds: int) -> pd.DataFrame:
    """How much of the run-level tau is topic count?  Per seed, ``n`` topics: ``n <= T`` a random subset of the
    ``T`` topics; ``n > T`` all topics plus ``n - T`` of them a second time (renamed) with an independent judge
    draw, i.e. the same human labels, fresh judge noise.  Emulates the paper's 20 / 36 topics on this file."""
    import numpy as np

    from metaeval.scoring import score_answers

    hs = score_answers(human)
    qids = sorted(hs["qid"].unique())
    rows = []
    for profile in PROFILES:
        for seed in range(seeds):
            rng = np.random.default_rng([seed, 7])
            j1 = score_answers(simulate_judge(human, profile, seed=np.random.default_rng([seed, 1])))
            j2 = score_answers(simulate_judge(human, profile, seed=np.random.default_rng([seed, 2])))
            for n in counts:
                if n <= len(qids):
                    pick = set(rng.choice(qids, size=n, replace=False))
                    h, j = hs[hs["qid"].isin(pick)], j1[j1["qid"].isin(pick)]
                else:
                    extra = set(rng.choice(qids, size=n - len(qids), replace=False))
                    h2, jj2 = hs[hs["qid"].isin(extra)].copy(), j2[j2["qid"].isin(extra)].copy()
                    h2["qid"] = h2["qid"] + "#2"
                    jj2["qid"] = jj2["qid"] + "#2"
                    h, j = pd.concat([hs, h2]), pd.concat([j1, jj2])
                for metric in METRICS:
                    t = tau_levels(h[["run_id", "qid", metric]], j[["run_id", "qid", metric]], metric=metric)
                    rows.append({"profile": profile, "seed": seed, "n_topics": n, "metric": metric, "run": t.run,
                                 "topic_avg": t.topic_avg, "pooled": t.pooled})
    df = pd.DataFrame(rows)
    return (df.groupby(["profile", "metric", "n_topics"], sort=False)[list(LEVELS)]
              .agg(["mean", "std"]).reset_index())


def seed0_ci(human, judges: dict, n_boot: int) -> pd.DataFrame:
    rows = []
    for profile, judge in judges.items():
        for metric in METRICS:
            t = tau_levels(human, judge, metric=metric, n_boot=n_boot, seed=0)
            for lvl in LEVELS:
                rows.append({"profile": profile, "metric": metric, "level": lvl, "tau": getattr(t, lvl),
                             "ci_low": t.ci[lvl][0], "ci_high": t.ci[lvl][1]})
    return pd.DataFrame(rows)


def run_cli(argv: list[str], log: Path) -> str:
    """Run ``python -m metaeval ARGV`` from the repository root; keep its stdout (progress bars go to the log)."""
    cmd = [sys.executable, "-m", "metaeval", *argv]
    print("$ metaeval " + " ".join(argv), flush=True)
    with open(log.with_suffix(".stderr"), "w", encoding="utf-8") as err:
        res = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True)
    log.write_text(res.stdout, encoding="utf-8")
    if res.returncode != 0:
        raise SystemExit(f"command failed (exit {res.returncode}): {' '.join(cmd)}; see {log.with_suffix('.stderr')}")
    print(res.stdout, flush=True)
    return res.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--human", default=NIST, help="NIST assignment file (default: the shared 21-topic export)")
    ap.add_argument("--seeds", type=int, default=20, help="simulated judges per profile for (b) (default 20)")
    ap.add_argument("--bootstrap", type=int, default=1000, help="topic-bootstrap replicates for the seed-0 CIs")
    ap.add_argument("--reps", type=int, default=100, help="metaeval simulate --reps (default 100)")
    ap.add_argument("--out", default="results/paper_rag24")
    ap.add_argument("--skip-calibration", action="store_true", help="only (a) and (b)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = ROOT / args.out
    out.mkdir(parents=True, exist_ok=True)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 20)

    human = load_labels(ROOT / args.human if not Path(args.human).is_absolute() else args.human)
    judges = {p: simulate_judge(human, p, seed=0, name=f"simulated-{PROFILES[p][0]}-seed0") for p in PROFILES}

    print("(a) Table 4 statistics (tokens = whitespace split)\n")
    desc = descriptive(human, judges)
    desc.to_csv(out / "descriptive.csv", index=False)
    print(desc.to_string(index=False, float_format=lambda v: f"{v:.2f}"), "\n")

    print(f"(b) Kendall tau-b, simulated judge vs NIST labels, {args.seeds} seeds per profile\n")
    seeds_df = tau_seeds(human, args.seeds)
    seeds_df.to_csv(out / "tau_seeds.csv", index=False)
    summ = tau_summary(seeds_df)
    summ.to_csv(out / "tau_summary.csv", index=False)
    print(summ.to_string(index=False, float_format=lambda v: f"{v:.3f}"), "\n")
    print(f"seed 0 with {args.bootstrap}-replicate topic-bootstrap CIs (centred)\n")
    ci = seed0_ci(human, judges, args.bootstrap)
    ci.to_csv(out / "tau_seed0_ci.csv", index=False)
    print(ci.to_string(index=False, float_format=lambda v: f"{v:.3f}"), "\n")

    print(f"topic count: run-level tau with 20 / 21 / 36 topics ({args.seeds} seeds; see tau_topic_count)\n")
    counts = tau_topic_count(human, (20, 21, 36), args.seeds)
    counts.columns = ["_".join(c for c in col if c) for col in counts.columns]
    counts.to_csv(out / "tau_topic_count.csv", index=False)
    print(counts.to_string(index=False, float_format=lambda v: f"{v:.3f}"), "\n")

    cli: dict[str, str] = {}
    if not args.skip_calibration:
        print("(c) calibration on the seed-0 simulated judges\n")
        for profile, judge in judges.items():
            short = PROFILES[profile][0]
            jfile = out / f"judge_{short}_seed0.jl"
            write_assignments(judge, jfile)
            rel = jfile.relative_to(ROOT)
            cli[f"calibrate_{short}"] = run_cli(
                ["calibrate", "--human", args.human, "--judge", str(rel), "--metric", "v_strict", "--metric", "a_strict",
                 "--folds", "5", "--seed", "0", "--out", f"{args.out}/calibrate_{short}"], out / f"calibrate_{short}.txt")
            cli[f"simulate_{short}"] = run_cli(
                ["simulate", "--human", args.human, "--kind", "fig6", "--confusion", profile, "--reps", str(args.reps), "--seed", "0",
                 "--out", f"{args.out}/simulate_{short}"], out / f"simulate_{short}.txt")

    res = {"human": args.human, "seeds": args.seeds, "bootstrap": args.bootstrap, "reps": args.reps,
           "descriptive": desc.to_dict(orient="records"), "tau_summary": summ.to_dict(orient="records"),
           "tau_seed0_ci": ci.to_dict(orient="records"),
           "tau_topic_count": counts.to_dict(orient="records"), "seconds": round(time.perf_counter() - t0, 1)}
    (out / "results.json").write_text(json.dumps(res, indent=1, default=float) + "\n", encoding="utf-8")
    print(f"wrote {args.out}/ in {res['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
