"""The one module that owns a results folder, ``<results_dir>/<name>/``: its paths, schemas, readers and writers.

Everything that reads or writes a sweep's results goes through :class:`ResultsLayout` (the store, the sweep, the
study, the report, ``metaeval assess``), so the file names below are written down once::

    <results_dir>/<name>/
      jobs.jsonl               results store: one JSON line per finished job (pipeline.store)
      jobs.quarantine.jsonl    unreadable lines moved out of jobs.jsonl, with their line numbers
      .lock                    one sweep at a time per folder
      config.yaml              the composed configuration;  overrides.yaml: the command-line overrides
      fingerprint.json         dataset and grid fingerprints (a sweep of another dataset/grid is refused)
      summary.json, summary.md the study's summary (cells, usage, analysis and calibration per cell)
      analysis/                metaeval.analysis outputs (every cell against the reference)
      study/                   study.json (per-topic tau, leaderboards, disagreements), reference_scores.csv,
                               reference_runs.csv (study -> report); plan.json/.md (``metaeval plan --results``)
      cells/<cell>/            labels.jsonl, scores.csv, runs.csv, calibration.json, calibration-model.json,
                               transcripts.jsonl; with ``sweep.samples`` k > 1: samples/labels.s<i>.jsonl
                               (draws 1..k-1; draw 0 is labels.jsonl) and consistency.json
      report.html, report.md, report.json, report_files/
      probe/*.json             prompt-injection probe results shown by the report

Names are slugs (``[A-Za-z0-9][A-Za-z0-9._-]{0,99}``, no ``..``): ``name`` and cell ids are validated and every
resolved path must stay inside ``results_dir``; anything else is a one-line ``ConfigError`` (nothing is written).
Writes are atomic (a uniquely named temporary file in the same folder, then ``os.replace``).

Layering: this module sits with ``metaeval.io`` and imports only core modules and ``io``.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from metaeval.errors import ConfigError, FormatError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet

log = logging.getLogger(__name__)

SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
SUMMARY_FORMAT = "metaeval-summary"
FINGERPRINT_FORMAT = "metaeval-fingerprint"


def check_slug(value: Any, what: str = "name") -> str:
    """``value`` as a slug, or ``ConfigError`` naming ``what`` (``name``, ``cell``...)."""
    s = "" if value is None else str(value)
    if not SLUG.fullmatch(s) or ".." in s:
        shown = repr(s) if len(s) <= 60 else repr(s[:57] + "...")
        raise ConfigError(f"{what}={shown} is not a valid name: use 1-100 letters, digits, '.', '_' or '-', "
                          "starting with a letter or digit, without '..' or '/'")
    return s


def slugify(value: Any, max_len: int = 100) -> str:
    """A slug made from any text (unsafe characters become '-'); for names derived from user input."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", str(value)).replace("..", "-")
    s = re.sub(r"-{2,}", "-", s).strip("-._")[:max_len].rstrip("-._")
    return s or "x"


def _inside(root: Path, path: Path, what: str) -> Path:
    r = path.resolve()
    if r != root and root not in r.parents:
        raise ConfigError(f"{what}: {path} resolves outside {root}; results must stay inside results_dir")
    return path


class ResultsLayout:
    """Paths, readers and writers of ``<results_dir>/<name>/``.

    ``ResultsLayout(results_dir, name)`` validates ``name``; ``ResultsLayout.open(path)`` opens an existing
    folder given by its path (the report's and assess' argument).  Nothing is created until a writer runs or
    :meth:`ensure` is called.
    """

    def __init__(self, results_dir: str | os.PathLike, name: Any):
        check_slug(name, "name")
        self.results_dir = Path(results_dir)
        self.name = str(name)
        self._base = self.results_dir.resolve()
        self.root = _inside(self._base, self.results_dir / self.name, "name")

    @classmethod
    def open(cls, path: str | os.PathLike) -> "ResultsLayout":
        """An existing results folder named by its path (``results/demo``)."""
        p = Path(path)
        if not p.is_dir():
            raise ConfigError(f"{p}: not a folder (expected a sweep's results folder holding summary.json)")
        rp = p.resolve()
        self = cls.__new__(cls)
        self.results_dir, self.name, self._base = rp.parent, rp.name, rp.parent
        self.root = p
        return self

    def __repr__(self) -> str:
        return f"ResultsLayout({str(self.root)!r})"

    def ensure(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        return self.root

    # ------------------------------------------------------------------ folder-level paths
    @property
    def jobs(self) -> Path:
        return self.root / "jobs.jsonl"

    @property
    def quarantine(self) -> Path:
        return self.root / "jobs.quarantine.jsonl"

    @property
    def lock(self) -> Path:
        return self.root / ".lock"

    @property
    def config_yaml(self) -> Path:
        return self.root / "config.yaml"

    @property
    def overrides_yaml(self) -> Path:
        return self.root / "overrides.yaml"

    @property
    def fingerprint(self) -> Path:
        return self.root / "fingerprint.json"

    @property
    def summary_json(self) -> Path:
        return self.root / "summary.json"

    @property
    def summary_md(self) -> Path:
        return self.root / "summary.md"

    @property
    def analysis_dir(self) -> Path:
        return self.root / "analysis"

    @property
    def study_dir(self) -> Path:
        return self.root / "study"

    @property
    def cells_dir(self) -> Path:
        return self.root / "cells"

    @property
    def probe_dir(self) -> Path:
        return self.root / "probe"

    @property
    def report_html(self) -> Path:
        return self.root / "report.html"

    @property
    def report_md(self) -> Path:
        return self.root / "report.md"

    @property
    def report_json(self) -> Path:
        return self.root / "report.json"

    @property
    def report_files(self) -> Path:
        return self.root / "report_files"

    # study outputs (written by metaeval.study, rendered by metaeval.report)
    @property
    def reference_scores(self) -> Path:
        """Per-answer scores of the reference labels (``qid, run_id`` + one column per metric)."""
        return self.study_dir / "reference_scores.csv"

    @property
    def reference_runs(self) -> Path:
        return self.study_dir / "reference_runs.csv"

    @property
    def study_json(self) -> Path:
        """Per-cell figures the report renders: per-topic tau, leaderboards, disagreements (``study/study.json``)."""
        return self.study_dir / "study.json"

    # ------------------------------------------------------------------ per-cell paths
    def cell_dir(self, cid: Any) -> Path:
        check_slug(cid, "cell")
        return _inside(self._base, self.cells_dir / str(cid), "cell")

    def labels(self, cid: Any) -> Path:
        return self.cell_dir(cid) / "labels.jsonl"

    def scores(self, cid: Any) -> Path:
        return self.cell_dir(cid) / "scores.csv"

    def runs(self, cid: Any) -> Path:
        return self.cell_dir(cid) / "runs.csv"

    def calibration(self, cid: Any) -> Path:
        return self.cell_dir(cid) / "calibration.json"

    def calibration_model(self, cid: Any) -> Path:
        return self.cell_dir(cid) / "calibration-model.json"

    def transcripts(self, cid: Any) -> Path:
        return self.cell_dir(cid) / "transcripts.jsonl"

    def transcript_view(self, cid: Any) -> Path:
        """The study's join of the transcripts with the human labels (``metaeval.study.transcript_view``)."""
        return self.cell_dir(cid) / "transcript_view.json"

    def transcript_viewer(self, cid: Any) -> Path:
        """The cell's offline transcript viewer page (``metaeval.report.viewer``)."""
        return self.cell_dir(cid) / "transcripts.html"

    def sample_labels(self, cid: Any, sample: int) -> Path:
        """Draw ``sample`` (>= 1) of the cell's judge (``sweep.samples``); draw 0 is ``labels(cid)``."""
        if int(sample) < 1:
            raise ValueError(f"sample {sample}: draw 0 is labels.jsonl")
        return self.cell_dir(cid) / "samples" / f"labels.s{int(sample)}.jsonl"

    def consistency(self, cid: Any) -> Path:
        """The judge's self-consistency over its k draws (``metaeval.study.consistency``)."""
        return self.cell_dir(cid) / "consistency.json"

    # ------------------------------------------------------------------ generic readers / writers
    def write_text(self, path: Path, text: str) -> Path:
        """Atomic text write of ``path`` (which must lie inside the folder); OS errors -> one-line ``OutputError``."""
        from metaeval.io.atomic import atomic_write_text

        _inside(self._base, path, "write")
        atomic_write_text(path, text)
        return path

    def write_bytes(self, path: Path, data: bytes) -> Path:
        from metaeval.io.atomic import atomic_write_bytes

        _inside(self._base, path, "write")
        atomic_write_bytes(path, data)
        return path

    def write_json(self, path: Path, obj: Any, indent: int | None = 2) -> Path:
        """JSON (NaN/inf become null via ``to_jsonable``; never invalid JSON)."""
        from metaeval.io.jsonl import to_jsonable

        return self.write_text(path, json.dumps(to_jsonable(obj), indent=indent, allow_nan=False) + "\n")

    @staticmethod
    def read_json(path: Path, required: bool = True) -> Any:
        if not path.exists():
            if required:
                raise FormatError(str(path), 0, "", "no such file")
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8-sig"))
        except json.JSONDecodeError as exc:
            raise FormatError(str(path), exc.lineno, "", f"not valid JSON: {exc.msg}") from None
        except UnicodeDecodeError as exc:
            raise FormatError(str(path), 0, "", f"not UTF-8 ({exc.reason})") from None

    def write_table(self, path: Path, df: "pd.DataFrame") -> Path:
        from metaeval.io.scores import write_table

        _inside(self._base, path, "write")
        write_table(df, path)
        return path

    @staticmethod
    def read_table(path: Path, required: bool = False) -> "pd.DataFrame | None":
        from metaeval.io.scores import read_table

        if not path.exists():
            if required:
                raise FormatError(str(path), 0, "", "no such file")
            return None
        return read_table(path)

    # ------------------------------------------------------------------ typed readers / writers
    def read_summary(self) -> dict[str, Any]:
        """``summary.json`` checked as a sweep summary (an object with a list of cells); a dry run is refused."""
        f = self.summary_json
        if not f.exists():
            subs = sorted(q.parent.name for q in self.root.glob("*/summary.json"))
            hint = f"; did you mean {', '.join(str(self.root / s) for s in subs)}?" if subs else "; run `metaeval sweep` first"
            raise ConfigError(f"{self.root}: no summary.json{hint}")
        summary = self.read_json(f)
        if not isinstance(summary, dict) or not isinstance(summary.get("cells"), list):
            raise FormatError(str(f), 1, "cells", "expected an object with a list of cells (a metaeval sweep summary)")
        if summary.get("dry_run"):
            raise ConfigError(f"{f}: a dry run; there is nothing to report")
        return summary

    def write_summary(self, summary: dict[str, Any], markdown: str | None = None) -> None:
        self.write_json(self.summary_json, {"format": SUMMARY_FORMAT, **summary})
        if markdown is not None:
            self.write_text(self.summary_md, markdown)

    def read_labels(self, cid: Any) -> "LabelSet | None":
        from metaeval.io.assignments import read_assignments

        p = self.labels(cid)
        return read_assignments(p, name=str(cid)) if p.exists() else None

    def write_labels(self, cid: Any, labels: "LabelSet", sample: int = 0) -> Path:
        """``labels.jsonl`` (``sample`` 0) or ``samples/labels.s<sample>.jsonl``: NIST assignment JSONL."""
        from metaeval.io.assignments import assignment_records

        p = self.sample_labels(cid, sample) if sample else self.labels(cid)
        p.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in assignment_records(labels))
        return self.write_text(p, body)

    def read_samples(self, cid: Any) -> "list[LabelSet]":
        """The cell's k draws (``labels.jsonl`` then ``samples/labels.s1..``), or [] without sample files."""
        from metaeval.io.assignments import read_assignments

        first = self.labels(cid)
        if not first.exists() or not self.sample_labels(cid, 1).exists():
            return []
        out = [read_assignments(first, name=str(cid))]
        k = 1
        while self.sample_labels(cid, k).exists():
            out.append(read_assignments(self.sample_labels(cid, k), name=f"{cid}~s{k}"))
            k += 1
        return out

    def read_calibration(self, cid: Any) -> dict[str, Any] | None:
        return self.read_json(self.calibration(cid), required=False)

    def write_calibration(self, cid: Any, result: dict[str, Any]) -> Path:
        return self.write_json(self.calibration(cid), result)

    def cell_ids(self) -> list[str]:
        """Cells with a folder under ``cells/`` (sorted)."""
        if not self.cells_dir.is_dir():
            return []
        return sorted(p.name for p in self.cells_dir.iterdir() if p.is_dir() and SLUG.fullmatch(p.name))

    def iter_jobs(self) -> Iterator[dict[str, Any]]:
        """Every readable record of ``jobs.jsonl`` in file order (read-only; blank and unreadable lines are
        skipped with a warning - the store, not readers, moves them to the quarantine file)."""
        if not self.jobs.exists():
            return
        bad = 0
        with open(self.jobs, "rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    rec = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    rec = None
                if not isinstance(rec, dict) or not isinstance(rec.get("spec"), dict) or "key" not in rec:
                    bad += 1
                    if bad == 1:
                        log.warning("%s:%d: not a job record; skipped", self.jobs, lineno)
                    continue
                yield rec
        if bad > 1:
            log.warning("%s: %d line(s) were not job records and were skipped", self.jobs, bad)

    def job_records(self) -> dict[str, dict[str, Any]]:
        """key -> the last record for that key (a later record of a job supersedes an earlier one)."""
        return {rec["key"]: rec for rec in self.iter_jobs()}

    # ------------------------------------------------------------------ fingerprint
    def holds_results(self) -> bool:
        """Whether a sweep stored anything here: a non-empty ``jobs.jsonl`` or a ``summary.json``."""
        try:
            return (self.jobs.exists() and self.jobs.stat().st_size > 0) or self.summary_json.exists()
        except OSError:
            return True  # cannot tell: protect the folder

    def read_fingerprint(self) -> dict[str, Any] | None:
        return self.read_json(self.fingerprint, required=False)

    def check_fingerprint(self, dataset_fp: str | None, grid_fp: str | None = None, *, write: bool = True) -> None:
        """Refuse (``ConfigError``, one line suggesting ``name=...``) when this folder holds results of another
        dataset or grid; otherwise record the fingerprints (when ``write`` and none is stored yet).  A folder
        without results (``holds_results`` False: an earlier run failed before storing a job) never refuses.

        A folder with results but no fingerprint file (made before fingerprints existed) is adopted.
        ``None`` skips that part of the comparison."""
        stored = self.read_fingerprint()
        if stored is not None and not self.holds_results():
            # a run that failed before storing anything (a typo in dataset.source...) must not block the corrected
            # retry: with no job and no summary there is nothing to protect, so the new fingerprints replace it
            if write:
                self.write_json(self.fingerprint, {"format": FINGERPRINT_FORMAT, "dataset": dataset_fp, "grid": grid_fp})
            return
        if stored is not None:
            for what, new in (("dataset", dataset_fp), ("grid", grid_fp)):
                old = stored.get(what)
                if new is not None and old is not None and str(old) != str(new):
                    raise ConfigError(
                        f"{self.root} holds results of another {what} ({what} fingerprint {str(old)[:12]}, this sweep "
                        f"{str(new)[:12]}); choose another folder with name=<new-name> or delete {self.root}")
            if not write:
                return
            merged = {**stored, **{k: v for k, v in (("dataset", dataset_fp), ("grid", grid_fp)) if v is not None}}
            if merged != stored:
                self.write_json(self.fingerprint, merged)
            return
        if write:
            self.write_json(self.fingerprint, {"format": FINGERPRINT_FORMAT, "dataset": dataset_fp, "grid": grid_fp})


def deployment_urls(config: Any) -> dict[str, str]:
    """deployment name -> base_url ('' for the SDK default) of every judge in a saved or composed config."""
    out: dict[str, str] = {}
    for j in ((config or {}).get("judges") or {}).values() if isinstance(config, dict) else ():
        dep = j.get("deployment") if isinstance(j, dict) else None
        if isinstance(dep, dict) and dep.get("name"):
            out[str(dep["name"])] = str(dep.get("base_url") or "")
    return out


def endpoint_changes(layout: ResultsLayout, config: dict[str, Any]) -> list[str]:
    """One line per deployment whose ``base_url`` differs from the one in the folder's saved ``config.yaml``,
    when the folder holds results: its stored jobs are reused as they are (the URL is not part of a job's
    identity or of the response cache key, so a replay at another URL reproduces a run); ``deployment.revision``
    keeps two servers' results apart.  [] for a new folder or unchanged URLs."""
    if not layout.holds_results() or not layout.config_yaml.exists():
        return []
    import yaml

    try:
        old = yaml.safe_load(layout.config_yaml.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return []
    before, now = deployment_urls(old), deployment_urls(config)
    return [f"deployment {name!r}: the stored jobs in {layout.root} were made against {before[name] or 'the SDK default URL'}; "
            f"this sweep points at {url or 'the SDK default URL'}: they are reused as they are (the URL is not part of "
            f"a job's identity); set the deployment's revision to judge again on the new server"
            for name, url in now.items() if name in before and before[name] != url]


def results_layout(config: dict[str, Any]) -> ResultsLayout:
    """The layout named by a sweep configuration (``results_dir`` and ``name``)."""
    return ResultsLayout(config.get("results_dir", "results"), config.get("name", "default"))
