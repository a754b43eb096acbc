"""The assessor-sheet workflow of ``metaeval assess``: export a sweep cell's judge-created nuggets, or a dataset's
(answer, nugget) pairs, as sheets for assessors to edit and label, and import the edited sheets back as a nugget set
(nuggetizer format) or a label set (NIST assignment format).  The sheets themselves are :mod:`metaeval.assess`'s.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exported:
    """An exported sheet: ``rows`` written (nuggets, or (answer, nugget) pairs) for ``topics`` topics (None where
    not counted)."""

    rows: int
    topics: int | None = None


def export_cell_nuggets(results: str, cell: str, out: str) -> Exported:
    """The nuggets the judge of grid cell ``cell`` created (up to 30 per topic, no importance) in the sweep's results
    folder ``results``, as an editable sheet at ``out``; an unknown cell is one
    :class:`~metaeval.errors.ConfigError` line listing the cells."""
    from metaeval.assess import created_nuggets_from_results, export_nuggets
    from metaeval.errors import ConfigError
    from metaeval.layout import ResultsLayout
    from metaeval.study.records import read_summary

    lay = ResultsLayout.open(results)
    summary = read_summary(lay)
    c = summary.cell(cell)
    if c is None:
        raise ConfigError(f"no cell {cell!r} in {lay.root}; cells: {', '.join(x.cell for x in summary.cells)}")
    created, topics = created_nuggets_from_results(results, c.cell, c.judge_id, c.prompt_id, bool(c.skipped))
    return Exported(export_nuggets(created, topics, out), len(created))


def import_nugget_sheet(sheet: str, out: str) -> dict:
    """An edited nugget sheet as a human nugget set at ``out`` (counts and problems:
    :func:`metaeval.assess.import_nuggets`)."""
    from metaeval.assess import import_nuggets

    return import_nuggets(sheet, out)


def export_assignment_sheet(dataset: str, out: str, nuggets: str | None = None) -> Exported:
    """One row per (answer, nugget) of ``dataset`` with an empty label column, at ``out``; the nuggets of the file
    ``nuggets`` or else the dataset's human nuggets (a dataset without them is one
    :class:`~metaeval.errors.ConfigError` line)."""
    from metaeval.assess import export_assignments
    from metaeval.data.dataset import load_dataset
    from metaeval.errors import ConfigError

    ds = load_dataset(dataset)
    if nuggets:
        from metaeval.io.nuggets import read_nuggets

        table = read_nuggets(nuggets)
    elif ds.nuggets is not None:
        table = ds.nuggets
    else:
        raise ConfigError(f"dataset {ds.name!r} has no nuggets; pass --nuggets")
    return Exported(export_assignments(table, ds.answers, out))


def import_assignment_sheet(sheet: str, out: str) -> dict:
    """A filled assignment sheet as a label set at ``out`` (counts and problems:
    :func:`metaeval.assess.import_assignments`)."""
    from metaeval.assess import import_assignments

    return import_assignments(sheet, out)
