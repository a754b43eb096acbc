"""``metaeval simulate``: check calibration methods on judges built to break them before trusting them.

For each judge kind and replication, fit every calibration method on 75% of the topics and apply it to the rest;
report bias cut, RMSE, coverage overall and for the worst run, and mean CI width, each with its Monte-Carlo SE.

    metaeval simulate --human H [--kind fig6 --kind run_bias ...] [--real-judge J] [--reps R] [--seed S] --out DIR

Judge kinds (``metaeval.simulation``): fig6 (independent Figure 6 confusion), run_bias, topic_difficulty,
length_strictness, resampled (a real judge's labels, e.g. the lexical judge's ``labels.jsonl`` from a sweep,
resampled by topic; needs ``--real-judge``).  Writes ``simulation.json``; prints one table.
"""

from __future__ import annotations

import argparse

from metaeval.commands.helptext import command_parser
from metaeval.formatting import plus_minus

#: = metaeval.simulation.JUDGE_KINDS (a test checks); spelled out so that ``metaeval --help`` imports no numpy
JUDGE_KINDS = ("fig6", "run_bias", "topic_difficulty", "length_strictness", "resampled")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "simulate", __doc__,
                       help="simulation study: judges that break the methods' assumptions; bias cut, RMSE, coverage, CI width")
    p.add_argument("--human", required=True, help="human assignment labels (NIST format)")
    p.add_argument("--kind", action="append", choices=JUDGE_KINDS, help="judge kind (repeat; default all)")
    p.add_argument("--real-judge", metavar="LABELS", help="a real judge's labels on the same nuggets (kind resampled)")
    p.add_argument("--confusion", default="paper-fig6-edits",
                   help="base confusion: paper-fig6-edits (default), paper-fig6-manual, or a JSON 3x3 file (rows human)")
    p.add_argument("--reps", type=int, default=200, help="replications per kind (default 200)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--method", action="append", metavar="NAME",
                   help="a registered calibration method, e.g. ppi_pp (repeat; default every registered one; raw "
                        "always; an unknown name lists them)")
    p.add_argument("--metric", default="v_strict", type=str.lower, help="metric, any case (default V_strict)")
    p.add_argument("--holdout", type=float, default=0.25, help="held-out share of topics (default 0.25)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--out", required=True, help="output folder (writes simulation.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from metaeval.errors import ConfigError
    from metaeval.measures import measure

    if args.reps < 2:
        raise ConfigError(f"--reps {args.reps}: need at least 2")
    if args.method:
        from metaeval.workflow.calibrate import check_methods

        methods = check_methods(args.method, "--method")
    else:
        methods = None
    metric = measure(args.metric, "--metric").name  # unknown: one line naming the nearest measure
    kinds = list(args.kind or JUDGE_KINDS)
    if "resampled" in kinds and not args.real_judge:
        if args.kind:
            raise ConfigError("--kind resampled needs --real-judge LABELS (a real judge's labels on these nuggets)")
        kinds.remove("resampled")
        print("note: kind 'resampled' skipped (no --real-judge)")
    from metaeval.io.outputs import check_output

    check_output(args.out, kind="dir")  # before the replications: '', a file, /proc, read-only -> one line
    from metaeval.workflow.simulate import simulate_files

    done = simulate_files(args.human, kinds=kinds, out_dir=args.out, real_judge=args.real_judge, reps=args.reps,
                          seed=args.seed, methods=methods, metric=metric, holdout=args.holdout, level=args.level,
                          confusion=args.confusion)
    print(format_table(done.result))
    print(f"\nwrote {done.path}")
    return 0


def format_table(res: dict) -> str:
    cfg = res["config"]
    lines = [f"{cfg['reps']} replications per kind, {cfg['metric']}, {int(100 * cfg['holdout'])}% of {cfg['n_topics']} topics "
             f"held out x {cfg['n_runs']} runs, {int(100 * cfg['level'])}% intervals; +- = Monte-Carlo SE; {res['seconds']} s",
             f"{'kind':<18}{'method':<22}{'bias cut':>14}{'RMSE':>16}{'coverage':>16}{'worst run':>16}{'CI width':>16}"]
    for kind, per in res["kinds"].items():
        for m, f in per.items():
            se = f["mc_se"]
            cut = "-" if m == "none" else plus_minus(f["bias_cut"], se["bias_cut"], 2, sep="+-")
            lines.append(f"{kind:<18}{'none (raw)' if m == 'none' else m:<22}{cut:>14}{plus_minus(f['rmse'], se['rmse'], 3, sep='+-'):>16}"
                         f"{plus_minus(f['coverage'], se['coverage'], 3, sep='+-'):>16}{plus_minus(f['coverage_worst_run'], se['coverage_worst_run'], 2, sep='+-'):>16}"
                         f"{plus_minus(f['mean_ci_width'], se['mean_ci_width'], 3, sep='+-'):>16}")
    return "\n".join(lines)


