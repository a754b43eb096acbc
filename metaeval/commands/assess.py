"""``metaeval assess``: assessor workflow files (export judge nuggets for editing, import them back; likewise
for manual assignment labels)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("assess", help="assessor sheets: export judge nuggets / answers for editing and labelling, import them back")
    p.set_defaults(func=run)
    s = p.add_subparsers(dest="assess_command", metavar="ACTION", required=True)
    e = s.add_parser("export-nuggets", help="judge-created nuggets per topic (up to 30, no importance) as an editable sheet")
    e.add_argument("results", help="a sweep's results folder (results/<name>)")
    e.add_argument("--cell", required=True, help="the grid cell whose judge created the nuggets (e.g. lexical__auto_auto)")
    e.add_argument("--out", required=True, help="sheet path (.csv or .jsonl)")
    i = s.add_parser("import-nuggets", help="read an edited nugget sheet back as a human nugget set (nuggetizer format)")
    i.add_argument("sheet")
    i.add_argument("--out", required=True, help="nuggets .jsonl (use it with: metaeval sweep dataset.nuggets=FILE)")
    ea = s.add_parser("export-assignments", help="one row per (answer, nugget) with an empty label column")
    ea.add_argument("--dataset", default="demo", help="dataset name or path (answers come from it)")
    ea.add_argument("--nuggets", help="nugget set (.jsonl, nuggetizer format); default: the dataset's human nuggets")
    ea.add_argument("--out", required=True, help="sheet path (.csv or .jsonl)")
    ia = s.add_parser("import-assignments", help="read a filled assignment sheet as a label set (NIST assignment format)")
    ia.add_argument("sheet")
    ia.add_argument("--out", required=True, help="labels .jsonl")


def run(args: argparse.Namespace) -> int:
    """Vet ``--out`` before anything is read or written (``metaeval.io.outputs``), run the action, print its line."""
    from metaeval.io.outputs import check_output

    check_output(args.out, kind="file")
    print(_ACTIONS[args.assess_command](args))
    return 0


def _export_nuggets(args: argparse.Namespace) -> str:
    from metaeval.assess import created_nuggets_from_results, export_nuggets
    from metaeval.errors import ConfigError
    from metaeval.layout import ResultsLayout
    from metaeval.study.records import read_summary

    lay = ResultsLayout.open(args.results)
    summary = read_summary(lay)
    c = summary.cell(args.cell)
    if c is None:
        raise ConfigError(f"no cell {args.cell!r} in {lay.root}; cells: {', '.join(x.cell for x in summary.cells)}")
    created, topics = created_nuggets_from_results(args.results, c.cell, c.judge_id, c.prompt_id, bool(c.skipped))
    n = export_nuggets(created, topics, args.out)
    return f"wrote {n} nuggets for {len(created)} topics to {args.out}"


def _import_nuggets(args: argparse.Namespace) -> str:
    from metaeval.assess import import_nuggets

    r = import_nuggets(args.sheet, args.out)
    return f"wrote {r['nuggets']} nuggets for {r['topics']} topics to {args.out}" + _kept(r, "unknown importance values")


def _export_assignments(args: argparse.Namespace) -> str:
    from metaeval.assess import export_assignments
    from metaeval.data.dataset import load_dataset
    from metaeval.errors import ConfigError

    ds = load_dataset(args.dataset)
    if args.nuggets:
        from metaeval.io.nuggets import read_nuggets

        nuggets = read_nuggets(args.nuggets)
    elif ds.nuggets is not None:
        nuggets = ds.nuggets
    else:
        raise ConfigError(f"dataset {ds.name!r} has no nuggets; pass --nuggets")
    n = export_assignments(nuggets, ds.answers, args.out)
    return f"wrote {n} (answer, nugget) rows to {args.out}"


def _import_assignments(args: argparse.Namespace) -> str:
    from metaeval.assess import import_assignments

    r = import_assignments(args.sheet, args.out)
    return f"wrote {r['labels']} labels for {r['answers']} answers to {args.out}" + _kept(r, "empty or unknown labels")


def _kept(result: dict, what: str) -> str:
    """`` (N <what> kept as FAILED)`` when the import met problems, else ''."""
    return f" ({len(result['problems'])} {what} kept as FAILED)" if result["problems"] else ""


_ACTIONS = {"export-nuggets": _export_nuggets, "import-nuggets": _import_nuggets,
            "export-assignments": _export_assignments, "import-assignments": _import_assignments}
