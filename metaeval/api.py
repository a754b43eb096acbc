"""The Python API, in the style of ranx / ir_measures: plain functions over files, label sets and DataFrames.

Everything here is also reachable as ``metaeval.<name>`` (imported lazily, so ``import metaeval`` stays fast)::

    import metaeval

    nist = metaeval.load("../shared/data/trec-rag-2024/nugget_assignment.20241108.jl")     # a LabelSet
    per_answer = metaeval.score(nist)                                                       # one row per answer
    runs = metaeval.leaderboard(per_answer)                                                 # one row per run
    res = metaeval.analyze(nist, "judge.jsonl", run_map={"old_run": "new_run"})           # .tau, .descriptive ...
    pairs = metaeval.compare(nist, "judge.jsonl", metric="V_strict")                       # run pairs, flips
    print(metaeval.to_latex(res.tau))

Inputs: a path (assignment file, nuggetizer metrics file, score table, folder of ``trec_eval -q`` outputs, or a
sweep cell folder holding ``labels.jsonl``), a ``LabelSet``, or a score DataFrame.  ``run_map`` ({old: new}, or
``"OLD=NEW"`` strings / mapping files as ``--run-map`` takes) renames runs on every input before comparing.
The layers underneath are ``metaeval.io``, ``metaeval.scoring``, ``metaeval.analysis``, ``metaeval.study``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["load", "load_dataset", "score", "leaderboard", "analyze", "compare", "calibrate", "sweep",
           "register_judge", "to_latex"]


def _run_map(run_map: Any) -> dict[str, str]:
    if not run_map:
        return {}
    if isinstance(run_map, Mapping):
        return {str(k): str(v) for k, v in run_map.items()}
    from metaeval.io.runmap import parse_run_map

    return parse_run_map(run_map)


def load(source: Any, *, name: str | None = None, run_map: Any = None, format: str | None = None) -> Any:
    """Labels or scores from ``source``: a ``LabelSet`` for an assignment file (NIST / nuggetizer), a folder with
    ``labels.jsonl`` (a sweep cell) or a track folder as published (its assignment file); the long score table ``run_id, qid, metric, value`` for a nuggetizer metrics file, a score
    table or a folder of ``trec_eval -q`` files.  Objects are passed through (renamed by ``run_map``)."""
    from metaeval.io.runmap import rename_runs

    obj = source
    if isinstance(source, (str, os.PathLike)):
        p = Path(source)
        if format == "assignments" or (p.is_dir() and (p / "labels.jsonl").exists()):
            from metaeval.io import load_labels

            obj = load_labels(p, format=format, name=name)
        elif p.is_dir() and _has_assignment_file(p):  # a track folder as published: its human labels
            obj = load_dataset(p).labels
        elif format == "metrics":
            from metaeval.io.metrics import read_metrics_long

            obj = read_metrics_long(p)
        else:
            obj = _load_input(p)
        if name and hasattr(obj, "name"):
            obj.name = name
    return rename_runs(obj, _run_map(run_map))


def _has_assignment_file(folder: Path) -> bool:
    from metaeval.errors import FormatError
    from metaeval.io import detect_format

    for f in folder.iterdir():
        if f.is_file() and f.suffix in (".jl", ".jsonl", ".gz"):
            try:
                if detect_format(f) == "assignments":
                    return True
            except FormatError:
                continue
    return False


def _load_input(p: Path) -> Any:
    from metaeval.io import detect_format

    if p.is_file() and detect_format(p) == "metrics":
        from metaeval.io.metrics import read_metrics_long

        return read_metrics_long(p)
    from metaeval.analysis.api import load_input

    return load_input(p)


def load_dataset(name_or_path: str | os.PathLike) -> Any:
    """A ``Dataset`` (topics, documents, answers, qrels, human nuggets and labels) by registered name (``demo``,
    ``trec-rag-2024`` ...) or path (an assignment file, the demo layout, or a track folder as published)."""
    from metaeval.data.dataset import load_dataset as _load

    return _load(name_or_path)


def score(labels: Any, policy: Any = None, **policy_options: Any) -> "Any":
    """Per-answer scores (``run_id, qid, a_strict, a, v_strict, v, w_strict, w, n_nuggets, n_vital, n_failed``).
    ``policy`` is a ``ScoringPolicy``; or give its fields (``no_vital``, ``failed_support``, ``failed_importance``)."""
    from dataclasses import fields

    from metaeval.scoring import ScoringPolicy, score_answers

    _check_keywords("score", policy_options, [f.name for f in fields(ScoringPolicy)])
    if policy is None:
        policy = ScoringPolicy(**policy_options)
    return score_answers(load(labels), policy)


def leaderboard(scores: Any, *, common_topics: bool = False) -> Any:
    """Runs ranked by mean V_strict over topics (all six metrics, ``n_topics``) from per-answer scores or labels.
    ``common_topics=True`` keeps only the topics every run answered (the kept count is in ``n_topics``)."""
    import pandas as pd

    from metaeval.scoring import run_scores

    per_answer = scores if isinstance(scores, pd.DataFrame) else score(scores)
    return run_scores(per_answer, common_topics=common_topics)


def analyze(reference: Any, candidates: Any, *, run_map: Any = None, **kwargs: Any) -> Any:
    """Tau at three levels with CIs, run-pair flips, agreement and descriptive statistics (an ``AnalysisResult``:
    DataFrames ``tau``, ``cells``, ``flips``, ``flip_pairs``, ``agreement``, ``confusion``, ``descriptive`` and the
    ``json`` document).  ``kwargs`` go to :func:`metaeval.analysis.api.analyze` (``metrics``, ``variant``,
    ``n_boot``, ``seed``, ``alpha``, ``ci_method``, ``policy``, ``flip_test``, ``names``)."""
    import inspect

    from metaeval.analysis.api import analyze as _analyze

    _check_keywords("analyze", kwargs, [p for p in inspect.signature(_analyze).parameters if p not in
                                        ("reference", "candidates")])
    cands = list(candidates) if isinstance(candidates, (list, tuple)) else [candidates]
    names = kwargs.pop("names", None)
    if names is None:
        names = [_display_name(c, k) for k, c in enumerate(cands, start=1)]
    ref = load(reference, run_map=run_map)
    if isinstance(reference, (str, os.PathLike)) and hasattr(ref, "name"):
        ref.name = Path(reference).name.split(".")[0]
    return _analyze(ref, [load(c, run_map=run_map) for c in cands], names=names, **kwargs)


def _display_name(obj: Any, k: int) -> str:
    if isinstance(obj, (str, os.PathLike)):
        return Path(obj).name.split(".")[0]
    return getattr(obj, "name", None) or f"candidate_{k}"


def compare(reference: Any, candidate: Any, *, metric: str = "v_strict", run_map: Any = None, test: str = "t",
            alpha: float = 0.05, seed: int = 0, policy: Any = None) -> Any:
    """One row per run pair (``run_a, run_b, ref_diff, cand_diff, p_ref, ref_significant, ref_significant_holm,
    flip``): the reference's mean difference over topics, the candidate's, the reference's paired test over
    topics, and whether the candidate orders the pair the other way."""
    res = analyze(reference, candidate, run_map=run_map, metrics=[metric], n_boot=0, flip_test=test, alpha=alpha,
                  seed=seed, policy=policy)
    return res.flip_pairs.drop(columns=["candidate"], errors="ignore").reset_index(drop=True)


def calibrate(reference: Any, judge: Any, *, seed: int = 0, run_map: Any = None, **settings: Any) -> dict[str, Any]:
    """The calibration study of a judge against human labels (the ``calibration.json`` document of a sweep cell):
    candidates including "none" (raw), out-of-fold selection, leaderboard, recommendation.  ``settings``: folds,
    inner_folds, methods, metrics, metric, level, min_coverage, n_boot, selection (see
    :func:`metaeval.study.calibration.calibrate_study`)."""
    from metaeval.study.calibration import DEFAULTS, calibrate_study

    _check_keywords("calibrate", settings, [*DEFAULTS, "seed", "run_map"])
    return calibrate_study(load(reference, run_map=run_map), load(judge, run_map=run_map), dict(settings), seed=seed)


def _check_keywords(func: str, given: Mapping[str, Any], known: Sequence[str]) -> None:
    """A keyword ``func`` does not take is a ``TypeError`` naming the nearest one it does (never ignored)."""
    from metaeval.schema import nearest

    for key in given:
        if key not in known:
            hint = nearest(key, known).replace("; did you mean ", "; did you mean '").rstrip("?")
            raise TypeError(f"{func}() got an unexpected keyword argument {key!r}"
                            + (hint + "'?" if hint else f" (it takes: {', '.join(known)})"))


def register_judge(name: str, judge: Any) -> str:
    """Make a ``Judge`` subclass or instance available under ``name`` (``metaeval.judges.plugins``)."""
    from metaeval.judges.plugins import register_judge as _register

    return _register(name, judge)


def sweep(overrides: Sequence[str] = (), *, judges: Mapping[str, Any] | None = None,
          config_dir: str | os.PathLike | Sequence[str | os.PathLike] | None = None, progress: bool = False) -> dict[str, Any]:
    """Run ``metaeval sweep`` with Hydra ``overrides`` (``["grid=single", "judge=lexical", "name=mine"]``) and return
    the summary (also written to ``results/<name>/summary.json``); a dry run returns ``{"dry_run": True, "cells":
    [...]}``.

    ``judges`` ({name: Judge subclass or instance}) are registered in the judge catalog, so ``judge=<name>`` or
    ``grid.judges=[<name>]`` can name them like a shipped judge; the sweep then runs with ``runtime=serial`` (in this
    process) unless ``overrides`` choose a runtime.
    """
    from metaeval.commands.compose import compose_sweep
    from metaeval.commands.driver import drive_sweep
    from metaeval.commands.progress import stage_progress

    overrides = list(overrides)
    for jname, obj in (judges or {}).items():
        register_judge(jname, obj)
    if judges and not any(o.startswith("runtime=") for o in overrides):
        overrides.append("runtime=serial")
    settings, cells = compose_sweep(overrides, config_dir=config_dir)
    run = drive_sweep(settings, cells, overrides, stage_progress if progress else None)
    if run.summary is None:
        return {"dry_run": True, "cells": run.dry_run_cells}
    return run.summary


def to_latex(df: Any, **kwargs: Any) -> str:
    """A DataFrame (e.g. ``analyze(...).tau`` or ``compare(...)``) as a booktabs LaTeX table; see
    :func:`metaeval.io.latex.to_latex` (``caption``, ``label``, ``digits``, ``columns``, ``index``)."""
    from metaeval.io.latex import to_latex as _to_latex

    return _to_latex(df, **kwargs)
