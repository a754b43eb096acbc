"""``metaeval sweep [-m] [overrides]``: compose the Hydra config, resolve and check every judge, run the grid
(pipeline: label sets), then the study (every figure) and the report.

Hydra lives here, at the edge (``metaeval.commands.compose``): the core receives plain dicts and typed specs.
"""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a grid of judges x prompts x strategies on a dataset, then score, analyse and calibrate (the main job)",
        description="Compose the config (metaeval/conf, overlaid by ./conf and --config-dir) with Hydra overrides "
        "(e.g. grid=single judge=gpt-4o dataset=trec-rag-2024 dataset.source=PATH runtime=serial) and run the sweep. "
        "With no overrides: the offline demo grid. -m judge=a,b strategy=x,y sweeps the product as one grid.",
    )
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
                "jobs); 130 interrupted; 143 terminated (SIGTERM)")


def run(args: argparse.Namespace) -> int:
    from metaeval.commands.compose import compose_sweep, multirun_overrides
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
    config, cells = compose_sweep(overrides, config_dir=args.config_dir)
    if args.cfg:
        import yaml

        print(yaml.safe_dump(public_config(config, with_judges=args.cfg == "all"), sort_keys=False), end="")
        return 0
    dry = bool(config["sweep"].get("dry_run"))
    if config["sweep"].get("offline"):  # read by every ChatClient (local Ray actors inherit it); not a job identity
        import os

        os.environ["METAEVAL_OFFLINE"] = "1"
    prepare_run(config, cells, overrides, dry_run=dry)  # every check before anything is written
    from metaeval.commands.progress import stage_progress  # a bar on a terminal, one line per stage otherwise

    progress = None if (args.no_progress or not config["sweep"].get("progress", True)) else stage_progress
    import time

    from metaeval.pipeline.sweep import run_sweep

    t0 = time.perf_counter()
    outcome = run_sweep(config, cells, progress, hold_lock=True)  # pipeline: label sets (folder lock held)
    if outcome.dry_run:
        print(dry_run_table({"cells": outcome.cells}))
        return 0
    from metaeval.commands.report import report_after_study
    from metaeval.study import study_sweep
    from metaeval.study.summary import summary_markdown

    try:
        summary = study_sweep(outcome, t0)  # study: every figure, summary.json / summary.md
        closing = report_after_study(outcome.layout, config, summary)  # report: renders what the study wrote
    finally:
        outcome.release()  # the folder lock: held until the study and the report are written
    print(summary_markdown(summary))
    out = f"{config['results_dir']}/{config['name']}"
    print(f"wrote {out}/summary.json, {out}/summary.md, {out}/analysis/, {out}/cells/")
    if summary.get("stopped"):
        print(f"stopped early: {summary['stopped']}")
    for line in closing:  # last: the verdict and where report.html is
        print(line)
    if summary.get("stopped"):
        return 3
    import sys

    from metaeval.pipeline.health import EXIT_FAILED_RATE, failed_rate_problems

    problems = failed_rate_problems(summary.get("cells", []), float(config["sweep"].get("max_failed_rate", 0.5)))
    for line in problems:  # everything is stored; the run still must not look like a success
        print(f"metaeval sweep: {line}", file=sys.stderr)
    return EXIT_FAILED_RATE if problems else 0


def public_config(config: dict, with_judges: bool = False) -> dict:
    """The composed config as saved and printed: no private keys, no in-memory objects."""
    out = {k: v for k, v in config.items() if not k.startswith("_") and (with_judges or k != "judges")}
    return out


def prepare_run(config: dict, cells: list, overrides: list[str], *, dry_run: bool) -> None:
    """The driver's checks, in order, before any job runs: results folder name and cell ids (slugs inside
    results_dir), every judge (unknown stage, missing extra, API-key variable unless a dry run), the folder's
    dataset/grid fingerprint.  Only then (not for a dry run) are the overrides and the composed config saved."""
    from pathlib import Path

    import yaml

    from metaeval.layout import results_layout
    from metaeval.pipeline.grid import check_cells
    from metaeval.pipeline.specs import content_hash

    layout = results_layout(config)
    for c in cells:
        layout.cell_dir(c.id)
    check_cells(cells, str(config["sweep"].get("relevance", "qrels")),
                need_keys=not (dry_run or config["sweep"].get("offline")),  # a replay sends nothing: no key needed
                single=bool(config.get("_single")))
    if dry_run:
        return
    ds = config.get("dataset") or {}
    def where(p):  # the same file named relatively or absolutely is the same dataset
        return str(Path(p).resolve()) if p and Path(p).exists() else p

    dataset_fp = content_hash([ds.get("name"), where(ds.get("source")), where(ds.get("nuggets"))])
    grid_fp = content_hash(sorted(c.id for c in cells))
    layout.check_fingerprint(dataset_fp, grid_fp, write=False)
    layout.ensure()
    layout.check_fingerprint(dataset_fp, grid_fp, write=True)
    layout.write_text(layout.overrides_yaml, yaml.safe_dump(list(overrides), sort_keys=False))
    layout.write_text(layout.config_yaml, yaml.safe_dump(public_config(config, with_judges=True), sort_keys=False))


def info_text(config_dir=None) -> str:
    """The config search path (first wins) and the options of each group."""
    from pathlib import Path

    from metaeval.commands.compose import overlay_dirs
    from metaeval.judges.catalog import PACKAGE_CONF

    dirs = [*overlay_dirs(config_dir), PACKAGE_CONF]
    lines = ["config search path (first match wins):", *[f"  {d}" for d in dirs], "groups:"]
    groups = sorted({p.name for d in dirs for p in Path(d).iterdir() if p.is_dir()})
    for g in groups:
        opts: dict[str, str] = {}
        for d in dirs:
            for f in sorted(Path(d, g).glob("*.yaml")):
                opts.setdefault(f.stem, str(d))
        lines.append(f"  {g}: {', '.join(opts)}")
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
