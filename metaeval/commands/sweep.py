"""``metaeval sweep [overrides]``: compose the Hydra config, expand the grid, run every cell, score, analyse,
calibrate, and write ``summary.json`` / ``summary.md``."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a grid of judges x prompts x strategies on a dataset, then score, analyse and calibrate (the main job)",
        description="Compose conf/config.yaml with Hydra overrides (e.g. grid=single judge=gpt-4o dataset=trec-rag-2024 "
        "dataset.source=PATH runtime=serial) and run the sweep. With no overrides: the offline demo grid.",
    )
    p.add_argument("--config-dir", help="Hydra config folder (default: the repository's conf/ or $METAEVAL_CONF)")
    p.add_argument("--dry-run", action="store_true", help="print calls, tokens and estimated cost per cell; send nothing")
    p.add_argument("--cfg", action="store_true", help="print the composed configuration and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run, accepts_overrides=True)


def run(args: argparse.Namespace) -> int:
    import json

    from metaeval.pipeline.config import compose_sweep

    overrides = list(args.overrides or [])
    if args.dry_run:
        overrides.append("sweep.dry_run=true")
    config, cells = compose_sweep(overrides, config_dir=args.config_dir)
    if args.cfg:
        import yaml

        print(yaml.safe_dump(config, sort_keys=False))
        return 0
    progress = None if (args.no_progress or not config["sweep"].get("progress", True)) else _tqdm_progress
    from metaeval.pipeline.sweep import run_sweep

    summary = run_sweep(config, cells, progress)
    from metaeval.pipeline.summary import summary_markdown

    if summary.get("dry_run"):
        print(dry_run_table(summary))
        return 0
    print(summary_markdown(summary))
    out = f"{config['results_dir']}/{config['name']}"
    print(f"wrote {out}/summary.json, {out}/summary.md, {out}/analysis/, {out}/cells/")
    if summary.get("stopped"):
        print(f"stopped early: {summary['stopped']}")
        return 3
    del json
    return 0


def dry_run_table(summary) -> str:
    lines = [f"{'cell':<40} {'calls':>7} {'in tokens':>10} {'out tokens':>10} {'est. USD':>9}"]
    total = 0.0
    for c in summary["cells"]:
        if c.get("skipped"):
            lines.append(f"{c['cell']:<40} skipped: {c['skipped']}")
            continue
        st = c["stats"]
        total += st["est_cost_usd"]
        lines.append(f"{c['cell']:<40} {st['est_calls']:>7} {st['est_input_tokens']:>10} {st['est_output_tokens']:>10} {st['est_cost_usd']:>9.4f}")
    lines.append(f"{'total':<40} {'':>7} {'':>10} {'':>10} {total:>9.4f}")
    lines.append("dry run: nothing was sent (estimates: ~4 characters per token, importance/assignment counts for "
                 "judge-created nuggets assume the caps)")
    return "\n".join(lines)


class _tqdm_progress:
    """A tqdm bar per stage (on stderr)."""

    def __init__(self, stage: str, total: int):
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc=f"{stage:<10}", unit="job", leave=True, mininterval=0.2)

    def update(self, n: int = 1, **live) -> None:
        if live:
            self.bar.set_postfix(hits=live.get("cache_hits", 0), failed=live.get("failures", 0),
                                 retries=live.get("retries", 0), cost=f"${live.get('cost_usd', 0.0):.4f}", refresh=False)
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()
