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
    from metaeval.workflow.assess import export_cell_nuggets

    done = export_cell_nuggets(args.results, args.cell, args.out)
    return f"wrote {done.rows} nuggets for {done.topics} topics to {args.out}"


def _import_nuggets(args: argparse.Namespace) -> str:
    from metaeval.workflow.assess import import_nugget_sheet

    r = import_nugget_sheet(args.sheet, args.out)
    return f"wrote {r['nuggets']} nuggets for {r['topics']} topics to {args.out}" + _kept(r, "unknown importance values")


def _export_assignments(args: argparse.Namespace) -> str:
    from metaeval.workflow.assess import export_assignment_sheet

    done = export_assignment_sheet(args.dataset, args.out, nuggets=args.nuggets)
    return f"wrote {done.rows} (answer, nugget) rows to {args.out}"


def _import_assignments(args: argparse.Namespace) -> str:
    from metaeval.workflow.assess import import_assignment_sheet

    r = import_assignment_sheet(args.sheet, args.out)
    return f"wrote {r['labels']} labels for {r['answers']} answers to {args.out}" + _kept(r, "empty or unknown labels")


def _kept(result: dict, what: str) -> str:
    """`` (N <what> kept as FAILED)`` when the import met problems, else ''."""
    return f" ({len(result['problems'])} {what} kept as FAILED)" if result["problems"] else ""


_ACTIONS = {"export-nuggets": _export_nuggets, "import-nuggets": _import_nuggets,
            "export-assignments": _export_assignments, "import-assignments": _import_assignments}
