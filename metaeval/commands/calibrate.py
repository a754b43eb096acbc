"""``metaeval calibrate``: validate calibrations by topic K-fold, fit them, and apply saved ones.

    metaeval calibrate --human H --judge J [--method M ...] [--folds K] [--seed S] --out DIR
    metaeval calibrate apply --model DIR/calibration-model.json --judge J --out DIR
"""

from __future__ import annotations

import argparse

METHOD_NAMES = ("posterior", "matrix", "matrix_unconstrained", "ordinal", "ppi")
METRIC_NAMES = ("v_strict", "a_strict", "v", "a", "w_strict", "w")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate",
        help="correct a judge against human labels: held-out validation, fitted model, corrected leaderboard",
        description="Fit label-calibration methods on topics with human and judge labels, validate them by "
        "leave-topics-out K-fold (held-out MAE, bias, CI coverage, Kendall tau before/after), save the fitted "
        "models and a corrected leaderboard with CIs.  'calibrate apply' applies a saved model to judge labels.",
    )
    p.add_argument("action", nargs="?", choices=["validate", "apply"], default="validate",
                   help="validate (default: K-fold + fit + leaderboard) or apply a saved model")
    p.add_argument("--human", help="human assignment labels (NIST format); required for validate")
    p.add_argument("--judge", required=True, help="judge assignment labels (same format)")
    p.add_argument("--model", help="fitted model file (apply)")
    p.add_argument("--method", action="append", choices=METHOD_NAMES, help="method (repeat; default all)")
    p.add_argument("--metric", action="append", choices=METRIC_NAMES, help="metric (repeat; default all six)")
    p.add_argument("--folds", type=int, default=5, help="K for leave-topics-out K-fold (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed for folds and parameter draws (default 0)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--strictness", action="store_true", help="also fit the strictness models (validate)")
    p.add_argument("--posterior-strata", choices=["none", "run", "length"], default="none",
                   help="extra strata for the posterior correction, shrunk toward the importance level (default none)")
    p.add_argument("--kappa", type=float, default=10.0, help="shrinkage prior strength in pseudo-pairs (posterior, matrix; default 10)")
    p.add_argument("--ppi-estimand", choices=["applied", "population"], default="applied",
                   help="PPI target: human score on the applied topics (default) or the topic-population mean")
    p.add_argument("--out", required=True, help="output folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from metaeval.io.jsonl import to_jsonable
    import os

    from metaeval.errors import ConfigError

    os.makedirs(args.out, exist_ok=True)
    metrics = tuple(args.metric or METRIC_NAMES)
    if not 0 < args.level < 1:
        raise ConfigError(f"--level {args.level}: expected a value between 0 and 1")
    if args.action == "apply":
        if not args.model:
            raise ConfigError("calibrate apply needs --model FILE")
        return _apply(args, metrics)
    if not args.human:
        raise ConfigError("calibrate needs --human H (or 'calibrate apply --model FILE')")
    from metaeval.calibration.apply import apply_models, fit_models, leaderboard_records, raw_leaderboard, save_models
    from metaeval.calibration.validate import cross_validate
    from metaeval.io import load_labels

    human, judge = load_labels(args.human), load_labels(args.judge)
    methods = tuple(args.method or METHOD_NAMES)
    options = fit_options(args)
    cv = cross_validate(human, judge, methods, folds=args.folds, seed=args.seed, metrics=metrics, level=args.level, options=options)
    bundle = fit_models(human, judge, methods, metrics, options=options)
    model_path = os.path.join(args.out, "calibration-model.json")
    save_models(bundle, model_path)
    preds = apply_models(bundle, judge, metrics, args.level, args.seed, apply_options=_apply_options(args))
    raw = raw_leaderboard(judge, metrics, args.level, seed=args.seed)
    result = {
        "human": human.name, "judge": judge.name, "model_file": os.path.abspath(model_path),
        "validation": cv,
        "leaderboard": {"raw_judge": {m: leaderboard_records(raw, m) for m in metrics},
                        **{name: {m: leaderboard_records(p.runs, m) for m in metrics if m in set(p.runs["metric"])}
                           for name, p in preds.items()}},
        "leaderboard_note": "fitted on all human-labelled topics and applied to every judge topic; raw_judge CI = "
                            "topic-bootstrap percentile; method CIs as documented per method",
    }
    if args.strictness:
        from metaeval.calibration.strictness import strictness_models

        result["strictness"] = strictness_models(human, judge)
    with open(os.path.join(args.out, "calibration.json"), "w", encoding="utf-8") as fh:
        json.dump(to_jsonable(result), fh, indent=1)
        fh.write("\n")
    _print_validation(cv, metrics)
    print(f"\nwrote {os.path.join(args.out, 'calibration.json')} and {model_path}")
    return 0


def _apply(args: argparse.Namespace, metrics: tuple[str, ...]) -> int:
    import json

    from metaeval.io.jsonl import to_jsonable
    import os

    from metaeval.calibration.apply import apply_models, leaderboard_records, load_models, raw_leaderboard
    from metaeval.io import load_labels

    bundle = load_models(args.model)
    if args.method:
        bundle["models"] = {k: v for k, v in bundle["models"].items() if k in args.method}
    judge = load_labels(args.judge)
    preds = apply_models(bundle, judge, metrics, args.level, args.seed, apply_options=_apply_options(args))
    raw = raw_leaderboard(judge, metrics, args.level, seed=args.seed)
    out = {"judge": judge.name, "model_file": os.path.abspath(args.model), "fitted_on": bundle.get("fitted_on", {}),
           "n_topics": len(judge.qids), "n_runs": len(judge.run_ids),
           "leaderboard": {"raw_judge": {m: leaderboard_records(raw, m) for m in metrics},
                           **{n: {m: leaderboard_records(p.runs, m) for m in metrics if m in set(p.runs["metric"])}
                              for n, p in preds.items()}},
           "notes": {n: p.notes for n, p in preds.items() if p.notes}}
    for name, p in preds.items():
        p.answers.to_csv(os.path.join(args.out, f"answers.{name}.csv"), index=False)
    with open(os.path.join(args.out, "calibrated.json"), "w", encoding="utf-8") as fh:
        json.dump(to_jsonable(out), fh, indent=1)
        fh.write("\n")
    first = metrics[0]
    for name, p in preds.items():
        top = p.leaderboard(first).head(10)
        print(f"{name}: top runs by corrected {first}")
        for row in top.itertuples(index=False):
            print(f"  {row.run_id:<50} {row.estimate:7.4f}  [{row.ci_low:7.4f}, {row.ci_high:7.4f}]")
    print(f"\nwrote {os.path.join(args.out, 'calibrated.json')}")
    return 0


def fit_options(args: argparse.Namespace) -> dict:
    """Per-method fit options from the command line."""
    strata = None if args.posterior_strata == "none" else args.posterior_strata
    return {"posterior": {"strata": strata, "kappa": args.kappa}, "matrix": {"kappa": args.kappa},
            "matrix_unconstrained": {"kappa": args.kappa}}


def _apply_options(args: argparse.Namespace) -> dict:
    return {"ppi": {"estimand": args.ppi_estimand}}


def _print_validation(cv: dict, metrics: tuple[str, ...]) -> None:
    print(f"leave-topics-out {cv['folds']}-fold validation, {cv['n_topics']} topics, {cv['n_runs']} runs (seed {cv['seed']})")
    head = f"{'method':<22}{'metric':<10}{'MAE raw':>9}{'MAE cal':>9}{'bias raw':>10}{'bias cal':>10}{'cover':>7}  tau run/topic/pooled raw -> cal"
    print(head)
    for method, per in cv["methods"].items():
        for m in metrics:
            f = per.get(m)
            if not f:
                continue
            tb, ta = f.get("tau_before", {}), f.get("tau_after", {})
            cov = "-" if f["coverage"] is None else f"{f['coverage']:.2f}"
            taus = "/".join(_fmt(tb.get(k)) for k in ("run", "topic_avg", "pooled")) + " -> " + "/".join(_fmt(ta.get(k)) for k in ("run", "topic_avg", "pooled"))
            print(f"{method:<22}{m:<10}{f['mae_before']:9.4f}{f['mae_after']:9.4f}{f['bias_before']:10.4f}{f['bias_after']:10.4f}{cov:>7}  {taus}")


def _fmt(x) -> str:
    return "nan" if x is None else f"{x:.3f}"
