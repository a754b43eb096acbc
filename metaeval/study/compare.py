"""Cells compared with each other: the study's default pairs, the candidates ``metaeval compare`` reads, the document.

* :func:`study_comparison` - in the sweep's study: the grid's natural neighbours (same judge, another prompt or
  another strategy; :func:`metaeval.analysis.comparison.neighbour_pairs`), their tau and label-agreement
  differences from ``analyze`` and their calibrated-error differences from the cells' calibration results,
  written to ``analysis/compare.json`` (and ``analysis/paired.csv``) for the report's comparison section;
* :func:`resolve_candidates` - ``metaeval compare A B ...`` inputs: a cell folder (``cells/<cell>/`` holding
  ``labels.jsonl``; its sweep's grid row and ``calibration.json`` come with it), a sweep folder (holding
  ``summary.json``: every cell that has figures) or a label file; and the reference of sweep cells (the sweep's
  dataset's human labels, from its ``config.yaml``);
* :func:`compare_candidates` - the comparison of resolved candidates against a reference (``analyze`` with the
  pairs asked for, plus calibration rows), as the document both write (:func:`comparison_document`).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from metaeval.errors import ConfigError
from metaeval.paths import label_file_name

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.study.records import CellSummary

log = logging.getLogger(__name__)

COMPARE_FORMAT = "metaeval-compare"
COMPARE_FILE = "compare.json"
NEIGHBOURS = "the grid's natural neighbours (same judge, another prompt or another strategy)"


@dataclass
class Candidate:
    """One side of a comparison: its name, its labels (a path or a LabelSet), its grid row when it is a sweep
    cell (``judge``, ``prompt``, ``strategy``), its calibration result when the study wrote one, and the sweep
    folder it came from."""

    name: str
    labels: Any
    grid: dict[str, Any] = field(default_factory=dict)
    calibration: dict[str, Any] | None = None
    sweep: Path | None = None


def differs(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """What two grid rows differ in (``prompt v1 vs v2_json``; ``judge x vs y, strategy s vs t``), or ''."""
    parts = [f"{k} {a.get(k)} vs {b.get(k)}" for k in ("judge", "prompt", "strategy")
             if a.get(k) is not None and b.get(k) is not None and a.get(k) != b.get(k)]
    return ", ".join(parts)


def comparison_document(table: Any, candidates: Sequence[Candidate], *, metric: str, alpha: float, n_boot: int,
                        seed: int, variant: str, pairs_how: str, reference: str) -> dict[str, Any]:
    """The JSON document of a comparison (``analysis/compare.json`` of a sweep, ``compare.json`` of the command):
    the table's rows, one plain-language line per pair and what was compared how."""
    from metaeval.analysis.comparison import pair_lines
    from metaeval.io.jsonl import to_jsonable

    grid = {c.name: c.grid for c in candidates}
    pairs = list(dict.fromkeys(zip(table["candidate_a"], table["candidate_b"]))) if len(table) else []
    what = {(a, b): differs(grid.get(a, {}), grid.get(b, {})) for a, b in pairs}
    what = {k: v for k, v in what.items() if v}
    return to_jsonable({
        "format": COMPARE_FORMAT, "version": 1, "reference": reference, "metric": metric, "alpha": alpha,
        "n_boot": n_boot, "seed": seed, "variant": variant, "pairs": pairs_how,
        "candidates": [{"name": c.name, **{k: c.grid.get(k) for k in ("judge", "prompt", "strategy")}}
                       for c in candidates],
        "differs": [{"candidate_a": a, "candidate_b": b, "text": t} for (a, b), t in what.items()],
        "lines": pair_lines(table, metric, alpha, differs=what),
        "rows": table.to_dict(orient="records"),
    })


# ------------------------------------------------------------------ in the study
def study_comparison(lay: Any, inp: Any, paired: Any, calibration: Mapping[str, Any]) -> dict[str, Any] | None:
    """Add the calibrated-error rows to the study's paired table and write ``analysis/compare.json`` and
    ``analysis/paired.csv``; returns the document (None without a pair)."""
    from metaeval.analysis.comparison import calibration_rows, finish

    stale = lay.analysis_dir / COMPARE_FILE
    if paired is None or paired.empty:  # no pair (or no bootstrap): no comparison, and none of an earlier study
        stale.unlink(missing_ok=True)
        return None
    a = inp.settings.analysis
    pairs = list(dict.fromkeys(zip(paired["candidate_a"], paired["candidate_b"])))
    cal = {cid: doc for cid, doc in calibration.items() if isinstance(doc, Mapping)}
    table = finish([*paired.to_dict(orient="records"), *calibration_rows(pairs, cal, 0.05)], 0.05)
    rows = {r["cell"]: r for r in (inp.cells or [])}
    cands = [Candidate(cid, None, {k: rows.get(cid, {}).get(k) for k in ("judge", "prompt", "strategy")})
             for cid in inp.label_sets]
    from metaeval.scoring import METRICS

    metric = next((m for m in (a.metrics or METRICS) if m in METRICS), "v_strict")
    doc = comparison_document(table, cands, metric=metric, alpha=0.05, n_boot=a.bootstrap, seed=a.seed,
                              variant=a.tau, pairs_how=NEIGHBOURS, reference="the dataset's human labels")
    lay.write_json(lay.analysis_dir / COMPARE_FILE, doc)
    lay.write_table(lay.analysis_dir / "paired.csv", table)
    return doc


def study_pairs(inp: Any) -> list[tuple[str, str]]:
    """The study's default pairs: the natural neighbours among the cells with figures."""
    from metaeval.analysis.comparison import neighbour_pairs

    rows = {r["cell"]: r for r in (inp.cells or [])}
    names = list(inp.label_sets)
    return neighbour_pairs(names, [rows.get(n, {}) for n in names])


# ------------------------------------------------------------------ metaeval compare
def _summary_rows(sweep: Path) -> "dict[str, CellSummary]":
    """The sweep's cells by id (``{}`` when its summary is missing or unreadable: a cell folder still has its
    labels)."""
    from metaeval.errors import MetaevalError
    from metaeval.layout import ResultsLayout
    from metaeval.study.records import ResultsSchemaError, read_summary

    try:
        summary = read_summary(ResultsLayout.open(sweep))
    except ResultsSchemaError:  # an older results folder: say so once, rather than "no cell"
        raise
    except MetaevalError:
        return {}
    return {c.cell: c for c in summary.cells}


def resolve_candidates(paths: Sequence[str | os.PathLike], minimum: int = 2) -> list[Candidate]:
    """The inputs of ``metaeval compare`` as candidates (see the module docstring); distinct names (a repeated
    cell id from two sweeps gets ``<sweep>/<cell>``); fewer than ``minimum`` is an error."""
    import json

    out: list[Candidate] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir() and (p / "summary.json").exists() and not (p / "labels.jsonl").exists():
            rows = _summary_rows(p)
            cells = [cid for cid, r in rows.items() if r.active and (p / "cells" / cid / "labels.jsonl").exists()]
            if not cells:
                raise ConfigError(f"{p}: a sweep folder without any cell that has labels (cells/<cell>/labels.jsonl)")
            paths_here = [p / "cells" / cid for cid in cells]
        elif p.is_dir() and (p / "labels.jsonl").exists():
            paths_here = [p]
        elif p.is_file():
            out.append(Candidate(label_file_name(p), p))
            continue
        else:
            raise ConfigError(f"{p}: not a cell folder (holding labels.jsonl), a sweep folder (holding summary.json) "
                              "or a label file")
        for cell in paths_here:
            sweep = cell.parent.parent if cell.parent.name == "cells" else None
            row = _summary_rows(sweep).get(cell.name) if sweep else None
            cal = None
            if (cell / "calibration.json").exists():
                try:
                    cal = json.loads((cell / "calibration.json").read_text(encoding="utf-8"))
                except ValueError as exc:
                    log.warning("%s: unreadable (%s); no calibrated-error comparison for this cell",
                                cell / "calibration.json", exc)
            desc = {k: getattr(row, k) if row is not None else None for k in ("judge", "prompt", "strategy")}
            out.append(Candidate(cell.name, cell, desc, cal, sweep))
    names = [c.name for c in out]
    for c in out:
        if names.count(c.name) > 1:
            c.name = f"{c.sweep.name if c.sweep else Path(c.labels).parent.name}/{c.name}"
    if len({c.name for c in out}) != len(out):
        raise ConfigError("the same candidate is given twice: " + ", ".join(sorted({n for n in names if names.count(n) > 1})))
    if len(out) < minimum:
        raise ConfigError(f"compare needs at least two candidates, got {len(out)} ({', '.join(map(str, paths))})")
    return out


def sweep_reference(candidates: Sequence[Candidate]) -> tuple[Any, str]:
    """The reference of candidates that are sweep cells: their sweep's dataset's human labels (one dataset for
    all); ``(LabelSet, description)``.  A label file among them needs an explicit reference."""
    from metaeval.layout import ResultsLayout
    from metaeval.study.records import read_summary

    sweeps = {c.sweep for c in candidates}
    if None in sweeps:
        files = ", ".join(str(c.labels) for c in candidates if c.sweep is None)
        raise ConfigError(f"{files}: not a sweep cell, so there is no sweep dataset to compare against; give the "
                          "reference labels with --reference FILE")
    datasets, names = {}, set()
    for s in sweeps:
        ds = read_summary(ResultsLayout.open(s)).config_group("dataset")  # the dataset as composed
        datasets[s] = (ds.get("source") or ds.get("name"), ds.get("nuggets"))
        names.add(ds.get("name"))
    if len(set(datasets.values())) > 1:
        raise ConfigError("the sweeps judged different datasets (" + "; ".join(f"{s}: {d[0]}" for s, d in datasets.items())
                          + "); compare cells of one dataset, or give --reference FILE")
    (source, nuggets), = set(datasets.values())
    name = names.pop() if len(names) == 1 else None
    if not source:
        raise ConfigError(f"{next(iter(sweeps))}/summary.json names no dataset; give --reference FILE")
    from metaeval.data.dataset import load_dataset

    ds = load_dataset(source)
    if ds.labels is None:
        raise ConfigError(f"dataset {source!r} has no human labels to compare against; give --reference FILE")
    # by its name, as the sweep's summary says it ("dataset trec-rag-2024"), and where the labels were read from
    where = f" ({source})" if name and str(source) != str(name) else ""
    return ds.labels, f"the human labels of dataset {name or source}{where}"


def compare_candidates(reference: Any, candidates: Sequence[Candidate], *, reference_name: str,
                       metrics: Sequence[str] | None = None, pairs: Any = "all", n_boot: int = 1000, seed: int = 0,
                       alpha: float = 0.05, variant: str = "b") -> tuple[Any, dict[str, Any]]:
    """``(table, document)``: every pair of ``pairs`` (``"all"``, ``"neighbours"`` or ``[(a, b), ...]``) on tau
    and label agreement (:func:`metaeval.analysis.meta_evaluation.analyze`), plus calibrated error where both cells' studies
    hold a calibration result."""
    from metaeval.analysis.meta_evaluation import analyze
    from metaeval.analysis.comparison import calibration_rows, finish, neighbour_pairs
    from metaeval.io import load_labels
    from metaeval.scoring import METRICS

    names = [c.name for c in candidates]
    how = "every pair of the candidates given"
    if pairs == "neighbours":
        pairs, how = neighbour_pairs(names, [c.grid for c in candidates]), NEIGHBOURS
        if not pairs:
            raise ConfigError("no two candidates are natural neighbours (same judge, another prompt or strategy); "
                              "compare every pair instead")
    elif not isinstance(pairs, str):
        how = "the pairs asked for"
    labels = [load_labels(c.labels, name=c.name) if isinstance(c.labels, (str, os.PathLike)) else c.labels
              for c in candidates]
    res = analyze(reference, labels, names=names, metrics=metrics, n_boot=n_boot, seed=seed, alpha=alpha,
                  variant=variant, pairs=pairs)
    cal = {c.name: c.calibration for c in candidates if c.calibration}
    asked = list(dict.fromkeys(zip(res.paired["candidate_a"], res.paired["candidate_b"]))) if len(res.paired) else []
    table = finish([*res.paired.to_dict(orient="records"), *calibration_rows(asked, cal, alpha)], alpha)
    metric = next((m for m in (res.json.get("metrics_analysed") or []) if m in METRICS),
                  (res.json.get("metrics_analysed") or ["v_strict"])[0])
    doc = comparison_document(table, candidates, metric=metric, alpha=alpha, n_boot=n_boot, seed=seed,
                              variant=variant, pairs_how=how, reference=reference_name)
    return table, doc
