"""Where is each offline judge of the default sweep stricter than the demo's human labels?

Run from the repository root (about 15 s):

    .venv/bin/python experiments/strictness_study/run.py

1. runs ``metaeval sweep +experiment=strictness_study`` (the default offline grid, serial, no optional judges;
   ``--skip-sweep`` reuses ``results/strictness_study/`` from an earlier run);
2. for every ``*__human_auto`` cell (the judge assigns the demo's human nuggets, so its labels pair one to one
   with the human labels): confusion matrix, agreement, net strictness index
   ``P(judge < human) - P(judge > human)`` with its Wald CI and a topic-clustered CI, and the Stuart-Maxwell
   marginal-homogeneity test (``metaeval.analysis.label_agreement``);
3. the strictness models per cell (``metaeval.calibration.strictness.strictness_models``): the index per
   stratum (importance, answer-length tertile, run), a cluster-robust logit of "judge stricter" and OLS of the
   label shift on vital + standardised log answer length, and random-intercept models by topic and by run;
4. the same logit with the human label as a covariate, on pairs the judge could mark down (``conditional_rows``),
   and the human label mix per stratum (``composition_rows``), which the unconditional models do not separate
   from the judge's behaviour.

Writes ``results/strictness_study/strictness/`` (``agreement.csv``, ``confusion.csv``, ``strata.csv``,
``models.csv``, ``strictness.json``).  The demo data are illustrative (written by the metaeval authors, not
real assessments); the numbers show how to read the tool, not how real LLM judges behave.
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

from metaeval.analysis import label_agreement  # noqa: E402
from metaeval.calibration.strictness import strictness_models  # noqa: E402
from metaeval.data import load_dataset  # noqa: E402
from metaeval.io import load_labels  # noqa: E402

SWEEP = ["sweep", "+experiment=strictness_study", "--no-progress"]
ORDER = ("not_support", "partial_support", "support")


def human_auto_cells(results: Path) -> list[str]:
    cells = sorted(p.name for p in (results / "cells").iterdir() if p.name.endswith("__human_auto") and (p / "labels.jsonl").is_file())
    if not cells:
        raise SystemExit(f"no */labels.jsonl of a human_auto cell under {results / 'cells'}: run the sweep first")
    return cells


def agreement_row(cell: str, ag: dict, sm: dict) -> dict:
    clus = sm["strictness_index"]["all"]["all"]
    return {"cell": cell, "n": ag["n"], "exact_agreement": ag["exact_agreement"], "cohen_kappa": ag["cohen_kappa"],
            "weighted_kappa": ag["weighted_kappa"], "strictness_index": ag["strictness_index"],
            "ci_wald_low": ag["strictness_ci"][0], "ci_wald_high": ag["strictness_ci"][1],
            "ci_topic_low": clus["ci_cluster"][0], "ci_topic_high": clus["ci_cluster"][1],
            "p_lower": ag["p_lower"], "p_higher": ag["p_higher"], "stuart_maxwell_stat": ag["stuart_maxwell_stat"],
            "stuart_maxwell_p": ag["stuart_maxwell_p"],
            **{f"human_pct_{k}": ag["reference_mix"][k] for k in ORDER},
            **{f"judge_pct_{k}": ag["candidate_mix"][k] for k in ORDER}}


def confusion_rows(cell: str, ag: dict) -> list[dict]:
    return [{"cell": cell, "human": h, **{f"judge_{j}": ag["confusion"][i][k] for k, j in enumerate(ORDER)}}
            for i, h in enumerate(ORDER)]


def strata_rows(cell: str, sm: dict) -> list[dict]:
    rows = []
    for stratum in ("all", "importance", "answer_length", "run"):
        for value, d in sm["strictness_index"][stratum].items():
            rows.append({"cell": cell, "stratum": stratum, "value": value, "n": d["n"],
                         "strictness_index": d["strictness_index"], "ci_topic_low": d["ci_cluster"][0],
                         "ci_topic_high": d["ci_cluster"][1], "p_lower": d["p_lower"], "p_higher": d["p_higher"]})
    return rows


def model_rows(cell: str, sm: dict) -> list[dict]:
    rows = []
    for model in ("logit", "ols"):
        if model not in sm:
            continue
        for c in sm[model]["coefficients"]:
            if c["term"] == "Intercept":
                continue
            est, ci = (c["effect"], c["effect_ci"]) if "effect" in c else (c["coef"], c["ci"])
            rows.append({"cell": cell, "model": model, "term": c["term"], "effect": sm[model]["effect"],
                         "estimate": est, "ci_low": ci[0], "ci_high": ci[1], "p": c["p"]})
    for key, m in sm.get("mixedlm", {}).items():
        if "error" in m:
            rows.append({"cell": cell, "model": f"mixedlm_{key}", "term": "error", "effect": m["error"]})
            continue
        for c in m["coefficients"]:
            if c["term"] != "Intercept":
                rows.append({"cell": cell, "model": f"mixedlm_{key}", "term": c["term"], "effect": "mean shift",
                             "estimate": c["coef"], "ci_low": c["ci"][0], "ci_high": c["ci"][1], "p": c["p"]})
        rows.append({"cell": cell, "model": f"mixedlm_{key}", "term": f"icc_{key}", "effect": "intraclass correlation",
                     "estimate": m["icc"], "converged": m["converged"], "warnings": ",".join(m["warnings"])})
    return rows


def conditional_rows(cell: str, human, judge) -> list[dict]:
    """Control for the human label: ``stricter ~ vital + log_length_z + C(human)`` (logit, topic-cluster-robust SEs)
    on the pairs whose human label is partial_support or support - the only pairs where the judge *can* be
    stricter (``metaeval.calibration.strictness`` ``conditional`` block).  Without the human label, a covariate
    that goes with higher human labels (vital nuggets, long answers) shows up as "stricter" even for a judge whose
    errors ignore it (the simulated judge below)."""
    from metaeval.calibration.strictness import shift_frame, strictness_models

    block = strictness_models(human, judge, mixed=False)["conditional"]["logit"]
    n = int((shift_frame(human, judge)["human"] > 0).sum())  # the pairs the conditional logit is fitted on
    return [{"cell": cell, "model": "logit_given_human", "term": c["term"], "effect": "odds ratio", "n": n,
             "estimate": c["effect"], "ci_low": c["effect_ci"][0], "ci_high": c["effect_ci"][1], "p": c["p"]}
            for c in block["coefficients"] if c["term"] in ("vital", "log_length_z")]


def composition_rows(human, judge) -> list[dict]:
    """Human label mix per importance / answer-length stratum (same for every cell): where the judge has room to
    be stricter (over the pairs both sides labelled validly).  ``mean_human_rank``: not_support 0, partial 1, support 2."""
    from metaeval.calibration.strictness import shift_frame

    df = shift_frame(human, judge)
    df["importance"] = df["vital"].map({1.0: "vital", 0.0: "okay"})
    df["answer_length"] = pd.qcut(df["length"].rank(method="first"), 3, labels=["short", "medium", "long"])
    rows = []
    for col in ("importance", "answer_length"):
        for val, g in df.groupby(col, observed=True):
            rows.append({"stratum": col, "value": str(val), "n": int(len(g)), "mean_human_rank": float(g["human"].mean()),
                         "share_human_above_not_support": float((g["human"] > 0).mean())})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results/strictness_study", help="the sweep's results folder")
    ap.add_argument("--skip-sweep", action="store_true", help="reuse an earlier sweep's cells")
    ap.add_argument("--dataset", default="demo", help="the sweep's dataset (registered name or path) whose human "
                    "labels are the reference (default demo)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    results = ROOT / args.results
    if not args.skip_sweep:
        print("$ metaeval " + " ".join(SWEEP), flush=True)
        res = subprocess.run([sys.executable, "-m", "metaeval", *SWEEP], cwd=ROOT, text=True)
        if res.returncode != 0:
            raise SystemExit(f"sweep failed (exit {res.returncode})")
    human = load_dataset(args.dataset).labels
    if human is None:
        raise SystemExit(f"dataset {args.dataset!r} has no human labels to compare with")
    out = results / "strictness"
    out.mkdir(parents=True, exist_ok=True)
    agree, conf, strata, models, raw = [], [], [], [], {}
    for cell in human_auto_cells(results):
        judge = load_labels(results / "cells" / cell / "labels.jsonl", name=cell)
        ag = label_agreement(human, judge)
        sm = strictness_models(human, judge)
        raw[cell] = {"agreement": {k: v for k, v in ag.items() if k != "shifts"}, "models": sm}
        agree.append(agreement_row(cell, ag, sm))
        conf.extend(confusion_rows(cell, ag))
        strata.extend(strata_rows(cell, sm))
        models.extend(model_rows(cell, sm))
        models.extend(conditional_rows(cell, human, judge))
    composition = pd.DataFrame(composition_rows(human, judge))
    tables = {"composition": composition, "agreement": pd.DataFrame(agree), "confusion": pd.DataFrame(conf), "strata": pd.DataFrame(strata),
              "models": pd.DataFrame(models)}
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    pd.set_option("display.max_rows", 200)
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
        print(f"\n{name}" + ("" if name == "composition" else " (human = dataset labels, judge = cell labels; index > 0: judge stricter)") + "\n")
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    (out / "strictness.json").write_text(json.dumps(raw, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"\nwrote {out.relative_to(ROOT)}/ in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
