"""``metaeval sweep [-m] [overrides]``: compose the Hydra config, resolve and check every judge, run the grid
(pipeline: label sets), then the study (every figure) and the report.

Compose the config (metaeval/conf, overlaid by ./conf and --config-dir) with Hydra overrides (e.g. grid=single
judge=gpt-4o dataset=trec-rag-2024 dataset.source=PATH runtime=serial) and run the sweep. With no overrides: the
offline demo grid. -m judge=a,b strategy=x,y sweeps the product as one grid.
"""

# This module parses and prints; the workflow (metaeval.workflow: compose with Hydra, drive the sweep, report) does
# the work, for the command line and the Python API alike.

from __future__ import annotations

import argparse
import sys

from metaeval.commands.helptext import command_parser


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "sweep", __doc__,
                       help="run a grid of judges x prompts x strategies on a dataset, then score, analyse and calibrate (the main job)")
    p.add_argument("--config-dir", action="append", metavar="DIR",
                   help="a config folder overlaying the package's (and ./conf); repeatable")
    p.add_argument("--dry-run", action="store_true", help="print calls, tokens and estimated cost per cell; send nothing")
    p.add_argument("--cfg", nargs="?", const="job", metavar="{job,all}",
                   help="print the composed configuration (YAML) and exit (job: the job config; all: with the "
                   "resolved judges of the grid)")
    p.add_argument("--info", action="store_true", help="print the config search path and each group's options; exit")
    p.add_argument("-m", "--multirun", action="store_true",
                   help="Hydra sweep syntax: judge=a,b prompt=... strategy=x,y become one grid sweep over their product")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--offline", action="store_true",
                   help="replay from the response cache only: a job whose reply is not cached fails instead of "
                   "calling the model (same as sweep.offline=true)")
    p.set_defaults(func=run, accepts_overrides=True)
    p.epilog = ("exit status: 0 done; 2 bad input or settings (one line); 3 stopped by sweep.budget_usd; "
                "4 a cell's FAILED labels exceed sweep.max_failed_rate (everything stored; a rerun retries the failed "
                "jobs); 5 a requested figure is missing (a judged cell without the primary metric's taus, or the "
                "report failed; everything stored); 130 interrupted; 143 terminated (SIGTERM)")


def run(args: argparse.Namespace) -> int:
    from metaeval.workflow.compose import multirun_overrides
    from metaeval.workflow.sweep import public_config
    from metaeval.errors import ConfigError

    overrides = list(args.overrides or [])
    if args.cfg not in (None, "job", "all"):  # `--cfg key=value ...`: argparse took the first override as its value
        if "=" not in args.cfg:
            raise ConfigError(f"--cfg {args.cfg}: expected job or all")
        overrides.insert(0, args.cfg)
        args.cfg = "job"
    bad = [o for o in overrides if o.startswith("-")]
    if bad:
        raise ConfigError(f"unknown option {bad[0]} (overrides are key=value)")
    hyd = [o for o in overrides if o.split("=", 1)[0].lstrip("+~").startswith("hydra.")]
    if hyd:
        raise ConfigError(f"{hyd[0]}: Hydra's own settings do not apply (metaeval composes with Hydra's compose API "
                          "and writes only to results_dir/name); use results_dir=DIR and name=NAME")
    if args.info:
        print(info_text(args.config_dir))
        return 0
    if args.multirun:
        overrides = multirun_overrides(overrides)
    if args.dry_run:
        overrides.append("sweep.dry_run=true")
    if args.offline:
        overrides.append("sweep.offline=true")
    settings, cells = _composed(overrides, args)
    if args.cfg:
        import yaml

        print(yaml.safe_dump(public_config(settings.document, with_judges=args.cfg == "all"), sort_keys=False), end="")
        return 0
    drawing_server = False
    if getattr(args, "command_process", False) and not args.dry_run and settings.report_enabled:
        from metaeval.report.plots import start_drawing_server

        # matplotlib's import for the report's figures, once, in a process of its own, while this one judges (a
        # core is idle then): about 0.3 s less at the report (docs/benchmarks.md, session 16).  Started after the
        # composition, whose two processes have the two cores (session 19).  Only as the `metaeval` command: the
        # server's workers import the main module, which another program's may not allow
        drawing_server = start_drawing_server()
    from metaeval.workflow.progress import stage_progress  # a bar on a terminal, one line per stage otherwise
    from metaeval.workflow.sweep import drive_sweep

    progress = None if (args.no_progress or not settings.sweep.progress) else stage_progress
    run = drive_sweep(settings, cells, overrides, progress, drawing_server=drawing_server)
    if args.multirun:  # say what -m made of the overrides (a single value is an axis of one)
        print(f"-m: one grid of {len(cells)} cell(s): {', '.join(c.id for c in cells)}")
    if run.summary is None:
        print(dry_run_table({"cells": run.dry_run_cells}))
        for note in settings.document.get("_grid_notes") or ():  # judges left out of the grid, once each
            print(f"grid: {note}")
        return 0
    from metaeval.report.render_text import fit_table, terminal_width
    from metaeval.study.summary import summary_markdown

    summary = run.summary
    width = terminal_width()  # summary.md keeps the Markdown table; the terminal gets it aligned to its width
    text = summary_markdown(summary, table=lambda head, rows, numeric: fit_table(head, rows, numeric, width))
    print("\n".join(_fold(line, width) for line in text.splitlines()))
    if run.comparison:  # after the table, before the verdict: the study's neighbour pairs in plain language
        from metaeval.commands.compare import sweep_comparison_lines

        print("\n" + "\n".join(sweep_comparison_lines(run.comparison, width)))
    out = f"{settings.pipeline.results_dir}/{settings.name}"
    print(f"wrote {out}/summary.json, {out}/summary.md, {out}/analysis/, {out}/cells/")
    if summary.stopped:
        print(f"stopped early: {summary.stopped}")
    for line in run.closing:  # last: the verdict and where report.html is
        print(line)
    if summary.stopped:
        return 3
    from metaeval.workflow.exit_status import EXIT_FAILED_RATE

    problems = run.failed
    for line in problems:  # everything is stored; the run still must not look like a success
        print(f"metaeval sweep: {line}", file=sys.stderr)
    for line in run.missing:  # figures asked for and not produced: not a success either
        print(f"metaeval sweep: missing figures: {line}", file=sys.stderr)
    return EXIT_FAILED_RATE if problems else EXIT_MISSING_FIGURES if run.missing else 0


#: what a sweep imports right after composing (the dataset's reading, the pipeline), imported while it composes
AFTER_COMPOSE = ("numpy", "pandas", "metaeval.pipeline.sweep", "metaeval.data.dataset", "metaeval.io.assignments")


def _composed(overrides: list[str], args: argparse.Namespace):
    """``compose_sweep``'s ``(settings, cells)``.  As the ``metaeval`` command, the composition (Hydra: 0.4 s of
    CPU) runs in a forked child while this process imports :data:`AFTER_COMPOSE` (0.4 s), on two cores at once
    (``metaeval.forked.call_in_fork``: the same result and the same errors as the plain call)."""
    from metaeval.workflow.compose import compose_sweep

    def compose():
        return compose_sweep(overrides, config_dir=args.config_dir)

    if not getattr(args, "command_process", False):
        return compose()
    from metaeval.forked import call_in_fork, preload

    return call_in_fork(compose, meanwhile=lambda: preload(AFTER_COMPOSE))


#: exit status of a sweep that stored everything but lacks figures it was asked for (see ``SweepRun.missing``)
EXIT_MISSING_FIGURES = 5


def _fold(line: str, width: int) -> str:
    """A prose line of the summary wrapped at ``width`` (table lines already fit; list items keep their indent)."""
    if len(line) <= width:
        return line
    import textwrap

    lead = len(line) - len(line.lstrip())
    indent = " " * (lead + (2 if line.lstrip().startswith("- ") else 0))
    return textwrap.fill(line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def info_text(config_dir=None) -> str:
    """The config search path (first wins) and the options of each group."""
    from metaeval.workflow.config_info import config_info

    info = config_info(config_dir)
    lines = ["config search path (first match wins):", *[f"  {d}" for d in info.search_path], "groups:"]
    lines += [f"  {g}: {', '.join(opts)}" for g, opts in info.groups.items()]
    return "\n".join(lines)


def dry_run_table(summary) -> str:
    """Estimated judge calls per cell and stage, tokens and USD.  ``<=`` marks an upper bound: the nugget lists a
    judge creates are not known before it runs, so importance and assignment are counted at the caps
    (``sweep.max_nuggets`` per topic, ``sweep.keep_top`` per answer), and with ``sweep.relevance=judge`` creation is
    counted over every candidate document."""
    lines = [f"{'cell':<40} {'calls':>8} {'in tokens':>10} {'out tokens':>10} {'est. USD':>9}  calls per stage"]
    total, bounded = 0.0, False
    for c in summary["cells"]:
        if c.get("skipped"):
            lines.append(f"{c['cell']:<40} skipped: {c['skipped']}")
            continue
        st = c["stats"]
        total += st["est_cost_usd"]
        mark = "<=" if st.get("est_bound") else ""
        bounded = bounded or bool(mark)
        stages = ", ".join(f"{k} {v}" for k, v in (st.get("est_stage_calls") or {}).items())
        lines.append(f"{c['cell']:<40} {mark + str(st['est_calls']):>8} {st['est_input_tokens']:>10} "
                     f"{st['est_output_tokens']:>10} {st['est_cost_usd']:>9.4f}  {stages}")
    lines.append(f"{'total':<40} {'':>8} {'':>10} {'':>10} {total:>9.4f}")
    lines.append("dry run: nothing was sent. Calls = ceil(items / batch) per job (re-asks come on top); tokens ~4 "
                 "characters each; jobs already stored are not counted."
                 + (" <= : an upper bound (nuggets the judge creates are counted at the caps sweep.max_nuggets / "
                    "sweep.keep_top)." if bounded else ""))
    return "\n".join(lines)
