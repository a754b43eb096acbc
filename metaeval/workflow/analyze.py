"""The meta-evaluation workflow of ``metaeval analyze`` and ``metaeval.analyze()``: read the reference and the
candidates, rename runs, run :func:`metaeval.analysis.meta_evaluation.analyze` (Kendall's tau at three levels with
topic-bootstrap CIs, run-pair flips, label agreement, descriptives) and write its files.

:func:`analyze` is the one call of the analysis for the command line and the API alike (the API hands its own
``load``, which reads cell folders and track folders and renames runs; the command reads ``--candidate`` values
with :func:`candidate_inputs` and ``--run-map`` with :func:`renamed_inputs`); :func:`analyze_files` is the command's
whole job: inputs, analysis, ``analysis.json`` and the tidy CSVs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class AnalyzeRun:
    """What ``metaeval analyze`` did: the :class:`~metaeval.analysis.meta_evaluation.AnalysisResult` and the files
    it wrote (``analysis.json`` and the CSVs, in writing order)."""

    result: Any
    paths: list


def candidate_inputs(specs: Sequence[str]) -> tuple[list, list[str]]:
    """``--candidate`` values -> (inputs, names).  ``NAME=PATH`` names a candidate (when ``NAME=PATH`` is not itself
    an existing path); a sweep cell folder (holding ``labels.jsonl``, as the Python API and ``plan`` accept) is read
    as its label set and named by its folder (the cell id); a file is named by its stem, or by its folder when the
    stem is the generic ``labels``.  Names still shared get ``#k``."""
    from metaeval.errors import ConfigError
    from metaeval.io import load_labels

    inputs, names = [], []
    for spec in specs:
        name, path = None, str(spec)
        if "=" in path and not Path(path).exists():
            name, path = path.split("=", 1)
            if not name.strip() or not path:
                raise ConfigError(f"--candidate {spec}: expected NAME=PATH or PATH")
        p = Path(path)
        if p.is_dir() and (p / "labels.jsonl").exists():  # a sweep cell folder
            auto = p.resolve().name
            inputs.append(load_labels(p, name=name or auto))
        else:
            from metaeval.paths import label_file_name

            auto = label_file_name(p)
            inputs.append(path)
        names.append(name or auto)
    seen = {n: names.count(n) for n in names}
    if any(v > 1 for v in seen.values()):
        names = [f"{n}#{k + 1}" if seen[n] > 1 else n for k, n in enumerate(names)]
    return inputs, names


def renamed_inputs(reference: Any, candidates: Sequence[Any], run_map: Any) -> tuple[Any, list]:
    """Load every input and rename its runs by ``run_map`` (``--run-map`` values; names stay as
    :func:`candidate_inputs` gave them); a key no input has is one warning."""
    import logging

    from metaeval.analysis.meta_evaluation import load_input
    from metaeval.io.runmap import parse_run_map, rename_runs, unused_keys

    mapping = parse_run_map(run_map)
    ref = load_input(reference)
    cands = [load_input(c) if isinstance(c, str) else c for c in candidates]
    unused = unused_keys(mapping, ref, *cands)
    if unused:
        log = logging.getLogger("metaeval.commands.analyze")  # the command's logger, as before: stderr unchanged
        log.warning("--run-map: no input has run(s) %s", ", ".join(unused))
    if hasattr(ref, "name"):
        ref.name = Path(reference).name.split(".")[0]
    return rename_runs(ref, mapping), [rename_runs(c, mapping) for c in cands]


def analysis_options() -> list[str]:
    """The keywords :func:`analyze` hands to the analysis (its signature less ``reference`` and ``candidates``)."""
    import inspect

    from metaeval.analysis.meta_evaluation import analyze as _analyze

    return [p for p in inspect.signature(_analyze).parameters if p not in ("reference", "candidates")]


def analyze(reference: Any, candidates: Sequence[Any], *, names: Sequence[str] | None = None,
            load: Callable[[Any], Any] | None = None, **options: Any) -> Any:
    """The :class:`~metaeval.analysis.meta_evaluation.AnalysisResult` of ``candidates`` against ``reference``
    (``options``: the keywords of :func:`metaeval.analysis.meta_evaluation.analyze`: ``metrics``, ``variant``,
    ``n_boot``, ``seed``, ``alpha``, ``ci_method``, ``policy``, ``flip_test`` ...).  ``load(obj)`` reads each input
    first (the API's reader); a path reference read that way is named by its file's stem.  Without ``load``, paths
    are read by the analysis itself."""
    from metaeval.analysis.meta_evaluation import analyze as _analyze

    if load is not None:
        ref = load(reference)
        if isinstance(reference, (str, os.PathLike)) and hasattr(ref, "name"):
            ref.name = Path(reference).name.split(".")[0]
        reference, candidates = ref, [load(c) for c in candidates]
    return _analyze(reference, list(candidates), names=names, **options)


def analyze_files(reference: str, candidates: Sequence[str], *, out_dir: str | os.PathLike, run_map: Any = None,
                  no_vital: str = "zero", failed_support: str = "not_support", failed_importance: str = "nuggetizer",
                  **options: Any) -> AnalyzeRun:
    """``metaeval analyze``: the ``--candidate`` values (:func:`candidate_inputs`) against the reference file,
    runs renamed by ``run_map``, label inputs scored by the policy (``no_vital``, ``failed_support``,
    ``failed_importance``: :class:`metaeval.scoring.ScoringPolicy`), the result written into ``out_dir`` (an
    ``OSError`` while writing is one :class:`~metaeval.io.outputs.OutputError` line)."""
    from metaeval.io.outputs import output_errors
    from metaeval.scoring import ScoringPolicy

    policy = ScoringPolicy(no_vital=no_vital, failed_support=failed_support, failed_importance=failed_importance)
    inputs, names = candidate_inputs(candidates)
    if run_map:
        reference, inputs = renamed_inputs(reference, inputs, run_map)
    res = analyze(reference, inputs, names=names, policy=policy, **options)
    with output_errors(out_dir):
        paths = res.write(out_dir)
    return AnalyzeRun(res, list(paths))
