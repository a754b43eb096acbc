"""``metaeval plan``: how many human-labelled topics a calibrated leaderboard needs, which to label next, hours.

    metaeval plan --reference HUMAN.jl --judge JUDGE.jl [--judge JUDGE_SAMPLE2.jl ...] --out DIR
    metaeval plan --reference HUMAN.jl --simulate-judge paper-fig6-edits [--samples 5] --out DIR

Everything is computed by :func:`metaeval.study.plan.plan_study`; this module parses, prints and writes
``plan.json``, ``plan.md`` and ``plan_curves.svg`` to ``--out`` and/or a sweep's ``RESULTS_DIR/study/`` (``--results``),
where ``metaeval report`` finds the plan.  The last printed line is the recommendation.
"""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plan",
        help="plan the assessors: labelled topics needed for a target precision, which topics next, hours",
        description="From a pilot (human and judge labels on some topics, judge labels on all): precision of the "
        "PPI-calibrated leaderboard vs the number of human-labelled topics (analytic and topic resampling), the "
        "unlabelled topics in the order to send to assessors, a replay check of that order, assessor hours, and - with "
        "k judge samples - the judge's self-consistency.",
    )
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
    p.add_argument("--metric", action="append", type=str.lower, help="metric (repeat; first = primary; default V_strict, A_strict)")
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
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--plot", choices=["svg", "png"], default="svg", help="plot format (png at 200 dpi)")
    p.add_argument("--out", help="output folder (default: RESULTS_DIR/study with --results)")
    p.add_argument("--results", metavar="RESULTS_DIR", help="a sweep's results folder: also write plan.json and the plot to "
                   "its study/ folder, where `metaeval report` renders the plan section")
    p.set_defaults(func=run)


def _load(args: argparse.Namespace):
    import numpy as np

    from metaeval.errors import ConfigError
    from metaeval.io import load_labels

    reference = load_labels(args.reference)
    if bool(args.judge) == bool(args.simulate_judge):
        raise ConfigError("plan needs exactly one of --judge FILE (repeatable) and --simulate-judge CONFUSION")
    sampler = None
    if args.simulate_judge:
        from metaeval.planning.consistency import simulate_sampling_judge
        from metaeval.simulation import simulate_judge

        if args.samples > 1:
            judges = simulate_sampling_judge(reference, args.samples, args.simulate_judge, alpha=args.alpha, seed=args.seed,
                                             name=f"simulated:{args.simulate_judge}")
        else:
            judges = [simulate_judge(reference, args.simulate_judge, seed=args.seed, name=f"simulated:{args.simulate_judge}")]
        conf, k, alpha = args.simulate_judge, args.samples, args.alpha
        sampler = ((lambda rng: simulate_sampling_judge(reference, k, conf, alpha=alpha, seed=rng)) if k > 1
                   else (lambda rng: simulate_judge(reference, conf, seed=rng)))
    else:
        from pathlib import Path

        # a sweep cell folder is named by its cell id (its file is always labels.jsonl); a sampled cell's folder
        # (sweep.samples) gives all k draws: the judge's votes then shape the plan and its consistency section
        judges = []
        for j in args.judge:
            draws = _cell_draws(Path(j)) if Path(j).is_dir() and len(args.judge) == 1 else []
            judges += draws or [load_labels(j, name=Path(j).name if Path(j).is_dir() else None)]
    if args.pilot:
        qids = reference.qids
        if not 3 <= args.pilot <= len(qids):
            raise ConfigError(f"--pilot {args.pilot}: expected 3..{len(qids)} (reference topics)")
        pick = sorted(np.random.default_rng(args.seed).choice(qids, size=args.pilot, replace=False).tolist())
        reference = reference.subset(qids=pick, name=f"{reference.name}[pilot {args.pilot}]")
        sampler = None  # a redrawn judge would need the held-back human labels
    return reference, judges, sampler


def _cell_draws(cell_dir):
    """The k draws of a sampled sweep cell folder (``results/<name>/cells/<cell>``), or [] when it has none."""
    from metaeval.layout import ResultsLayout

    if not (cell_dir / "samples").is_dir() or cell_dir.parent.name != "cells":
        return []
    return ResultsLayout.open(cell_dir.parent.parent).read_samples(cell_dir.name)


def run(args: argparse.Namespace) -> int:
    from metaeval.errors import ConfigError
    from metaeval.scoring import METRICS, normalize_metric
    from metaeval.study.plan import plan_study

    metrics = [normalize_metric(m) for m in (args.metric or ["v_strict", "a_strict"])]
    bad = [m for m in metrics if m not in METRICS]
    if bad:
        raise ConfigError(f"--metric {bad[0]}: expected one of V_strict, A_strict, V, A, W_strict, W (any case)")
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
        return _after(args)
    if not args.out and not args.results:
        raise ConfigError("plan needs --out DIR and/or --results RESULTS_DIR")
    reference, judges, sampler = _load(args)
    plan = plan_study(reference, judges if len(judges) > 1 else judges[0], settings, seed=args.seed, judge_sampler=sampler)
    outs = []
    if args.results:
        from metaeval.layout import ResultsLayout

        outs.append(str(ResultsLayout.open(args.results).study_dir))
    if args.out:
        outs.insert(0, args.out)
    for out in outs:
        _write(plan, out, args.plot)
    _print(plan, outs)
    return 0


def _write(plan: dict, out: str, plot_format: str) -> None:
    import json
    import os

    from metaeval.io.atomic import atomic_write_text
    from metaeval.report.plan_section import render_markdown, write_plot

    os.makedirs(out, exist_ok=True)
    atomic_write_text(os.path.join(out, "plan.json"), json.dumps(plan, indent=2, allow_nan=False) + "\n")
    atomic_write_text(os.path.join(out, "plan.md"),
                      render_markdown(plan, heading=True, plot=f"plan_curves.{plot_format}") + "\n")
    write_plot(plan, os.path.join(out, f"plan_curves.{plot_format}"))


def _print(plan: dict, outs: list[str]) -> None:
    import os

    from metaeval.report.plan_section import curve_table

    head, rows = curve_table(plan)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(f"pilot: {plan['pilot']['topics']} topics x {plan['pilot']['runs']} runs ({plan['reference']} vs {plan['judge']}); "
          f"track: {plan['pilot']['total_topics']} judged topics; metric {plan['metric_name']}")
    print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    print(plan["agreement"]["line"])
    nt = plan["next_topics"]
    if nt["list"]:
        print(f"next topics ({nt['strategy']}): " + ", ".join(r["qid"] for r in nt["list"][:10])
              + (" ..." if len(nt["list"]) > 10 else ""))
    else:
        print(f"next topics: {nt['note']}")
    for line in (plan.get("replay") or {}).get("lines", []):
        print(f"replay: {line}")
    if plan.get("consistency"):
        print(plan["consistency"]["line"])
    print("wrote " + "; ".join(f"{os.path.join(o, 'plan.json')}, plan.md, plan_curves.*" for o in outs))
    print(plan["recommendation"])


def _after(args: argparse.Namespace) -> int:
    import json
    import os

    from metaeval.errors import ConfigError
    from metaeval.io import load_labels
    from metaeval.study.plan import calibrated_after_plan

    if not args.judge or len(args.judge) != 1:
        raise ConfigError("plan --after needs exactly one --judge FILE (the judge's labels on all topics)")
    try:
        with open(args.after, encoding="utf-8") as fh:
            plan = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{args.after}: cannot read the plan ({exc})") from exc
    if plan.get("schema") != "metaeval.plan/1":
        raise ConfigError(f"{args.after}: field 'schema' is {plan.get('schema')!r}, expected 'metaeval.plan/1'")
    res = calibrated_after_plan(plan, load_labels(args.reference), load_labels(args.judge[0]),
                                (args.metric or [None])[0])
    print(f"{res['metric']}: {res['pilot_topics']} pilot + {res['new_topics']} new human-labelled topics; {res['note']}")
    for i, r in enumerate(res["rows"][:20], start=1):
        print(f"{i:3d}  {r['run_id']:<40s} calibrated {r['calibrated']:.4f}  judge {r['judge']:.4f}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "calibrated_after_plan.json"), "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2)
    return 0
