"""``metaeval plan``: how many human-labelled topics a calibrated leaderboard needs, which to label next, hours.

From a pilot (human and judge labels on some topics, judge labels on all): precision of the PPI-calibrated
leaderboard vs the number of human-labelled topics (analytic and topic resampling), the unlabelled topics in the
order to send to assessors, a replay check of that order, assessor hours, and - with k judge samples - the judge's
self-consistency.

    metaeval plan --reference HUMAN.jl --judge JUDGE.jl [--judge JUDGE_SAMPLE2.jl ...] --out DIR
    metaeval plan --reference HUMAN.jl --simulate-judge paper-fig6-edits [--samples 5] --out DIR
    metaeval plan --reference HUMAN.jl --judge JUDGE.jl --metrics V_strict A_strict --out DIR

Everything is computed by :func:`metaeval.study.assessor_plan.plan_study`, run by :mod:`metaeval.workflow.plan`
(which reads the labels and writes ``plan.json``, ``plan.md`` and ``plan_curves.svg`` to ``--out`` and/or a sweep's
``RESULTS_DIR/study/`` (``--results``), where ``metaeval report`` finds the plan); this command prints.  The
terminal summary fits 100 columns; it ends with the recommendation.
"""

from __future__ import annotations

import argparse

from metaeval.commands.helptext import command_parser


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "plan", __doc__,
                       help="plan the assessors: labelled topics needed for a target precision, which topics next, hours")
    p.add_argument("--reference", required=True, help="human assignment labels on the pilot topics (NIST format)")
    p.add_argument("--after", metavar="PLAN_JSON", help="instead of planning: the calibrated leaderboard after assessors "
                   "labelled topics in this plan's order (--reference = pilot + new labels, --judge = all topics)")
    p.add_argument("--judge", action="append", help="judge assignment labels on all topics; repeat for k samples of one judge")
    p.add_argument("--simulate-judge", metavar="CONFUSION", help="instead of --judge: a simulated judge drawn from the "
                   "reference through a confusion (paper-fig6-edits, paper-fig6-manual, or a JSON file)")
    p.add_argument("--samples", type=int, default=1, help="with --simulate-judge: k samples per label (default 1)")
    p.add_argument("--alpha", type=float, default=2.0, help="with --samples > 1: Dirichlet concentration of the simulated "
                   "sampling judge (small = self-consistent; default 2)")
    p.add_argument("--pilot", type=int, help="use only this many (random) reference topics as the pilot, the rest as "
                   "judge-only topics (to try the plan on a fully labelled set)")
    p.add_argument("--metrics", nargs="+", action="extend", type=str.lower, metavar="M",
                   help="metrics, any case (the first is the primary; default V_strict A_strict); the name of "
                        "analyze, calibrate and compare --metrics")
    p.add_argument("--metric", action="append", type=str.lower, metavar="M",
                   help="deprecated spelling of --metrics (repeat; still works, with a warning)")
    p.add_argument("--target", type=float, default=0.02, help="half-width target for run means (default 0.02)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--total-topics", type=int, help="topics in the track the judge will score (default: the judge's topics)")
    p.add_argument("--reps", type=int, default=400, help="topic-resampling worlds per curve (default 400)")
    p.add_argument("--strategy", choices=["auto", "random", "confusion", "votes", "runs"], default="auto",
                   help="active-selection size measure (auto: confusion when nuggets pair by text, else runs)")
    p.add_argument("--replay-reps", type=int, default=100, help="replays of the labelling loop (0 = skip; default 100)")
    p.add_argument("--replay-pilot", type=int, default=5, help="pilot topics in each replay (default 5)")
    p.add_argument("--seconds-per-label", type=float, help="assessor seconds per (nugget, answer) label (default 15, an assumption)")
    p.add_argument("--nugget-hours", default="0", help="assessor hours per topic for nuggets: a number or none/edit/manual (1 / 2.5 h, paper)")
    p.add_argument("--seed", type=int, default=0, help="planning seed: the --pilot topics, the resampled tracks and "
                   "the replay (random_streams planning.*), and a --simulate-judge's labels (default 0)")
    p.add_argument("--plot", choices=["svg", "png"], default="svg", help="plot format (png at 200 dpi)")
    p.add_argument("--out", help="output folder (default: RESULTS_DIR/study with --results)")
    p.add_argument("--results", metavar="RESULTS_DIR", help="a sweep's results folder: also write plan.json and the plot to "
                   "its study/ folder, where `metaeval report` renders the plan section")
    p.set_defaults(func=run)


def chosen_metrics(args: argparse.Namespace) -> list[str]:
    """The metrics of ``--metrics`` and the deprecated ``--metric`` (which still works, with one warning line on
    stderr), in the order given; [] when neither was given."""
    if args.metric:
        import sys

        print(f"warning: plan --metric is deprecated; use --metrics {' '.join(args.metric)} (the name analyze, "
              "calibrate and compare use)", file=sys.stderr)
    return [*(args.metrics or []), *(args.metric or [])]


def run(args: argparse.Namespace) -> int:
    from metaeval.errors import ConfigError
    from metaeval.measures import canonical_metrics

    chosen = chosen_metrics(args)
    option = "--metrics" if args.metrics else "--metric"
    metrics = canonical_metrics(chosen or ["v_strict", "a_strict"], option)  # unknown: the nearest name
    if not 0 < args.level < 1 or args.target <= 0:
        raise ConfigError("--level must be in (0, 1) and --target positive")
    nh = args.nugget_hours
    try:
        nh = float(nh)
    except ValueError:
        pass
    settings = {"metric": metrics[0], "metrics": metrics, "target_half_width": args.target, "level": args.level,
                "total_topics": args.total_topics, "reps": args.reps, "strategy": args.strategy,
                "replay_reps": args.replay_reps, "replay_pilot": args.replay_pilot, "nugget_hours_per_topic": nh}
    if args.seconds_per_label is not None:
        settings["seconds_per_label"] = args.seconds_per_label
    if args.out:
        from metaeval.io.outputs import check_output

        check_output(args.out, kind="dir")  # before any work: '' / a file / /proc / read-only / too long are one line
    if args.after:
        return _after(args, (chosen or [None])[0])
    if not args.out and not args.results:
        raise ConfigError("plan needs --out DIR and/or --results RESULTS_DIR")
    from metaeval.workflow.plan import plan

    done = plan(args.reference, settings, seed=args.seed, out=args.out, results=args.results, plot_format=args.plot,
                judges=args.judge, simulate_judge=args.simulate_judge, samples=args.samples, alpha=args.alpha,
                pilot=args.pilot)
    _print(done.plan, done.folders, args.plot)
    return 0


WIDTH = 100  # every line ``metaeval plan`` prints fits this many columns

# terminal column -> the column of ``report.plan_section.curve_table`` (plan.md's table) it shows (a regex on its header)
TERMINAL_COLUMNS = [("topics", r"labelled topics$"), ("hours", r"assessor hours$"),
                    ("+/- (predicted)", r"half-width analytic$"), ("interval holds", r"plug-in coverage$"),
                    ("tau", r"tau \(mean\)$"), ("tau range", r"tau \S+ range$"), ("runs swapped", r"swap rate, gap >= ")]


def _wrap(text: str, indent: str = "", first: str = "") -> list[str]:
    """``text`` wrapped at :data:`WIDTH` columns: ``first`` before the first line, ``indent`` before the others;
    words (topic ids, paths) are never split, so only a single word wider than the terminal can exceed it."""
    import textwrap

    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [first.rstrip()]


def _assumptions(plan: dict) -> list[str]:
    """What the plan rests on, in words: metric, confidence level, pilot, track size, assessor time."""
    p, b = plan["pilot"], plan["budget"]
    secs = (f"{b['seconds_per_label']:g} s per label, the default (an assumption, not a measurement; set yours with "
            "--seconds-per-label)" if b["seconds_source"] != "user setting" else
            f"{b['seconds_per_label']:g} s per label (--seconds-per-label)")
    lines = [f"metric: {plan['metric_name']} run means; confidence level {plan['level']:.0%}; target +/- "
             f"{plan['target_half_width']:g}",
             f"pilot: {p['runs']} runs on {p['topics']} topics labelled by humans ({plan['reference']}) and by the "
             f"judge ({plan['judge']})",
             f"track: {p['total_topics']} topics to score (--total-topics; the judge's labels cover {p['judge_topics']})",
             f"assessor time: {secs}; {p['labels_per_topic']:.0f} labels per topic; "
             f"{b['nugget_hours_per_topic']:g} h of nugget writing per topic (--nugget-hours)"]
    out = ["The plan assumes:"]
    for line in lines:
        out += _wrap(line, indent="    ", first="  - ")
    return out


def _table(plan: dict) -> tuple[list[str], str]:
    """The precision table in plain words (the planner's columns of plan.md's table, same numbers) and the swap
    gap its last column uses."""
    import re

    from metaeval.report.plan_section import curve_table

    head, rows = curve_table(plan)
    pick = [next(i for i, h in enumerate(head) if re.match(pat, h)) for _, pat in TERMINAL_COLUMNS]
    gap = re.search(r"gap >= (\S+)", head[pick[-1]]).group(1)
    cells = [[r[i] for i in pick] for r in rows]
    for c in cells:
        c[-1] = c[-1].split(" / ")[0]  # the resampled swap rate; the analytic one stays in plan.md
    names = [name for name, _ in TERMINAL_COLUMNS]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(names)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(names, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(c, widths)) for c in cells]
    return lines, gap


def _print(plan: dict, outs: list[str], plot_format: str = "svg") -> None:
    """The terminal summary: assumptions, the precision table with its legend, the next topics, where the files
    are, and last the recommendation; every line at most :data:`WIDTH` columns.  The implementation check
    (analytic vs resampled widths, the plug-in interval) is in plan.md; one line here says whether it passed."""
    import os

    lines = _assumptions(plan) + [""]
    table, gap = _table(plan)
    reps = plan["curves"][plan["metric"]]["reps"]
    lines += _wrap(f"How precise the calibrated leaderboard gets as assessors label more topics "
                   f"({plan['metric_name']}):") + table
    lines += _wrap(f"hours: assessor hours for that many topics. +/- (predicted): half-width of the "
                   f"{plan['level']:.0%} interval around a run's calibrated score, against the human score on the same "
                   f"{plan['pilot']['total_topics']} topics (median run). The other columns come from {reps} tracks simulated by "
                   f"resampling the pilot topics: interval holds = how often the interval computed from the labelled "
                   f"topics contains the human score (median run); tau = agreement of the calibrated and the human run ranking "
                   f"(Kendall's tau, mean and {plan['level']:.0%} range); runs swapped = share of run pairs at least "
                   f"{gap} apart (human scores) that the calibrated scores put in the wrong order.", indent="  ",
                   first="  ")
    ok = plan["agreement"].get("within_10pct")
    check = ("no table row to check" if ok is None else "passed: the predicted +/- is within 10% of the simulated one"
             if ok else "NOT passed: the predicted +/- is more than 10% away from the simulated one (more --reps may settle it)")
    lines += _wrap(f"Self-check of the computation {check}; details in plan.md.")
    nt = plan["next_topics"]
    if nt["list"]:
        lines += _wrap(", ".join(r["qid"] for r in nt["list"][:10]) + (" ..." if len(nt["list"]) > 10 else ""),
                       indent="  ", first="Label next, in this order: ")
    else:
        lines += _wrap(f"Next topics: {nt['note']}")
    for line in (plan.get("replay") or {}).get("lines", []):
        lines += _wrap(line, indent="  ", first="replay: ")
    if plan.get("consistency"):
        lines += _wrap(plan["consistency"]["line"], indent="  ")
    lines += _wrap("; ".join(f"{os.path.join(o, 'plan.json')}, plan.md, plan_curves.{plot_format}" for o in outs),
                   indent="  ", first="wrote ")
    sep = (plan.get("need") or {}).get(plan.get("metric"), {}).get("separate_line")
    if sep:
        lines += _wrap(sep, indent="  ")
    lines += [""] + _wrap(plan["recommendation"])
    print("\n".join(lines))


def _after(args: argparse.Namespace, metric: str | None) -> int:
    from metaeval.errors import ConfigError

    if not args.judge or len(args.judge) != 1:
        raise ConfigError("plan --after needs exactly one --judge FILE (the judge's labels on all topics)")
    from metaeval.workflow.plan import after_plan, write_after_plan

    res = after_plan(args.after, args.reference, args.judge[0], metric)
    print("\n".join(_wrap(f"{res['metric']}: {res['pilot_topics']} pilot + {res['new_topics']} new human-labelled topics; "
                         f"{res['note']}", indent="  ")))
    for i, r in enumerate(res["rows"][:20], start=1):
        print(f"{i:3d}  {r['run_id']:<40s} calibrated {r['calibrated']:.4f}  judge {r['judge']:.4f}")
    if args.out:
        write_after_plan(res, args.out)
    return 0
