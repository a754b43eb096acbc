"""The Python API, in the style of ranx / ir_measures: plain functions over files, label sets and DataFrames.

Everything here is also reachable as ``metaeval.<name>`` (imported lazily, so ``import metaeval`` stays fast)::

    import metaeval

    nist = metaeval.load("../shared/data/trec-rag-2024/nugget_assignment.20241108.jl")     # a LabelSet
    per_answer = metaeval.score(nist)                                                       # one row per answer
    runs = metaeval.leaderboard(per_answer)                                                 # one row per run
    res = metaeval.analyze(nist, "judge.jsonl", run_map={"old_run": "new_run"})           # .tau, .descriptive ...
    pairs = metaeval.compare(nist, "judge.jsonl", metrics="V_strict")                      # run pairs, flips
    cal = metaeval.calibrate(nist, "judge.jsonl")                # a CalibrationResult: .leaderboard, .candidates ...
    print(metaeval.to_latex(res.tau), cal.to_latex())

Results are typed: ``analyze`` returns an ``AnalysisResult``, ``calibrate`` a ``CalibrationResult`` and ``sweep`` a
``SweepResult`` (dataclasses of DataFrames with ``.to_latex()``; the JSON document each command writes is ``.json``).
Keyword names are the same everywhere (``metrics``, ``n_boot``, ``seed``, ``run_map``, ``flip_test``); the old
``compare(metric=, test=)`` and ``calibrate(metric=)`` still work with a ``DeprecationWarning``.  Errors name the
keyword to change (``format=``, ``run_map=``), never a command-line option.

Inputs: a path (assignment file, nuggetizer metrics file, score table, folder of ``trec_eval -q`` outputs, or a
sweep cell folder holding ``labels.jsonl``), a ``LabelSet``, or a score DataFrame.  ``run_map`` ({old: new}, or
``"OLD=NEW"`` strings / mapping files as ``--run-map`` takes) renames runs on every input before comparing.
The layers underneath are ``metaeval.io``, ``metaeval.scoring``, ``metaeval.analysis``, ``metaeval.study``.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.analysis.api import AnalysisResult

__all__ = ["load", "load_dataset", "score", "leaderboard", "analyze", "compare", "calibrate", "sweep",
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
    if isinstance(kwargs.get("metrics"), str):  # one metric, as compare(metrics=) takes it
        kwargs["metrics"] = [kwargs["metrics"]]
    with _speaks_python():
        return _analyze(ref, [load(c, run_map=run_map) for c in cands], names=names, **kwargs)


def _display_name(obj: Any, k: int) -> str:
    if isinstance(obj, (str, os.PathLike)):
        return Path(obj).name.split(".")[0]
    return getattr(obj, "name", None) or f"candidate_{k}"


def compare(reference: Any, candidate: Any, *, metrics: "str | Sequence[str]" = "v_strict", run_map: Any = None,
            flip_test: str = "t", alpha: float = 0.05, seed: int = 0, policy: Any = None, **deprecated: Any) -> Any:
    """One row per run pair (``run_a, run_b, ref_diff, cand_diff, p_ref, ref_significant, ref_significant_holm,
    flip``): the reference's mean difference over topics, the candidate's, the reference's paired test over
    topics (``flip_test``: ``t`` or ``wilcoxon``), and whether the candidate orders the pair the other way.
    ``metrics``: one metric (or a list of one), the same keyword as :func:`analyze`'s."""
    _check_keywords("compare", deprecated, ["metric", "test"])
    metrics = _renamed("compare", deprecated, "metric", "metrics", metrics, "v_strict")
    flip_test = _renamed("compare", deprecated, "test", "flip_test", flip_test, "t")
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if len(metrics) != 1:
        raise TypeError(f"compare() compares on one metric; got metrics={metrics!r} (use analyze() for several)")
    res = analyze(reference, candidate, run_map=run_map, metrics=metrics, n_boot=0, flip_test=flip_test, alpha=alpha,
                  seed=seed, policy=policy)
    return res.flip_pairs.drop(columns=["candidate"], errors="ignore").reset_index(drop=True)


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
    repeats, methods, level, min_coverage, n_boot, selection, judge_spec, prompt_version (see
    :func:`metaeval.study.calibration.calibrate_study`)."""
    from metaeval.study.calibration import DEFAULTS, calibrate_study

    known = [k for k in DEFAULTS if k not in ("metric", "metrics")]
    _check_keywords("calibrate", settings, [*known, "judge_spec", "prompt_version", "metric"])
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
        doc = calibrate_study(load(reference, run_map=run_map), load(judge, run_map=run_map), dict(settings),
                              seed=seed)
    return CalibrationResult.from_json(doc)


@dataclass
class CalibrationResult:
    """A calibration study (:func:`calibrate`): tables for a notebook or a paper, the JSON for the record.

    * ``recommendation``: one sentence, on the primary metric (``metric``);
    * ``leaderboard``: one row per (metric, run): the judge's score with its topic-bootstrap CI, the calibrated
      estimate of the human score with its interval (``human_estimate``, ``human_estimate_lo/hi``), their ranks,
      and the human score where topics are human-labelled;
    * ``candidates``: one row per (metric, method): status (ok / failed / refused, with the reason) and the
      held-out (outer-fold) MAE against the human run scores;
    * ``selection``: one row per metric: the method chosen out of fold, raw vs held-out MAE, whether it beats raw;
    * ``model``: the fitted model (``calibration-model.json``, for ``metaeval calibrate apply``);
    * ``json``: the whole ``calibration.json`` document (without the model).
    """

    metric: str
    recommendation: str
    leaderboard: "pd.DataFrame"
    candidates: "pd.DataFrame"
    selection: "pd.DataFrame"
    model: dict[str, Any] = field(repr=False)
    json: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "CalibrationResult":
        """From a ``calibrate_study`` document (with or without its ``model``; also a read ``calibration.json``)."""
        import pandas as pd

        doc = dict(doc)
        model = doc.pop("model", None) or {}
        by_metric = doc.get("by_metric") or {doc.get("metric", "v_strict"): doc}
        lb, cands, sel = [], [], []
        for m, block in by_metric.items():
            for row in _rows(block.get("leaderboard")):
                r = {"metric": m, **{k: v for k, v in row.items() if not k.endswith("_ci")}}
                for k, v in row.items():
                    if k.endswith("_ci"):
                        r[k[:-3] + "_lo"], r[k[:-3] + "_hi"] = (v if isinstance(v, (list, tuple)) and len(v) == 2
                                                                else (None, None))
                lb.append(r)
            for name, c in (block.get("candidates") or {}).items():
                mae = ((c.get("held_out") or {}).get("mae") or {})
                cands.append({"metric": m, "method": name, "level": c.get("level"), "status": c.get("status"),
                              "held_out_mae": mae.get("mean") if isinstance(mae, Mapping) else mae,
                              "reason": c.get("reason")})
            s = block.get("selection") or {}
            sel.append({"metric": m, "method": s.get("method"), "verdict": s.get("verdict"),
                        "raw_mae": (s.get("raw_mae") or {}).get("mean"),
                        "held_out_mae": (s.get("held_out_mae") or {}).get("mean"),
                        "beats_raw": s.get("beats_raw"), "n_topics": s.get("n_topics")})
        return cls(metric=str(doc.get("metric", "v_strict")), recommendation=str(doc.get("recommendation", "")),
                   leaderboard=pd.DataFrame(lb), candidates=pd.DataFrame(cands), selection=pd.DataFrame(sel),
                   model=model, json=doc)

    def to_latex(self, table: str = "leaderboard", metric: str | None = None, **kwargs: Any) -> str:
        """One of the tables (``leaderboard``, ``candidates``, ``selection``) on ``metric`` (default: the primary
        one) as booktabs LaTeX (:func:`to_latex`; ``caption``, ``label``, ``digits``, ``columns``)."""
        df = _table(self, table, ("leaderboard", "candidates", "selection"))
        m = metric or self.metric
        if "metric" in df.columns:
            df = df[df["metric"] == m].drop(columns=["metric"])
        if table == "leaderboard":  # the paper's columns: the judge's score and the calibrated human estimate
            kwargs.setdefault("columns", [c for c in ("run_id", "judge_score", "judge_score_lo", "judge_score_hi",
                                                      "human_estimate", "human_estimate_lo", "human_estimate_hi",
                                                      "human_labelled") if c in df])
        kwargs.setdefault("caption", f"Calibration of {self.json.get('judge', 'the judge')} against "
                                     f"{self.json.get('reference', 'the reference')}: {table} on {m}.")
        return to_latex(df.reset_index(drop=True), **kwargs)

    def write(self, out_dir: str | os.PathLike) -> list[Path]:
        """``calibration.json`` and ``calibration-model.json`` into ``out_dir`` (as ``metaeval calibrate``)."""
        import json

        from metaeval.io.atomic import atomic_write_text

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "calibration.json", out / "calibration-model.json"]
        for path, doc in zip(paths, (self.json, self.model)):
            atomic_write_text(path, json.dumps(doc, indent=1, allow_nan=False) + "\n")
        return paths

    def __getitem__(self, key: str) -> Any:
        """The old dict access (``result["recommendation"]``): the JSON document's key, with a DeprecationWarning."""
        warnings.warn("calibrate() returns a CalibrationResult; use its attributes, or .json[key] for the document",
                      DeprecationWarning, stacklevel=2)
        return self.model if key == "model" else self.json[key]


def _rows(block: Any) -> list[dict[str, Any]]:
    """A leaderboard block as rows: a list of rows, or a mapping holding ``rows``."""
    if isinstance(block, Mapping):
        block = block.get("rows") or []
    return [dict(r) for r in block or [] if isinstance(r, Mapping)]


def _table(result: Any, table: str, names: Sequence[str]) -> "pd.DataFrame":
    if table not in names:
        raise TypeError(f"to_latex(table={table!r}): expected one of {', '.join(names)}")
    return getattr(result, table)


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
    from metaeval.commands.compose import compose_sweep
    from metaeval.commands.driver import drive_sweep
    from metaeval.commands.progress import stage_progress

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
    return SweepResult.from_json(run.summary, root, closing=run.closing)


@dataclass
class SweepResult:
    """A finished sweep (:func:`sweep`).

    * ``cells``: one row per grid cell: ``cell, judge, prompt, strategy, status`` (``ok``, ``skipped`` or
      ``withheld``: FAILED share over ``sweep.max_failed_rate``, no figures) with ``reason``; ``labels,
      failed_labels, failure_rate``; usage (``judge_calls, calls, cost_usd``); Kendall's tau of the judge's run
      ranking against the reference's on the primary metric at run level, topic-averaged and pooled
      (``tau_run, tau_run_lo, tau_run_hi`` ...: 95% topic-bootstrap intervals); calibration's choice made out of
      fold (``calibration_method``) with the raw and held-out run MAE;
    * ``estimates`` (dry run only): calls, tokens and USD per cell;
    * ``notes``: grid lines (judges left out, with the install command) and the report's closing lines (verdict,
      where ``report.html`` is);
    * ``path``: the results folder; ``json``: ``summary.json`` (None for a dry run).
    """

    name: str
    path: Path
    metric: str
    cells: "pd.DataFrame"
    dry_run: bool = False
    estimates: "pd.DataFrame | None" = None
    notes: list[str] = field(default_factory=list)
    json: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def report(self) -> Path | None:
        """``report.html`` of the results folder, when the report was written."""
        p = self.path / "report.html"
        return p if p.exists() else None

    @classmethod
    def from_json(cls, summary: Mapping[str, Any], path: str | os.PathLike,
                  closing: Sequence[str] = ()) -> "SweepResult":
        """From a ``summary.json`` document (also one read back from a results folder)."""
        import pandas as pd

        metrics = (((summary.get("config") or {}).get("analysis") or {}).get("metrics")) or ["v_strict"]
        metric = str(metrics[0])
        rows = [_cell_row(c, metric) for c in summary.get("cells", [])]
        return cls(name=str(summary.get("experiment")), path=Path(path), metric=metric, cells=pd.DataFrame(rows),
                   notes=[*summary.get("grid_notes", []), *closing], json=dict(summary))

    @classmethod
    def from_dry_run(cls, name: str, path: str | os.PathLike, cells: Sequence[Mapping[str, Any]]) -> "SweepResult":
        import pandas as pd

        rows, est = [], []
        for c in cells:
            rows.append({"cell": c.get("cell"), "judge": c.get("judge"), "prompt": c.get("prompt"),
                         "strategy": c.get("strategy"), "status": "skipped" if c.get("skipped") else "planned",
                         "reason": c.get("skipped")})
            st = c.get("stats") or {}
            if not c.get("skipped"):
                est.append({"cell": c.get("cell"), "calls": st.get("est_calls"),
                            "calls_upper_bound": bool(st.get("est_bound")), "input_tokens": st.get("est_input_tokens"),
                            "output_tokens": st.get("est_output_tokens"), "est_usd": st.get("est_cost_usd")})
        return cls(name=name, path=Path(path), metric="v_strict", cells=pd.DataFrame(rows), dry_run=True,
                   estimates=pd.DataFrame(est))

    def to_latex(self, **kwargs: Any) -> str:
        """The cells' tau and calibration columns (the estimates for a dry run) as booktabs LaTeX (:func:`to_latex`)."""
        if self.dry_run:
            return to_latex(self.estimates, **kwargs)
        cols = [c for c in ("cell", "status", "failure_rate", "tau_run", "tau_run_lo", "tau_run_hi", "tau_topic_avg",
                            "tau_pooled", "calibration_method", "raw_mae", "calibrated_mae") if c in self.cells]
        kwargs.setdefault("columns", cols)
        kwargs.setdefault("caption", f"Sweep {self.name}: Kendall's tau of each cell's run ranking against the "
                                     f"reference on {self.metric} (95% topic-bootstrap interval), and calibration.")
        return to_latex(self.cells, **kwargs)

    def __getitem__(self, key: str) -> Any:
        """The old dict access (``result["cells"]``): the summary's key, with a DeprecationWarning."""
        warnings.warn("sweep() returns a SweepResult; use its attributes, or .json[key] for summary.json",
                      DeprecationWarning, stacklevel=2)
        if self.json is None:
            return {"dry_run": True, "cells": self.estimates}[key]
        return self.json[key]


def _cell_row(c: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """One summary cell as a flat row (see :class:`SweepResult`)."""
    st = c.get("stats") or {}
    status = "skipped" if c.get("skipped") else "withheld" if c.get("withheld") else "ok"
    row: dict[str, Any] = {"cell": c.get("cell"), "judge": c.get("judge"), "prompt": c.get("prompt"),
                           "strategy": c.get("strategy"), "status": status,
                           "reason": c.get("skipped") or c.get("withheld"),
                           "labels": c.get("labels"), "failed_labels": c.get("failed_labels"),
                           "failure_rate": c.get("failure_rate"), "judge_calls": st.get("judge_calls"),
                           "calls": st.get("calls"), "cost_usd": st.get("cost_usd")}
    block = (((c.get("analysis") or {}).get("metrics") or {}).get(metric)) or {}
    for level, col in (("run", "tau_run"), ("topic_avg", "tau_topic_avg"), ("pooled", "tau_pooled")):
        b = block.get(level) or {}
        ci = b.get("ci") or (None, None)
        row[col], row[col + "_lo"], row[col + "_hi"] = b.get("tau"), ci[0], ci[1]
    sel = (c.get("calibration") or {}).get("selection") or {}
    row["calibration_method"] = sel.get("method")
    row["raw_mae"] = (sel.get("raw_mae") or {}).get("mean")
    row["calibrated_mae"] = (sel.get("held_out_mae") or {}).get("mean")
    return row


def to_latex(df: Any, **kwargs: Any) -> str:
    """A DataFrame (e.g. ``analyze(...).tau`` or ``compare(...)``) as a booktabs LaTeX table; see
    :func:`metaeval.io.latex.to_latex` (``caption``, ``label``, ``digits``, ``columns``, ``index``)."""
    from metaeval.io.latex import to_latex as _to_latex

    return _to_latex(df, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "AnalysisResult":  # defined with the analysis (imports pandas): loaded on first use
        from metaeval.analysis.api import AnalysisResult

        return AnalysisResult
    raise AttributeError(f"module 'metaeval.api' has no attribute {name!r}")
