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
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from metaeval.errors import ConfigError, FormatError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet

log = logging.getLogger(__name__)

SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
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


def link_in_path(path: str | os.PathLike, root: str | os.PathLike | None = None) -> Path | None:
    """The first component of ``path`` at or below ``root`` that is a symbolic link (``None`` when there is none).

    ``root`` (a results folder, or ``results_dir``) and the folders above it are the user's to arrange; below it
    every component must be a real folder or file, so nothing metaeval writes there goes through a link to a place
    outside.  Without ``root`` only ``path`` itself is checked."""
    p = Path(os.path.abspath(path))
    parts: list[Path] = [p]
    if root is not None:
        r = Path(os.path.abspath(root))
        q = p.parent
        while q != r and r in q.parents:
            parts.append(q)
            q = q.parent
        if q == r:
            parts.append(r)
    for part in reversed(parts):
        try:
            if os.path.islink(part):
                return part
        except OSError:  # pragma: no cover - islink does not raise
            return None
    return None


def refuse_links(path: str | os.PathLike, root: str | os.PathLike | None = None) -> None:
    """One-line ``OutputError`` when ``path`` (or a component of it below ``root``) is a symbolic link."""
    link = link_in_path(path, root)
    if link is not None:
        from metaeval.io.outputs import OutputError

        try:
            target = os.readlink(link)
        except OSError:
            target = "?"
        raise OutputError(f"{link} is a symbolic link (to {target}); metaeval never writes through a link in a "
                          "results folder or cache: remove the link (or choose another name=)")


def open_nofollow(path: str | os.PathLike, flags: int, mode: int = 0o644, *,
                  root: str | os.PathLike | None = None) -> int:
    """``os.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)`` after :func:`refuse_links`; a link found only by
    the kernel (one made between the check and the open: ``ELOOP``) gets the same one line."""
    import errno

    refuse_links(path, root)
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        from metaeval.io.outputs import OutputError, os_error_line

        if exc.errno == errno.ELOOP:
            refuse_links(path, root)
            raise OutputError(f"{path} is a symbolic link; metaeval never writes through a link in a results "
                              "folder or cache: remove the link") from None
        raise OutputError(os_error_line(exc, path)) from None


def _in_folder(relpath: str, doc: str) -> property:
    """A property: the path ``relpath`` inside the results folder."""
    return property(lambda self: self.root / relpath, doc=f"``{relpath}``: {doc}.")


def _in_cell(name: str, doc: str) -> Callable[[Any, Any], Path]:
    """A method ``(cid) -> Path``: the file ``name`` in the cell's folder ``cells/<cid>/``."""
    def path(self: "ResultsLayout", cid: Any) -> Path:
        return self.cell_dir(cid) / name

    path.__doc__ = f"``cells/<cid>/{name}``: {doc}."
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

    # ------------------------------------------------------------------ the folder's files, one line each
    jobs = _in_folder("jobs.jsonl", "results store: one JSON line per finished job (``pipeline.store``)")
    quarantine = _in_folder("jobs.quarantine.jsonl", "unreadable lines moved out of jobs.jsonl, with their numbers")
    lock = _in_folder(".lock", "one sweep at a time per folder")
    config_yaml = _in_folder("config.yaml", "the composed configuration")
    overrides_yaml = _in_folder("overrides.yaml", "the command-line overrides composed into config.yaml")
    fingerprint = _in_folder("fingerprint.json", "dataset and grid fingerprints (``check_fingerprint``)")
    summary_json = _in_folder("summary.json", "the study's summary (cells, usage, analysis, calibration)")
    summary_md = _in_folder("summary.md", "the summary as Markdown")
    analysis_dir = _in_folder("analysis", "``metaeval.analysis`` outputs (every cell against the reference)")
    study_dir = _in_folder("study", "the study's figures for the report (study.json, reference scores, plan)")
    cells_dir = _in_folder("cells", "one folder per grid cell")
    probe_dir = _in_folder("probe", "prompt-injection probe results (``metaeval probe --out``) the report shows")
    report_html = _in_folder("report.html", "the self-contained report page")
    report_md = _in_folder("report.md", "the report as Markdown (figures in report_files/)")
    report_json = _in_folder("report.json", "every number of the report, and the verdict")
    report_files = _in_folder("report_files", "the report's figures (SVG/PNG)")
    # study outputs (written by metaeval.study, rendered by metaeval.report)
    reference_scores = _in_folder("study/reference_scores.csv",
                                  "per-answer scores of the reference labels (``qid, run_id`` + one column per metric)")
    reference_runs = _in_folder("study/reference_runs.csv", "run scores of the reference labels")
    study_json = _in_folder("study/study.json",
                            "per-cell figures the report renders: per-topic tau, leaderboards, disagreements")

    # ------------------------------------------------------------------ a cell's files, one line each
    def cell_dir(self, cid: Any) -> Path:
        """``cells/<cid>/`` (``cid`` checked as a slug; the path must stay inside results_dir)."""
        check_slug(cid, "cell")
        return _inside(self._base, self.cells_dir / str(cid), "cell")

    labels = _in_cell("labels.jsonl", "the cell's judge labels (NIST assignment JSONL; draw 0 with samples)")
    scores = _in_cell("scores.csv", "per-answer scores of the cell's labels")
    runs = _in_cell("runs.csv", "run scores of the cell's labels")
    calibration = _in_cell("calibration.json", "the cell's calibration result")
    calibration_model = _in_cell("calibration-model.json", "the fitted calibration model (``calibrate apply``)")
    transcripts = _in_cell("transcripts.jsonl", "one record per judge unit: prompts, raw replies, parsed labels")
    transcript_view = _in_cell("transcript_view.json", "the study's join of the transcripts with the human labels "
                               "(``metaeval.study.transcript_view``)")
    transcript_viewer = _in_cell("transcripts.html", "the cell's offline transcript viewer page (``metaeval.report.viewer``)")
    consistency = _in_cell("consistency.json",
                           "the judge's self-consistency over its k draws (``metaeval.study.consistency``)")

    def sample_labels(self, cid: Any, sample: int) -> Path:
        """Draw ``sample`` (>= 1) of the cell's judge (``sweep.samples``); draw 0 is ``labels(cid)``."""
        if int(sample) < 1:
            raise ValueError(f"sample {sample}: draw 0 is labels.jsonl")
        return self.cell_dir(cid) / "samples" / f"labels.s{int(sample)}.jsonl"

    # ------------------------------------------------------------------ generic readers / writers
    def write_text(self, path: Path, text: str) -> Path:
        """Atomic text write of ``path`` (which must lie inside the folder); OS errors -> one-line ``OutputError``."""
        return self._write(path, "w", text)

    def write_bytes(self, path: Path, data: bytes) -> Path:
        """Atomic bytes write of ``path`` (which must lie inside the folder)."""
        return self._write(path, "wb", data)

    def write_lines(self, path: Path, lines: Iterable[str]) -> Path:
        """Atomic text write of ``path`` from an iterable of lines (each with its newline), written as they come."""
        return self._write(path, "w", lines)

    def _write(self, path: Path, mode: str, content: str | bytes | Iterable[str]) -> Path:
        from metaeval.io.atomic import atomic_open

        _inside(self._base, path, "write")
        with atomic_open(path, mode) as fh:
            if isinstance(content, (str, bytes)):
                fh.write(content)
            else:
                fh.writelines(content)
        return path

    def write_json(self, path: Path, obj: Any, indent: int | None = 2) -> Path:
        """JSON (NaN/inf become null via ``to_jsonable``; never invalid JSON)."""
        return self.write_text(path, self.json_text(obj, indent) + "\n")

    @staticmethod
    def json_text(obj: Any, indent: int | None = 2, html_safe: bool = False) -> str:
        """The text :meth:`write_json` writes for ``obj`` (without the final newline); ``html_safe``: every ``<``
        written ``\\u003c`` (the same character in JSON), so that the text can sit inside an HTML script element."""
        from metaeval.io.jsonl import to_jsonable

        text = json.dumps(to_jsonable(obj), indent=indent, allow_nan=False)
        return text.replace("<", "\\u003c") if html_safe else text

    @staticmethod
    def read_json(path: Path, required: bool = True) -> Any:
        if not path.exists():
            if required:
                raise FormatError(str(path), 0, "", "no such file")
            return None
        return ResultsLayout.read_json_text(path)[0]

    @staticmethod
    def read_json_text(path: Path) -> tuple[Any, str]:
        """``(value, text)`` of a JSON file: its parsed value and the text it was parsed from (a reader that embeds
        the document as it is, the report's transcript viewer, need not encode it again); the errors of
        :meth:`read_json`."""
        try:
            text = path.read_text(encoding="utf-8-sig")
            return json.loads(text), text
        except FileNotFoundError:
            raise FormatError(str(path), 0, "", "no such file") from None
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
    def write_summary(self, summary: dict[str, Any], markdown: str | None = None) -> None:
        """``summary.json`` (the JSON of a :class:`metaeval.study.records.Summary`, which carries its own ``format``
        and ``schema_version``; read it back with :func:`metaeval.study.records.read_summary`) and ``summary.md``."""
        self.write_json(self.summary_json, summary)
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
        # streamed record by record into the atomic file: the whole file is never one string in memory (it set
        # the study's peak RSS: 1.2 GB at 64x NIST, issue 34)
        return self.write_lines(p, (json.dumps(r, ensure_ascii=False) + "\n" for r in assignment_records(labels)))

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

    def write_calibration(self, cid: Any, result: dict[str, Any]) -> Path:
        return self.write_json(self.calibration(cid), result)

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
    """deployment name -> base_url ('' for the SDK default) of every judge in a results folder's saved
    ``config.yaml`` (a stored document: the typed deployments written down by ``JudgeSpec.public_dict``)."""
    out: dict[str, str] = {}
    for j in ((config or {}).get("judges") or {}).values() if isinstance(config, dict) else ():
        dep = j.get("deployment") if isinstance(j, dict) else None
        if isinstance(dep, dict) and dep.get("name"):
            out[str(dep["name"])] = str(dep.get("base_url") or "")
    return out


def endpoint_changes(layout: ResultsLayout, urls: Mapping[str, str | None]) -> list[str]:
    """One line per deployment (``urls``: name -> base_url of this sweep's typed deployments, None for the SDK
    default) whose ``base_url`` differs from the one in the folder's saved ``config.yaml``,
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
    before, now = deployment_urls(old), {str(k): str(v or "") for k, v in urls.items()}
    return [f"deployment {name!r}: the stored jobs in {layout.root} were made against {before[name] or 'the SDK default URL'}; "
            f"this sweep points at {url or 'the SDK default URL'}: they are reused as they are (the URL is not part of "
            f"a job's identity); set the deployment's revision to judge again on the new server"
            for name, url in now.items() if name in before and before[name] != url]
