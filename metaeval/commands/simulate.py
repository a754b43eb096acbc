"""``metaeval simulate``: check calibration methods on a synthetic judge before trusting them.

    metaeval simulate --human H [--confusion paper-fig6-edits|paper-fig6-manual|FILE] [--reps R] [--seed S] --out DIR
"""

from __future__ import annotations

import argparse

METHOD_NAMES = ("posterior", "matrix", "matrix_unconstrained", "ordinal", "ppi")
METRIC_NAMES = ("v_strict", "a_strict", "v", "a", "w_strict", "w")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate",
        help="simulation study: synthetic judge from a confusion matrix; bias, RMSE, CI coverage per method",
        description="Draw R synthetic judges from the human labels through a confusion matrix (default: the "
        "paper's Figure 6, row-normalised), fit every calibration method on calibration topics, apply it to "
        "held-out topics, and report bias, RMSE and CI coverage of corrected run scores and Kendall tau before/after.",
    )
    p.add_argument("--human", required=True, help="human assignment labels (NIST format)")
    p.add_argument("--confusion", default="paper-fig6-edits",
                   help="paper-fig6-edits (default), paper-fig6-manual, or a JSON file with a 3x3 matrix (rows human)")
    p.add_argument("--confusion-from", metavar="JUDGE", help="estimate the confusion matrix from this judge's labels "
                   "against --human (overrides --confusion)")
    p.add_argument("--reps", type=int, default=200, help="replications (default 200)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--method", action="append", choices=METHOD_NAMES, help="method (repeat; default all)")
    p.add_argument("--metric", action="append", choices=METRIC_NAMES, help="metric (repeat; default v_strict and a_strict)")
    p.add_argument("--design", choices=["split", "kfold"], default="split",
                   help="split: a random held-out share of topics per replication (default); kfold: K folds per replication")
    p.add_argument("--holdout", type=float, default=0.25, help="held-out share of topics for --design split (default 0.25)")
    p.add_argument("--folds", type=int, default=5, help="K for --design kfold (default 5)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--out", required=True, help="output folder (writes simulation.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import os

    from metaeval.calibration.harness import run_study
    from metaeval.io.jsonl import to_jsonable
    from metaeval.errors import ConfigError
    from metaeval.io import load_labels

    if args.reps < 1:
        raise ConfigError(f"--reps {args.reps}: need at least 1")
    os.makedirs(args.out, exist_ok=True)
    human = load_labels(args.human)
    methods = tuple(args.method or METHOD_NAMES)
    metrics = tuple(args.metric or ("v_strict", "a_strict"))
    try:
        from tqdm import tqdm

        bar = tqdm(total=args.reps, desc="replications", unit="rep", leave=False)
        progress = lambda n: bar.update(1)  # noqa: E731
    except ImportError:  # pragma: no cover
        bar, progress = None, None
    confusion = args.confusion
    if args.confusion_from:
        from metaeval.calibration.harness import estimate_confusion

        confusion = estimate_confusion(human, load_labels(args.confusion_from))
    res = run_study(human, confusion, reps=args.reps, seed=args.seed, methods=methods, metrics=metrics,
                    design=args.design, holdout=args.holdout, folds=args.folds, level=args.level, progress=progress)
    if bar is not None:
        bar.close()
    res["human"] = human.name
    if args.confusion_from:
        res["config"]["confusion_name"] = f"estimated from {args.confusion_from}"
    path = os.path.join(args.out, "simulation.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(to_jsonable(res), fh, indent=1)
        fh.write("\n")
    cfg = res["config"]
    print(f"{cfg['reps']} replications, confusion {cfg['confusion_name']}, design {cfg['design']}, "
          f"{cfg['n_topics']} topics x {cfg['n_runs']} runs, {res['seconds']} s")
    for m in metrics:
        raw = res["raw"][m]
        print(f"\n{m}: raw judge bias {raw['bias']:+.4f}, mean |bias| per run {raw['mean_abs_bias']:.4f}, RMSE {raw['rmse']:.4f}; "
              f"tau run/topic/pooled {_t(raw['tau'])}")
        print(f"  {'method':<22}{'bias':>9}{'|bias|':>9}{'cut':>7}{'RMSE':>8}{'cover':>7}{'width':>7}{'median':>7}  tau after")
        for name in methods:
            f = res["methods"][name][m]
            print(f"  {name:<22}{f['bias']:+9.4f}{f['mean_abs_bias']:9.4f}{100 * f['bias_reduction']:6.0f}%{f['rmse']:8.4f}"
                  f"{f['coverage']:7.3f}{f['mean_ci_width']:7.3f}{f['median_ci_width']:7.3f}  {_t(f['tau_after'])}")
    print(f"\nwrote {path}")
    return 0


def _t(t: dict) -> str:
    return "/".join("nan" if t.get(k) is None else f"{t[k]:.3f}" for k in ("run", "topic_avg", "pooled"))
