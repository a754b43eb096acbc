"""``metaeval compare``: which judge, prompt or strategy agrees better with the reference, pair by pair.

Inputs: two or more cell folders (``results/NAME/cells/CELL``), sweep folders (``results/NAME``: every cell with
figures) or label files.  Every pair (or ``--pairs neighbours``: same judge, another prompt or strategy) is compared
on the run-level, per-topic and pooled Kendall tau of each metric and on the label agreement (Cohen's kappa,
weighted kappa, exact agreement): the difference A - B with its paired topic-bootstrap 95% interval (the same
resampled topics for every candidate) and a Holm-adjusted p-value over the pairs; cells whose studies calibrated
also get the difference of their held-out errors.  Prints one plain-language line per pair and the table; ``--out
DIR`` writes compare.json, compare.csv, compare.html, compare.md and compare.tex.

    metaeval compare results/prompts/cells/testserver__v1__human_auto results/prompts/cells/testserver__v2_json__human_auto
    metaeval compare results/demo --pairs neighbours --metrics V_strict A_strict --out results/demo/compare
    metaeval compare judge_a.jsonl judge_b.jsonl --reference nugget_assignment.20241108.jl

The reference of sweep cells is their sweep's dataset's human labels (``--reference FILE`` for label files).
"""

from __future__ import annotations

import argparse

from metaeval.commands.helptext import command_parser


#: terminal wrapping never cuts a word, a path, a signed number or a hyphenated term ("run-level", "-0.25")
KEEP_WHOLE = {"break_long_words": False, "break_on_hyphens": False}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "compare", __doc__,
                       help="which judge, prompt or strategy agrees better with the reference: paired differences")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="cell folders, sweep folders or label files (two or more candidates)")
    p.add_argument("--reference", metavar="FILE", help="reference (human) labels; default: the sweep's dataset")
    p.add_argument("--pairs", choices=["all", "neighbours"], default="all",
                   help="all (default): every two candidates; neighbours: same judge, another prompt or strategy")
    p.add_argument("--metrics", nargs="+", action="extend", type=str.lower, metavar="M",
                   help="metrics, any case (the first is the one the lines and the table speak of; default all six); "
                        "the name of analyze, calibrate and plan --metrics and metaeval.compare(metrics=)")
    p.add_argument("--metric", action="append", type=str.lower, metavar="M",
                   help="deprecated spelling of --metrics (repeat; still works, with a warning)")
    p.add_argument("--bootstrap", type=int, default=1000, help="topic-bootstrap replicates (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="analysis seed: the topic resamples (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise level of the Holm adjustment (default 0.05)")
    p.add_argument("--tau", default="b", choices=["b", "a", "ap", "ap_sym", "ap_b"], help="tau variant (default b)")
    p.add_argument("--out", help="folder for compare.json/.csv/.html/.md/.tex")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from metaeval.errors import ConfigError
    from metaeval.measures import METRICS, normalize_metric

    if args.bootstrap < 1:
        raise ConfigError(f"--bootstrap {args.bootstrap}: the comparison needs topic-bootstrap replicates (>= 1)")
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha {args.alpha}: must be between 0 and 1")
    if args.metric:  # the spelling before --metrics: still works, says so once on stderr
        import sys

        print(f"warning: compare --metric is deprecated; use --metrics {' '.join(args.metric)} (the name analyze, "
              "calibrate and plan use)", file=sys.stderr)
    chosen = [*(args.metrics or []), *(args.metric or [])]
    metrics = None
    if chosen:
        metrics = [normalize_metric(m) for m in chosen]
        bad = [m for m in metrics if m not in METRICS]
        if bad:
            option = "--metrics" if args.metrics else "--metric"
            raise ConfigError(f"{option} {', '.join(bad)}: expected one of {', '.join(METRICS)}")
    if args.out:
        from metaeval.io.outputs import check_output

        check_output(args.out, kind="dir")
    from metaeval.workflow.compare import compare, write_comparison

    table, doc = compare(args.inputs, args.reference, metrics=metrics, pairs=args.pairs, n_boot=args.bootstrap,
                         seed=args.seed, alpha=args.alpha, variant=args.tau)
    print(format_comparison(doc))
    if args.out:
        for path in write_comparison(doc, table, args.out):
            print(f"wrote {path}")
    return 0


def format_comparison(doc: dict) -> str:
    """The terminal view: what was compared, one line per pair, then the table on the first metric."""
    import shutil
    import textwrap

    from metaeval.report.compare_section import _table, rows_for
    from metaeval.report.model import Table
    from metaeval.report.render_text import text_table

    width = min(120, shutil.get_terminal_size((120, 24)).columns)
    metric = doc["metric"]
    out = [textwrap.fill(f"Compared {len(doc['candidates'])} candidates against {doc['reference']}: "
                         f"{doc['pairs']}; tau-{doc['variant']}, {doc['n_boot']} paired topic resamples (seed "
                         f"{doc['seed']}), Holm-adjusted at alpha {doc['alpha']:g}.", width, **KEEP_WHOLE), ""]
    out += pair_lines(doc, width)
    out += ["", textwrap.fill(f"The tables: paired differences A - B on {metric} (Kendall tau at three levels, "
                              "calibrated error) and on the support labels (agreement); each 95% interval is per "
                              "comparison (not adjusted for multiplicity), the p-values are Holm-adjusted over the "
                              "pairs.", width, **KEEP_WHOLE)]
    rows = rows_for(doc, metric)
    for a, b in dict.fromkeys((r["candidate_a"], r["candidate_b"]) for r in rows):
        t = _table([r for r in rows if (r["candidate_a"], r["candidate_b"]) == (a, b)], "")
        t = Table(t.columns[2:], [r[2:-1] + [{a: "A", b: "B"}.get(r[-1], r[-1])] for r in t.rows], "", t.numeric[2:])
        out += ["", f"A = {a}", f"B = {b}", text_table(t, width=width)]
    return "\n".join(out)


def pair_lines(doc: dict, width: int) -> list[str]:
    """The comparison's plain-language lines (one per pair, ``doc["lines"]``) as a list wrapped at ``width``,
    never cutting a word, a path or a signed number: what ``metaeval compare`` prints and the sweep's summary
    shows after its table."""
    import textwrap

    return [textwrap.fill(line, width, initial_indent="- ", subsequent_indent="  ", **KEEP_WHOLE)
            for line in doc["lines"]]


def sweep_comparison_lines(doc: dict, width: int) -> list[str]:
    """The sweep's comparison block: what was compared how (the study's natural neighbour pairs, its bootstrap and
    seed, the Holm level; where the table is), then :func:`pair_lines`."""
    import textwrap

    head = (f"Compared {doc['pairs']}, against {doc['reference']}: tau-{doc['variant']} on "
            f"{doc['metric']}, {doc['n_boot']} paired topic resamples (seed {doc['seed']}), Holm-adjusted at alpha "
            f"{doc['alpha']:g}; every statistic in analysis/compare.json and the report's comparison section:")
    return [textwrap.fill(head, width, **KEEP_WHOLE), *pair_lines(doc, width)]
