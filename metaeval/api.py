"""The Python API, in the style of ranx / ir_measures: plain functions over files, label sets and DataFrames.

Everything here is also reachable as ``metaeval.<name>`` after ``import metaeval`` (imported lazily, so that
import stays fast)::

    nist = metaeval.load("../shared/data/trec-rag-2024/nugget_assignment.20241108.jl")     # a LabelSet
    per_answer = metaeval.score(nist)                                                       # one row per answer
    runs = metaeval.leaderboard(per_answer)                                                 # one row per run
    res = metaeval.analyze(nist, "judge.jsonl", run_map={"old_run": "new_run"})           # .tau, .descriptive ...
    pairs = metaeval.run_pairs(nist, "judge.jsonl", metrics="V_strict")                    # run pairs, flips
    cmp = metaeval.compare(nist, ["judge_a.jsonl", "judge_b.jsonl"])     # which agrees better: paired differences
    cal = metaeval.calibrate(nist, "judge.jsonl")                # a CalibrationResult: .leaderboard, .candidates ...
    print(metaeval.to_latex(res.tau), cal.to_latex())

Results are typed: ``analyze`` returns an ``AnalysisResult``, ``calibrate`` a ``CalibrationResult`` and ``sweep`` a
``SweepResult`` (dataclasses of DataFrames with ``.to_latex()``; the JSON document each command writes is ``.json``).
Keyword names are the same everywhere (``metrics``, ``n_boot``, ``seed``, ``run_map``, ``flip_test``); the old
``run_pairs(metric=, test=)`` and ``calibrate(metric=)`` still work with a ``DeprecationWarning`` (and so does
``compare(reference, candidate)`` with one candidate, the run-pair table ``run_pairs`` now gives).  Errors name the
keyword to change (``format=``, ``run_map=``), never a command-line option.

Inputs: a path (assignment file, nuggetizer metrics file, score table, folder of ``trec_eval -q`` outputs, or a
sweep cell folder holding ``labels.jsonl``), a ``LabelSet``, or a score DataFrame.  ``run_map`` ({old: new}, or
``"OLD=NEW"`` strings / mapping files as ``--run-map`` takes) renames runs on every input before comparing.
Each function runs the workflow function its command runs (``metaeval.workflow``: ``analyze``, ``score``,
``calibrate``, ``compare``, ``sweep``), one implementation for both; below it lie ``metaeval.io``,
``metaeval.scoring``, ``metaeval.analysis`` and ``metaeval.study``.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from metaeval.api_results import CalibrationResult, SweepResult

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.analysis.meta_evaluation import AnalysisResult

__all__ = ["load", "load_dataset", "score", "leaderboard", "analyze", "compare", "run_pairs", "calibrate", "sweep",
           "register_judge", "to_latex", "AnalysisResult", "CalibrationResult", "SweepResult"]


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
    with _speaks_python():
        return _load(source, name=name, run_map=run_map, format=format)


def _load(source: Any, *, name: str | None, run_map: Any, format: str | None) -> Any:
    from metaeval.io.runmap import rename_runs

    _check_source(source)
    obj = source
    if isinstance(source, (str, os.PathLike)):
        p = Path(source)
        if p.is_dir() and (p / "labels.jsonl").exists():  # a sweep cell's folder
            from metaeval.io import load_labels

            obj = load_labels(p, format=format, name=name)
        elif p.is_dir() and _has_assignment_file(p):  # a track folder as published: its human labels
            obj = load_dataset(p).labels
        else:  # a file, by the format registry's one dispatcher; a folder of trec_eval files
            from metaeval.analysis.meta_evaluation import load_input

            obj = load_input(p, format)
        if name and hasattr(obj, "name"):
            obj.name = name
    return rename_runs(obj, _run_map(run_map))


def _check_source(source: Any) -> None:
    """What ``load`` takes: a path, a ``LabelSet`` or a score table (a pandas DataFrame); anything else
    (``None``, a number) is a ``TypeError`` rather than passed back as if it were labels."""
    if isinstance(source, (str, os.PathLike)):
        if not str(source).strip():
            raise TypeError("load() got an empty path")
        return
    from metaeval.types import LabelSet

    if isinstance(source, LabelSet):
        return
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        return
    raise TypeError(f"load() takes a path, a LabelSet or a score DataFrame; got {type(source).__name__} {source!r:.60}")


def check_count(func: str, keyword: str, value: Any, limit: int, what: str) -> None:
    """``value`` of ``keyword`` an integer in ``0..limit`` (the cap the command line applies), else ``ValueError``
    / ``TypeError`` naming it: ``analyze(n_boot=10**9)`` would need ~156 GiB."""
    if isinstance(value, bool) or not isinstance(value, int):
        import numpy as np  # a dependency: never missing

        if isinstance(value, np.integer):
            value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{func}({keyword}=) takes an integer, got {type(value).__name__} {value!r:.40}")
    if not 0 <= value <= limit:
        raise ValueError(f"{func}({keyword}={value}): {what} must be between 0 and {limit:,} (the command line's cap)")


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


def load_dataset(name_or_path: str | os.PathLike) -> Any:
    """A ``Dataset`` (topics, documents, answers, qrels, human nuggets and labels) by registered name (``demo``,
    ``trec-rag-2024`` ...) or path (an assignment file, the demo layout, or a track folder as published)."""
    from metaeval.data.dataset import load_dataset as _load

    return _load(name_or_path)


def score(labels: Any, policy: Any = None, **policy_options: Any) -> "Any":
    """Per-answer scores (``run_id, qid, a_strict, a, v_strict, v, w_strict, w, n_nuggets, n_vital, n_failed``).
    ``policy`` is a ``ScoringPolicy``; or give its fields (``no_vital``, ``failed_support``, ``failed_importance``)."""
    from dataclasses import fields

    from metaeval.scoring import ScoringPolicy
    from metaeval.workflow.score import score_labels, scoring_policy

    _check_keywords("score", policy_options, [f.name for f in fields(ScoringPolicy)])
    if policy is None:
        policy = scoring_policy(**policy_options)
    return score_labels(load(labels), policy)


def leaderboard(scores: Any, *, common_topics: bool = False) -> Any:
    """Runs ranked by mean V_strict over topics (all six metrics, ``n_topics``) from per-answer scores or labels.
    ``common_topics=True`` keeps only the topics every run answered (the kept count is in ``n_topics``)."""
    import pandas as pd

    from metaeval.workflow.score import leaderboard as _leaderboard

    per_answer = scores if isinstance(scores, pd.DataFrame) else score(scores)
    return _leaderboard(per_answer, common_topics=common_topics)


def analyze(reference: Any, candidates: Any, *, run_map: Any = None, **kwargs: Any) -> Any:
    """Tau at three levels with CIs, run-pair flips, agreement and descriptive statistics (an ``AnalysisResult``:
    DataFrames ``tau``, ``cells``, ``flips``, ``flip_pairs``, ``agreement``, ``confusion``, ``descriptive`` and the
    ``json`` document).  ``kwargs`` go to :func:`metaeval.analysis.meta_evaluation.analyze` (``metrics``, ``variant``,
    ``n_boot``, ``seed``, ``alpha``, ``ci_method``, ``policy``, ``flip_test``, ``names``)."""
    from metaeval.workflow.analyze import analysis_options

    _check_keywords("analyze", kwargs, analysis_options())
    from metaeval.study.settings import MAX_BOOTSTRAP

    if "n_boot" in kwargs:
        check_count("analyze", "n_boot", kwargs["n_boot"], MAX_BOOTSTRAP, "bootstrap replicates")
    cands = list(candidates) if isinstance(candidates, (list, tuple)) else [candidates]
    names = kwargs.pop("names", None)
    if names is None:
        names = [_display_name(c, k) for k, c in enumerate(cands, start=1)]
    if isinstance(kwargs.get("metrics"), str):  # one metric, as compare(metrics=) takes it
        kwargs["metrics"] = [kwargs["metrics"]]
    from metaeval.workflow.analyze import analyze as _run

    with _speaks_python():
        return _run(reference, cands, names=names, load=lambda obj: load(obj, run_map=run_map), **kwargs)


def _display_name(obj: Any, k: int) -> str:
    if isinstance(obj, (str, os.PathLike)):
        from metaeval.paths import label_file_name

        return label_file_name(obj)
    return getattr(obj, "name", None) or f"candidate_{k}"


def run_pairs(reference: Any, candidate: Any, *, metrics: "str | Sequence[str]" = "v_strict", run_map: Any = None,
              flip_test: str = "t", alpha: float = 0.05, seed: int = 0, policy: Any = None, **deprecated: Any) -> Any:
    """One row per run pair (``run_a, run_b, ref_diff, cand_diff, p_ref, ref_significant, ref_significant_holm,
    flip``): the reference's mean difference over topics, the candidate's, the reference's paired test over
    topics (``flip_test``: ``t`` or ``permutation``), and whether the candidate orders the pair the other way.
    ``metrics``: one metric (or a list of one), the same keyword as :func:`analyze`'s.  (Until 0.x this was
    ``compare(reference, candidate)``; ``compare`` now compares candidates with each other.)"""
    _check_keywords("run_pairs", deprecated, ["metric", "test"])
    metrics = _renamed("run_pairs", deprecated, "metric", "metrics", metrics, "v_strict")
    flip_test = _renamed("run_pairs", deprecated, "test", "flip_test", flip_test, "t")
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if len(metrics) != 1:
        raise TypeError(f"run_pairs() compares on one metric; got metrics={metrics!r} (use analyze() for several)")
    res = analyze(reference, candidate, run_map=run_map, metrics=metrics, n_boot=0, flip_test=flip_test, alpha=alpha,
                  seed=seed, policy=policy)
    return res.flip_pairs.drop(columns=["candidate"], errors="ignore").reset_index(drop=True)


def compare(reference: Any, candidates: Any, *, metrics: "str | Sequence[str] | None" = None, pairs: Any = "all",
            n_boot: int = 1000, seed: int = 0, alpha: float = 0.05, variant: str = "b", run_map: Any = None,
            **old: Any) -> Any:
    """Which candidate agrees better with ``reference``, pair by pair, as ranx's ``compare(qrels, runs)``: a
    DataFrame with one row per pair and statistic (``candidate_a, candidate_b, metric, statistic, level, value_a,
    value_b, diff, ci_low, ci_high, p_value, p_holm, n_boot, better, interval``): tau at the three levels per metric
    and the label agreement (Cohen's kappa, weighted kappa, exact agreement), ``diff = a - b`` with its paired
    topic-bootstrap interval (``n_boot`` resamples shared by every candidate, ``seed``) and Holm-adjusted p over the
    pairs; the held-out calibrated error too for sweep cells whose study calibrated.  ``better`` names the side a
    difference favours where ``p_holm < alpha``.  ``df.attrs["lines"]``: one plain-language line per pair.

    ``candidates``: a list of label sets or paths (cell folders, sweep folders: every cell, label files);
    ``reference``: labels, or ``None`` for sweep cells (their sweep's dataset's human labels).  ``pairs``:
    ``"all"``, ``"neighbours"`` (same judge, another prompt or strategy) or ``[(name_a, name_b), ...]``;
    ``metrics``: default all six (the first is the one the lines speak of).  See
    :mod:`metaeval.analysis.comparison`.

    With ONE candidate (the form of earlier versions) this returns that candidate's run pairs, as
    :func:`run_pairs`, with a ``DeprecationWarning``.
    """
    if not isinstance(candidates, (list, tuple)) and not _is_sweep_folder(candidates):
        warnings.warn("compare(reference, candidate) with one candidate returns its run pairs and is deprecated: use "
                      "run_pairs(reference, candidate); compare(reference, [a, b, ...]) compares candidates with each "
                      "other", DeprecationWarning, stacklevel=2)
        return run_pairs(reference, candidates, metrics=metrics or "v_strict", run_map=run_map, alpha=alpha, seed=seed,
                         **old)
    _check_keywords("compare", old, [])
    from metaeval.workflow.compare import compare as _compare

    metrics = [metrics] if isinstance(metrics, str) else metrics
    cands = list(candidates) if isinstance(candidates, (list, tuple)) else [candidates]
    with _speaks_python():
        table, doc = _compare(cands, reference, load=lambda obj, name=None: load(obj, run_map=run_map, name=name),
                              minimum=1, metrics=metrics, pairs=pairs, n_boot=n_boot, seed=seed, alpha=alpha,
                              variant=variant)
    table.attrs["lines"] = doc["lines"]
    return table


def _is_sweep_folder(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike)) and (Path(obj) / "summary.json").is_file() \
        and not (Path(obj) / "labels.jsonl").exists()


def _renamed(func: str, given: dict[str, Any], old: str, new: str, value: Any, default: Any) -> Any:
    """``value`` of keyword ``new``, or of its old name ``old`` (popped from ``given``) with a DeprecationWarning;
    both at once is a TypeError."""
    if old not in given:
        return value
    if value != default:
        raise TypeError(f"{func}() got both {new}= and its old name {old}=; use {new}=")
    warnings.warn(f"{func}({old}=) is deprecated; use {new}= (the same keyword as in the other functions)",
                  DeprecationWarning, stacklevel=3)
    return given.pop(old)


def calibrate(reference: Any, judge: Any, *, seed: int = 0, run_map: Any = None,
              metrics: "str | Sequence[str] | None" = None, **settings: Any) -> "CalibrationResult":
    """The calibration study of a judge against human labels (what ``metaeval calibrate`` writes as
    ``calibration.json`` and ``calibration-model.json``), as a :class:`CalibrationResult`: candidates including
    "none" (raw), out-of-fold selection, leaderboard, recommendation, the fitted model.  ``metrics``: the metrics
    calibrated, the first is the primary one (selection, recommendation).  ``settings``: folds, inner_folds,
    repeats, methods, level, min_coverage, n_boot, selection, judge_spec, prompt_version, workers (processes for the
    repeats; default ``"auto"``; moves no number) (see
    :func:`metaeval.study.calibration_workflow.calibrate_study`)."""
    from metaeval.workflow.calibrate import DEFAULTS, calibration_study

    known = [k for k in DEFAULTS if k not in ("metric", "metrics")]
    _check_keywords("calibrate", settings, [*known, "judge_spec", "prompt_version", "metric"])
    from metaeval.study.settings import MAX_BOOTSTRAP

    if "n_boot" in settings:
        check_count("calibrate", "n_boot", settings["n_boot"], MAX_BOOTSTRAP, "bootstrap replicates")
    primary = settings.pop("metric", None)
    if primary is not None:
        warnings.warn("calibrate(metric=) is deprecated; use metrics= (its first metric is the primary one, as in "
                      "analyze)", DeprecationWarning, stacklevel=2)
    metrics = [metrics] if isinstance(metrics, str) else (list(metrics) if metrics is not None else None)
    if primary is not None:
        metrics = [primary, *[m for m in (metrics or []) if m != primary]] if metrics else [primary]
    if metrics is not None:
        if not metrics:
            raise TypeError("calibrate() got metrics=[]; name at least one metric")
        settings.update(metrics=metrics, metric=metrics[0])
    with _speaks_python():
        doc = calibration_study(load(reference, run_map=run_map), load(judge, run_map=run_map), settings, seed=seed)
    return CalibrationResult.from_json(doc)


@contextlib.contextmanager
def _speaks_python() -> Iterator[None]:
    """Errors raised below the API name the keyword to change, not the command-line option (``pass --format``
    -> ``pass format=``, ``--run-map 'x'`` -> ``run_map='x'``)."""
    from metaeval.errors import ConfigError, FormatError

    try:
        yield
    except FormatError as exc:
        msg = _pythonic(exc.message)
        if msg == exc.message:
            raise
        raise FormatError(exc.path, exc.line, exc.field, msg) from None
    except ConfigError as exc:
        msg = _pythonic(str(exc))
        if msg == str(exc):
            raise
        raise ConfigError(msg) from None


def _pythonic(text: str) -> str:
    text = re.sub(r"--([a-z][a-z-]*)\s+(?=['\"])", lambda m: m.group(1).replace("-", "_") + "=", text)
    return re.sub(r"(?<![\w-])--([a-z][a-z-]*)", lambda m: "the keyword " + m.group(1).replace("-", "_") + "=", text)


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
          config_dir: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
          progress: bool = False) -> "SweepResult":
    """Run ``metaeval sweep`` with Hydra ``overrides`` (``["grid=single", "judge=lexical", "name=mine"]``) and return
    a :class:`SweepResult` (its ``json`` is the summary also written to ``results/<name>/summary.json``; a dry run
    has ``dry_run=True`` and the per-cell ``estimates``).

    ``judges`` ({name: Judge subclass or instance}) are registered in the judge catalog, so ``judge=<name>`` or
    ``grid.judges=[<name>]`` can name them like a shipped judge; the sweep then runs with ``runtime=serial`` (in this
    process) unless ``overrides`` choose a runtime.
    """
    from metaeval.workflow.compose import compose_sweep
    from metaeval.workflow.progress import stage_progress
    from metaeval.workflow.sweep import drive_sweep

    if isinstance(overrides, str):
        raise TypeError(f"sweep() takes a list of overrides, got the string {overrides!r}; e.g. sweep([{overrides!r}])")
    overrides = list(overrides)
    for jname, obj in (judges or {}).items():
        register_judge(jname, obj)
    if judges and not any(o.startswith("runtime=") for o in overrides):
        overrides.append("runtime=serial")
    with _speaks_python():
        settings, cells = compose_sweep(overrides, config_dir=config_dir)
        run = drive_sweep(settings, cells, overrides, stage_progress if progress else None)
    root = Path(settings.pipeline.results_dir) / settings.pipeline.name
    if run.summary is None:
        return SweepResult.from_dry_run(str(settings.pipeline.name), root, run.dry_run_cells or [])
    missing = [f"missing figures: {line}" for line in run.missing]  # what the CLI's exit status 5 says
    return SweepResult.from_summary(run.summary, root, closing=[*run.closing, *missing])



def to_latex(df: Any, **kwargs: Any) -> str:
    """A DataFrame (e.g. ``analyze(...).tau`` or ``compare(...)``) as a booktabs LaTeX table; see
    :func:`metaeval.io.latex.to_latex` (``caption``, ``label``, ``digits``, ``columns``, ``index``)."""
    from metaeval.io.latex import to_latex as _to_latex

    return _to_latex(df, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "AnalysisResult":  # defined with the analysis (imports pandas): loaded on first use
        from metaeval.analysis.meta_evaluation import AnalysisResult

        return AnalysisResult
    raise AttributeError(f"module 'metaeval.api' has no attribute {name!r}")
