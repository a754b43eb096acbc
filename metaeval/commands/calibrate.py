"""``metaeval calibrate``: the study's calibrate workflow on two label files, and applying a saved model.

Evaluate raw, composite and the corrections on random splits of the human-labelled topics sized like
human-labelled : judge-only (labels paired by nugget text), print held-out errors beside raw's, choose the
leaderboard by one rule (docs/calibration.md), write calibration.json (the leaderboard, PPI++ intervals widened to
contain each point, inside [0, 1]) and calibration-model.json. 'calibrate apply' applies a saved model to judge
labels: by default the point method the procedure chose, with PPI++'s interval widened to contain it; --method M
applies M instead (its own interval).

    metaeval calibrate --human H --judge J [--method M ...] [--metrics V_strict ...] [--repeats S] --out DIR
    metaeval calibrate apply --model DIR/calibration-model.json --judge J [--method M] --out DIR [--allow-mismatch]

Everything is computed by :func:`metaeval.study.calibration_workflow.calibrate_study` (the same function the sweep's
study calls), through :mod:`metaeval.workflow.calibrate` (which reads and writes the files); this command prints.
The last printed line is the recommendation.
"""

from __future__ import annotations

import argparse

from metaeval.commands.helptext import command_parser
from metaeval.formatting import fixed, interval, mean_se



def add_parser(sub: argparse._SubParsersAction) -> None:
    from metaeval.workflow.calibrate import DEFAULTS as D, SEED_DEFAULT  # numpy-free

    p = command_parser(sub, "calibrate", __doc__,
                       help="correct a judge against human labels: held-out validation, fitted model, corrected leaderboard")
    p.add_argument("action", nargs="?", choices=["validate", "apply"], default="validate",
                   help="validate (default) or apply a saved model")
    p.add_argument("--human", help="reference (human) assignment labels (NIST format); required for validate")
    p.add_argument("--judge", required=True, help="judge assignment labels (same format)")
    p.add_argument("--model", help="calibration-model.json (apply)")
    p.add_argument("--method", action="append", metavar="NAME",
                   help="candidate method: raw, composite or a registered calibration method, e.g. ppi_pp (repeat; "
                        "default every one; raw, composite and ppi_pp are always included; 'none' = raw; an unknown "
                        "name lists them); apply: the method to apply instead of the one the procedure chose")
    p.add_argument("--metrics", nargs="+", action="extend", type=str.lower, metavar="M",
                   help="metrics, any case: V_strict a_strict v a w_strict w (the first is the primary; default all six); "
                        "the name of analyze --metrics, metaeval.calibrate(metrics=) and the sweep's analysis.metrics")
    p.add_argument("--metric", action="append", type=str.lower, metavar="M",
                   help="deprecated spelling of --metrics (repeat; still works, with a warning)")
    p.add_argument("--folds", type=int, default=D["folds"],
                   help="when every judge topic is human-labelled, splits fit on 1 - 1/folds of them (default "
                        "%(default)s); otherwise the split sizes mimic human-labelled : judge-only")
    p.add_argument("--inner-folds", type=int, default=D["inner_folds"],
                   help="no longer used (one procedure: see docs/calibration.md)")
    p.add_argument("--repeats", type=int, default=D["repeats"],
                   help="random splits of the human-labelled topics at the applied size on which the one decision is "
                        "made (default %(default)s)")
    p.add_argument("--nested-splits", type=int, default=D["nested_splits"],
                   help="splits inside whose fit topics the whole procedure is re-run for its nested error (default "
                        "%(default)s)")
    p.add_argument("--workers", default=D["workers"],
                   help="processes for the random splits (default %(default)s: the available CPUs; the "
                        "numbers do not depend on it)")
    p.add_argument("--win-share", type=float, default=D["win_share"],
                   help="no longer used (one procedure)")
    p.add_argument("--min-topics", type=int, default=D["min_topics"],
                   help="fewest human-labelled topics on which a choice is evaluated (default %(default)s); below: "
                        "composite with PPI++ intervals, nothing evaluated")
    p.add_argument("--selection", choices=["one_se", "min"], default=D["selection"],
                   help="no longer used (one procedure)")
    p.add_argument("--min-coverage", type=float, default=D["min_coverage"],
                   help="share of label pairs that must match by nugget text for label-level methods (default %(default)s)")
    p.add_argument("--seed", type=int, default=SEED_DEFAULT,
                   help="calibration seed: splits and parameter draws (default %(default)s)")
    p.add_argument("--analysis-seed", type=int, default=0,
                   help="seed of the analysis draws: the judge score's topic-bootstrap interval (the raw "
                   "leaderboard) and --strictness's within-topic bootstrap (default 0)")
    p.add_argument("--level", type=float, default=D["level"], help="confidence level (default %(default)s)")
    p.add_argument("--bootstrap", type=int, default=D["n_boot"],
                   help="topic-bootstrap replicates for the judge score's interval (default %(default)s)")
    p.add_argument("--posterior-strata", choices=["none", "run", "length"], default="none",
                   help="extra strata for the posterior correction, shrunk toward the importance level (default none)")
    p.add_argument("--kappa", type=float, default=None,
                   help="shrinkage prior strength, pseudo-pairs (posterior, matrix; default: the methods' own, "
                        "metaeval.calibration.methods.base.KAPPA)")
    p.add_argument("--judge-spec", metavar="TEXT", help="judge spec (name/config) recorded in the model; apply compares it")
    p.add_argument("--prompt-version", metavar="TEXT", help="prompt version recorded in the model; apply compares it")
    p.add_argument("--strictness", action="store_true", help="also fit the strictness models (validate)")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="apply: warn instead of refusing when judge spec, prompt, nuggets or label policy differ")
    p.add_argument("--top", type=int, default=10, help="leaderboard rows to print (default 10)")
    p.add_argument("--run-map", action="append", metavar="OLD=NEW|FILE",
                   help="rename a run on both inputs before pairing (repeatable; or a .json/.yaml/text mapping file)")
    p.add_argument("--out", required=True, help="output folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os

    from metaeval.errors import ConfigError
    from metaeval.measures import METRICS, canonical_metrics

    if args.metric:  # the spelling before --metrics (issue 32): still works, says so once on stderr
        import sys

        print(f"warning: calibrate --metric is deprecated; use --metrics {' '.join(args.metric)} (the name "
              "metaeval.calibrate(metrics=) and analysis.metrics use)", file=sys.stderr)
    chosen = [*(args.metrics or []), *(args.metric or [])]
    metrics = canonical_metrics(chosen or METRICS, "--metrics")  # unknown: one line naming the nearest measure
    if not 0 < args.level < 1:
        raise ConfigError(f"--level {args.level}: expected a value between 0 and 1")
    if args.method:
        from metaeval.workflow.calibrate import check_methods

        check_methods(args.method, "--method")
    from metaeval.io.outputs import check_output

    check_output(args.out, kind="dir")  # before any work: '' / a file / /proc / read-only / too long are one line
    os.makedirs(args.out, exist_ok=True)
    if args.action == "apply":
        if not args.model:
            raise ConfigError("calibrate apply needs --model FILE")
        return _apply(args, metrics if chosen else None)
    if not args.human:
        raise ConfigError("calibrate needs --human H (or 'calibrate apply --model FILE')")
    from metaeval.workflow.calibrate import calibrate_files

    settings = {"methods": args.method, "metrics": metrics, "metric": metrics[0], "folds": args.folds,
                "inner_folds": args.inner_folds, "repeats": args.repeats, "nested_splits": args.nested_splits, "win_share": args.win_share,
                "min_topics": args.min_topics, "selection": args.selection, "min_coverage": args.min_coverage,
                "level": args.level, "n_boot": args.bootstrap, "options": fit_options(args),
                "judge_spec": args.judge_spec, "prompt_version": args.prompt_version, "workers": args.workers}
    result, cal_path, model_path = calibrate_files(args.human, args.judge, settings, out_dir=args.out, seed=args.seed,
                                                   analysis_seed=args.analysis_seed, run_map=args.run_map,
                                                   strictness=args.strictness)
    print_result(result, top=args.top)
    print(f"\nwrote {cal_path} and {model_path}")
    print(f"recommendation: {result['recommendation']}")
    return 0


def fit_options(args: argparse.Namespace) -> dict:
    """Per-method fit options of the label-level methods (``--kappa`` only where given: else the methods' own)."""
    strata = None if args.posterior_strata == "none" else args.posterior_strata
    kappa = {} if args.kappa is None else {"kappa": args.kappa}
    return {"posterior": {"strata": strata, **kappa}, "matrix": dict(kappa), "matrix_unconstrained": dict(kappa)}


def print_result(res: dict, top: int = 10) -> None:
    """The validation table (every metric), refusals, and the primary metric's leaderboard."""
    from metaeval.commands.rankset_text import rank_set_lines
    from metaeval.measures import display_name

    pr, st = res["pairing"], res["settings"]
    print(f"calibration of {res['judge']} against {res['reference']}: {pr['matched']} of "
          f"{max(pr['judge_pairs'], pr['reference_pairs'])} label pairs match by nugget text ({100 * pr['coverage']:.1f}%); "
          f"{len(res['topics']['human_labelled'])} human-labelled topics, {len(res['topics']['judge_only'])} judge-only")
    if st.get("fit_topics"):
        print(f"held-out = whole-track figures on {st['splits']} random splits of the human-labelled topics, fit on "
              f"{st['fit_topics']}, scored on {st['held_out_topics']} (the sizes mimic human-labelled : judge-only); "
              f"+- = corrected resampled SE; intervals {int(100 * st['level'])}%, inside [0, 1]")
    print(f"{'metric':<10}{'method':<22}{'wins':>5}{'MAE held-out':>16}{'vs raw':>18}{'bias':>9}{'cover':>7}{'worst':>7}"
          f"{'width':>7}  held-out tau run/topic/pooled")
    refused = {}
    for metric, block in res["by_metric"].items():
        wins = block["selection"]["wins"]
        for name, c in block["candidates"].items():
            if c["status"] == "not evaluated":
                continue
            if c["status"] != "ok":
                refused[name] = c["reason"]
                continue
            h = c["held_out"]
            sel = block["selection"]
            # * = the point method shown; i = the interval method, when it is another
            mark = " *" if name == sel["method"] else (" i" if name == sel.get("intervals_by") else "")
            tau = "/".join(fixed(h["tau"].get(k), 3) for k in ("run", "topic_avg", "pooled"))
            vs = "-" if name == "raw" else mean_se(h["diff_vs_raw"], signed=True, sep="+-")
            label = name + mark
            cover = (f"{fixed(h['coverage'], 2):>7}{fixed(h['coverage_worst_run'], 2):>7}{fixed(h['mean_ci_width'], 2):>7}"
                     if h["coverage"] is not None else f"{'point estimates only':>21}")
            print(f"{display_name(metric):<10}{label:<22}{wins.get(name, 0):>5}{mean_se(h['mae'], sep='+-'):>16}{vs:>18}"
                  f"{fixed(h['bias'], 4):>9}{cover}  {tau}")
        sel = block["selection"]
        if sel.get("nested_splits"):
            print(f"{'':<10}nested (the procedure inside the splits){mean_se(sel['nested_mae'], sep='+-'):>17}"
                  f"{mean_se(sel['nested_diff_vs_raw'], signed=True, sep='+-'):>18}")
    for name, why in refused.items():
        print(f"{name}: {why}")
    print("(* = shown (its points); i = its intervals' method; x+-y = mean +- its standard error over the splits "
          "(corrected resampled); wins = splits on which the method had the lowest held-out error; vs raw = mean paired "
          "difference of MAE, negative = better than raw; cover/worst = held-out coverage of the human run score by the "
          "interval shown with that point, overall / worst run)")
    lb = res["leaderboard"]
    metric = display_name(res["metric"])
    print(f"\nleaderboard, {metric}: estimated human run score over all {lb['human_labelled_topics'] + lb['judge_only_topics']} "
          f"topics (human labels on {lb['human_labelled_topics']}, {lb['estimated_by']} on {lb['judge_only_topics']} "
          f"judge-only); {lb['intervals_why']}")
    w = max([len("run")] + [len(row["run_id"]) for row in lb["rows"][:top]]) + 1  # run ids whole, never cut
    print(f"{'rank':>4}  {'run':<{w}}{'human est.':>11}  {'interval':<18}{'human (lab.)':>13}{'judge score':>12}")
    for row in lb["rows"][:top]:
        ci = row["human_estimate_ci"]
        iv = interval(ci, 4, point_missing="-") if ci else "(all labelled)"
        print(f"{row['human_estimate_rank']:>4}  {row['run_id']:<{w}}{fixed(row['human_estimate'], 4):>11}  {iv:<18}"
              f"{fixed(row['human_labelled'], 4):>13}{fixed(row['judge_score'], 4):>12}")
    rank_lines = rank_set_lines(res.get("rank_sets"), metric, top)
    if rank_lines:
        print("\n" + "\n".join(rank_lines))
    for m, block in res["by_metric"].items():
        if m != res["metric"]:
            print(f"also: {block['recommendation']}")


def _apply(args: argparse.Namespace, metrics) -> int:
    import sys

    from metaeval.measures import display_name
    from metaeval.workflow.calibrate import apply_file

    method = args.method[0] if args.method else None
    out, path = apply_file(args.model, args.judge, out_dir=args.out, run_map=args.run_map, metrics=metrics,
                           method=method, level=args.level, seed=args.seed, n_boot=args.bootstrap,
                           allow_mismatch=args.allow_mismatch,
                           settings={"judge_spec": args.judge_spec, "prompt_version": args.prompt_version})
    for w in out["warnings"]:
        print(f"warning: {w}", file=sys.stderr)
    fitted = len(out["topics"]["fitted_on_and_applied"])
    for m, block in out["by_metric"].items():
        how = (f"--method override; the procedure chose {block['chosen']}" if block["overridden"] and block["chosen"]
               else "chosen by the procedure" if block["chosen"] else "")
        print(f"{display_name(m)} by {block['method']}" + (f" ({how})" if how else "") + f": {block['note']}"
              + (f" ({fitted} of these topics were in the fit: in-sample there)" if fitted else ""))
        for row in block["rows"][: args.top]:
            ci = row.get("human_estimate_ci")
            iv = interval(ci, 4, point_missing="-", lead="  ")
            est = f"{fixed(row['human_estimate'], 4):>8}{iv}  " if "human_estimate" in row else ""
            print(f"  {row['run_id']:<50}{est}judge score {fixed(row['judge_score'], 4)}")
    print(f"\nwrote {path}")
    return 0
