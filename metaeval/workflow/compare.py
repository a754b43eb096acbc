"""The comparison workflow of ``metaeval compare`` and ``metaeval.compare()``: which candidate (judge, prompt or
strategy) agrees better with the reference, pair by pair.

``compare(inputs, reference)`` turns the inputs into candidates (cell folders, sweep folders: every cell with
labels, label files - ``metaeval.study.compare.resolve_candidates`` - or label sets), finds the reference (the
sweep's dataset's human labels when none is given, ``sweep_reference``) and runs the paired comparison
(``compare_candidates``: paired differences in tau at three levels and in label agreement with paired
topic-bootstrap intervals and Holm-adjusted p-values).  The command prints the result, the API returns it.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from metaeval.errors import ConfigError


def candidates_of(inputs: Sequence[Any], minimum: int = 2) -> list[Any]:
    """The candidates of ``inputs``: paths resolved together (distinct names across sweeps), a label set as it is
    (named by its ``name``, else ``candidate_K``); fewer than ``minimum`` is an error."""
    from metaeval.study.compare import Candidate, resolve_candidates

    if all(isinstance(i, (str, os.PathLike)) for i in inputs):
        return resolve_candidates(list(inputs), minimum=minimum)
    out = []
    for k, c in enumerate(inputs, start=1):
        if isinstance(c, (str, os.PathLike)):
            out += resolve_candidates([c], minimum=1)
        else:
            out.append(Candidate(getattr(c, "name", None) or f"candidate_{k}", c))
    if len(out) < minimum:
        raise ConfigError(f"compare needs at least two candidates, got {len(out)}")
    return out


def compare(inputs: Sequence[Any], reference: Any = None, *, load: Callable[..., Any] | None = None,
            minimum: int = 2, metrics: Sequence[str] | None = None, pairs: Any = "all", n_boot: int = 1000,
            seed: int = 0, alpha: float = 0.05, variant: str = "b") -> tuple[Any, dict[str, Any]]:
    """``(table, document)`` of :func:`metaeval.study.compare.compare_candidates` for ``inputs`` against
    ``reference`` (labels or a path; None: the candidates' sweep's dataset's human labels).  ``load(obj,
    name=None)`` reads a path or passes labels through (the API's ``load``, which renames runs); default: a path
    is read with ``metaeval.io.load_labels`` and the candidates are read when compared."""
    from metaeval.study.compare import compare_candidates, sweep_reference

    cands = candidates_of(inputs, minimum)
    if load is not None:
        for c in cands:
            c.labels = load(c.labels, name=c.name)
    if reference is None:
        ref, ref_name = sweep_reference(cands)
        if load is not None:
            ref = load(ref)
    else:
        if load is not None:
            ref = load(reference)
        elif isinstance(reference, (str, os.PathLike)):
            from metaeval.io import load_labels

            ref = load_labels(reference)
        else:
            ref = reference
        ref_name = str(reference) if isinstance(reference, (str, os.PathLike)) else getattr(ref, "name", "reference")
    return compare_candidates(ref, cands, reference_name=ref_name, metrics=metrics, pairs=pairs, n_boot=n_boot,
                              seed=seed, alpha=alpha, variant=variant)


def write_comparison(doc: dict, table: Any, out_dir: str | os.PathLike) -> list:
    """compare.json, compare.csv (every row), compare.html and compare.md (the report's section) and compare.tex."""
    import json
    from pathlib import Path

    from metaeval.io.atomic import atomic_write_text
    from metaeval.report.compare_section import TITLE, compare_blocks, compare_latex
    from metaeval.report.model import Report, Section
    from metaeval.report.render_html import render_html
    from metaeval.report.render_md import render_md

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    blocks, data = compare_blocks(doc, doc["metric"])
    rep = Report(f"metaeval compare: {len(doc['candidates'])} candidates", [Section("compare", TITLE, blocks)],
                 {"compare": data}, {})
    paths = [out / f"compare.{ext}" for ext in ("json", "csv", "html", "md", "tex")]
    atomic_write_text(paths[0], json.dumps(doc, indent=2, allow_nan=False) + "\n")
    atomic_write_text(paths[1], table.to_csv(index=False))
    atomic_write_text(paths[2], render_html(rep))
    atomic_write_text(paths[3], render_md(rep, "."))
    atomic_write_text(paths[4], compare_latex({"compare": data}).get("compare", ""))
    return paths
