"""Readers and writers for the file formats metaeval speaks: THE format registry and its one dispatcher.

Formats (``REGISTRY``, in detection order; ``register_format`` adds one):

==============  ===========================================================================  ==================
name            what                                                                          reader
==============  ===========================================================================  ==================
assignments     NIST nugget-assignment JSONL / nuggetizer assignment output (labels)          ``read_assignments``
nuggets         nuggetizer nugget-creation output ``{qid, query, nuggets:[{text, importance}]}``  ``read_nuggets``
answers         TREC RAG 2024 answer runs                                                     ``read_answers``
metrics         nuggetizer per-topic metrics JSONL                                            ``read_metrics``
topics          TREC topics TSV ``qid<TAB>text``                                              ``read_topics``
qrels           TREC qrels ``qid iter docid grade``                                           ``read_qrels``
scores          score table CSV/TSV/Parquet/JSONL (long ``run_id,qid,metric,value`` or wide)   ``read_score_table``
documents       document collection JSONL (never detected: named by a dataset layout)         ``read_documents``
==============  ===========================================================================  ==================

Each format is one ``FileFormat``: its reader, how it is recognised (file-name ``suffixes``, checked first, then a
``sniff`` of the first non-blank line), the part of a dataset it fills (``role``: ``metaeval.data.dataset`` places
it) and, for label and score files, how meta-evaluation reads it (``evaluate``).  Every reader of the package
dispatches here: ``read`` (any format), ``read_evaluable`` (labels or scores: ``metaeval.analysis``, the Python
API), ``detect_format`` and ``load_labels``; the dataset loaders place what ``read`` returns by the format's role.
A format defined outside the package (a module calling ``register_format``) is detected, read and loaded the same
way.  ``detect_format`` raises ``FormatError`` when a file is ambiguous, and every command accepts ``--format`` to
override it.
"""

from __future__ import annotations

import importlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from metaeval.errors import FormatError

#: the parts of a dataset a format may fill (``metaeval.data.dataset`` places each)
ROLES: tuple[str, ...] = ("topics", "qrels", "answers", "nuggets", "labels", "documents")


@dataclass(frozen=True)
class FileFormat:
    """One file format.

    ``reader``: ``"module:function"`` (imported on first use) or a function ``(path, **kwargs) -> object``.
    ``suffixes``: lower-case file-name endings that mean this format before the file is read (``.csv``).
    ``sniff(name, line, record)``: whether the first non-blank ``line`` (``record``: its JSON object when the line
    is one, else None; ``name``: the lower-case file name without ``.gz``) is this format.
    ``role``: what the file gives a dataset (one of ``ROLES``; None: kept as an extra).
    ``evaluate``: how meta-evaluation reads it (``"module:function"`` or a function of the path): a ``LabelSet`` or
    a long score table; None: not a label or score file."""

    name: str
    description: str
    reader: "str | Callable[..., Any]"
    role: str | None = None
    suffixes: tuple[str, ...] = ()
    sniff: "Callable[[str, str, dict | None], bool] | None" = None
    evaluate: "str | Callable[..., Any] | None" = None

    def read(self, path: str | os.PathLike, **kwargs: Any) -> Any:
        return _resolve(self.reader)(path, **kwargs)


#: format name -> ``FileFormat``, in detection order (read it through ``get_format`` / ``format_names``)
REGISTRY: dict[str, FileFormat] = {}


def register_format(fmt: FileFormat) -> FileFormat:
    """Add a format (a name is taken once; the same definition again is a no-op)."""
    from metaeval.errors import ConfigError

    if fmt.role is not None and fmt.role not in ROLES:
        raise ConfigError(f"format {fmt.name!r}: role {fmt.role!r}; expected one of {', '.join(ROLES)} or None")
    old = REGISTRY.get(fmt.name)
    if old is not None and _origin(old.reader) != _origin(fmt.reader):  # the same module again (a reload) replaces it
        raise ConfigError(f"format {fmt.name!r} is already registered (reader {_origin(old.reader)})")
    REGISTRY[fmt.name] = fmt
    return fmt


def _origin(reader: "str | Callable[..., Any]") -> str:
    return reader if isinstance(reader, str) else f"{reader.__module__}:{reader.__qualname__}"


def format_names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def get_format(name: str, path: str | os.PathLike = "") -> FileFormat:
    fmt = REGISTRY.get(name)
    if fmt is None:
        raise FormatError(str(path), 0, "", f"unknown format {name!r}; expected one of {', '.join(REGISTRY)}")
    return fmt


def _resolve(target: "str | Callable[..., Any]") -> Callable[..., Any]:
    if callable(target):
        return target
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _has_assignment(obj: dict) -> bool:
    nuggets = obj.get("nuggets") or []
    return isinstance(nuggets, list) and bool(nuggets) and isinstance(nuggets[0], dict) and "assignment" in nuggets[0]


def _keys(record: dict | None) -> set:
    return set(record) if isinstance(record, dict) else set()


def _labels(path: str | os.PathLike) -> Any:
    return load_labels(path, format="assignments")


for _fmt in (
    FileFormat("assignments", "NIST nugget-assignment JSONL / nuggetizer assignment output (labels)",
               "metaeval.io.assignments:read_assignments", role="labels",
               sniff=lambda n, s, r: "nuggets" in _keys(r) and "qid" in _keys(r)
               and ("run_id" in _keys(r) or _has_assignment(r)), evaluate=_labels),
    FileFormat("nuggets", "nuggetizer nugget-creation output {qid, query, nuggets: [{text, importance}]}",
               "metaeval.io.nuggets:read_nuggets", role="nuggets",
               sniff=lambda n, s, r: "nuggets" in _keys(r) and "qid" in _keys(r)),
    FileFormat("answers", "TREC RAG 2024 answer runs", "metaeval.io.answers:read_answers", role="answers",
               sniff=lambda n, s, r: {"run_id", "topic_id", "answer"} <= _keys(r)),
    FileFormat("metrics", "nuggetizer per-topic metrics JSONL", "metaeval.io.metrics:read_metrics",
               sniff=lambda n, s, r: "qid" in _keys(r) and any(k.endswith("_score") for k in _keys(r)),
               evaluate="metaeval.io.metrics:read_metrics_long"),
    FileFormat("scores", "score table CSV/TSV/Parquet/JSONL (long run_id,qid,metric,value or wide)",
               "metaeval.io.scores:read_score_table", suffixes=(".csv", ".parquet"),
               sniff=lambda n, s, r: {"run_id", "qid", "metric", "value"} <= _keys(r) if r is not None else (
                   n.endswith(".tsv") and "\t" in s and s.split("\t")[0] in ("run_id", "qid")),
               evaluate="metaeval.io.scores:read_score_table"),
    FileFormat("qrels", "TREC qrels qid iter docid grade", "metaeval.io.trec:read_qrels", role="qrels",
               sniff=lambda n, s, r: r is None and len(s.split()) == 4 and s.split()[3].lstrip("-").isdigit()),
    FileFormat("topics", "TREC topics TSV qid<TAB>text", "metaeval.io.trec:read_topics", role="topics",
               sniff=lambda n, s, r: r is None and "\t" in s),
    FileFormat("documents", "document collection JSONL {docid, text} (named by a dataset layout, never detected)",
               "metaeval.io.documents:read_documents", role="documents"),
):
    register_format(_fmt)
#: the detection order of the built-in formats (answers before assignments: an answer run has no ``nuggets``)
_DETECT_FIRST: tuple[str, ...] = ("answers", "assignments", "nuggets", "metrics", "scores", "qrels", "topics")


def _detection_order() -> list[FileFormat]:
    return [REGISTRY[n] for n in _DETECT_FIRST] + [f for n, f in REGISTRY.items() if n not in _DETECT_FIRST]


def detect_format(path: str | os.PathLike) -> str:
    """Guess a file's format from its name (the formats' ``suffixes``) and first non-blank line (their ``sniff``)."""
    p = str(path)
    low = p.lower().removesuffix(".gz")
    order = _detection_order()
    for fmt in order:
        if fmt.suffixes and low.endswith(fmt.suffixes):
            return fmt.name
    from metaeval.io.jsonl import iter_lines

    lines = iter_lines(p)  # decodes line by line: non-UTF-8 bytes are reported with their line
    first_no, first = next(((n, ln) for n, ln in lines if ln.strip()), (0, None))
    lines.close()
    if first is None:
        raise FormatError(p, 0, "", "empty file")
    s = first.strip()
    record = None
    if s.startswith("{"):
        try:
            record = json.loads(s)
        except json.JSONDecodeError as exc:
            raise FormatError(p, first_no, "", f"malformed JSON ({exc.msg} at column {exc.colno}); cannot detect the format") from None
        except RecursionError:
            raise FormatError(p, first_no, "", "malformed JSON (nested too deeply); cannot detect the format") from None
        except ValueError as exc:  # e.g. an integer of more than 4,300 digits
            raise FormatError(p, first_no, "", f"unreadable JSON value ({str(exc)[:100]}); cannot detect the format") from None
        if not isinstance(record, dict):
            record = {}
    for fmt in order:
        if fmt.sniff is not None and fmt.sniff(low, s, record):
            return fmt.name
    if record is not None:
        raise FormatError(p, first_no, "", f"cannot tell the format from the fields {sorted(record)}; pass --format ({', '.join(REGISTRY)})")
    raise FormatError(p, first_no, "", f"cannot detect the format; pass --format ({', '.join(REGISTRY)})")


def read(path: str | os.PathLike, format: str | None = None, **kwargs: Any) -> Any:
    """Read any registered format; ``format`` overrides detection."""
    return get_format(format or detect_format(path), path).read(path, **kwargs)


def read_evaluable(path: str | os.PathLike, format: str | None = None) -> Any:
    """A label or score file as meta-evaluation reads it: a ``LabelSet`` (assignment labels) or the long score
    table ``run_id, qid, metric, value`` (score tables, nuggetizer metrics); ``format`` overrides detection.  Any
    other format is one ``FormatError`` naming it."""
    fmt = get_format(format or detect_format(path), path)
    if fmt.evaluate is None:
        raise FormatError(str(path), 0, "", f"holds {fmt.name} (detected format {fmt.name!r}), not labels; analyze "
                          "needs an assignments (labels) or scores file")
    return _resolve(fmt.evaluate)(path)


def load_labels(path: str | os.PathLike, format: str | None = None, name: str | None = None):
    """Load a label set (``LabelSet``) from an assignment file; ``name`` defaults to the name the file goes by
    everywhere (:func:`metaeval.paths.label_file_name`: its stem, or the cell id for a sweep cell's ``labels.jsonl``).

    A directory is read as a metaeval results folder when it holds ``labels.jsonl`` (written by sweeps).
    """
    p = Path(path)
    if p.is_dir():
        cand = p / "labels.jsonl"
        if not cand.exists():
            raise FormatError(str(p), 0, "", "a folder of labels must contain labels.jsonl")
        p = cand
    fmt = format or detect_format(p)
    if fmt != "assignments":
        raise FormatError(str(p), 0, "", f"holds {fmt}, not nugget assignment labels (expected the NIST/nuggetizer assignment format)")
    from metaeval.io.assignments import read_assignments

    from metaeval.paths import label_file_name

    ls = read_assignments(p, name=name or label_file_name(p))
    side = provenance_sidecar(p)
    if side.is_file():  # a sweep cell's labels: the judge spec and prompt hashes they were made with
        try:
            extra = json.loads(side.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise FormatError(str(side), 0, "", f"cannot read the labels' provenance ({exc})") from None
        ls.provenance.update({k: extra[k] for k in LABELS_PROVENANCE if k in extra})
    return ls


#: provenance keys a sweep records beside its labels (``cells/<cell>/labels.provenance.json``)
LABELS_PROVENANCE: tuple[str, ...] = ("judge_spec", "prompt_version")


def provenance_sidecar(labels_path: str | os.PathLike) -> Path:
    """``labels.jsonl`` -> ``labels.provenance.json`` (same folder)."""
    p = Path(labels_path)
    return p.with_name(p.name.split(".")[0] + ".provenance.json")
