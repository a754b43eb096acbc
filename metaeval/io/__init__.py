"""Readers and writers for the file formats metaeval speaks, with format auto-detection.

Formats (``FORMATS``):

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
==============  ===========================================================================  ==================

``detect_format(path)`` looks at the extension and the first record; it raises ``FormatError`` when the file is
ambiguous, and every command accepts ``--format`` to override it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

from metaeval.errors import FormatError

FORMATS: tuple[str, ...] = ("assignments", "nuggets", "answers", "metrics", "topics", "qrels", "scores")


def _reader(name: str) -> Callable[..., Any]:
    from metaeval.io import answers, assignments, metrics, nuggets, scores, trec

    return {
        "assignments": assignments.read_assignments,
        "nuggets": nuggets.read_nuggets,
        "answers": answers.read_answers,
        "metrics": metrics.read_metrics,
        "topics": trec.read_topics,
        "qrels": trec.read_qrels,
        "scores": scores.read_score_table,
    }[name]


def detect_format(path: str | os.PathLike) -> str:
    """Guess a file's format from its extension and first non-blank line."""
    p = str(path)
    low = p.lower().removesuffix(".gz")
    if low.endswith((".csv", ".parquet")):
        return "scores"
    from metaeval.io.jsonl import iter_lines

    lines = iter_lines(p)  # decodes line by line: non-UTF-8 bytes are reported with their line
    first_no, first = next(((n, ln) for n, ln in lines if ln.strip()), (0, None))
    lines.close()
    if first is None:
        raise FormatError(p, 0, "", "empty file")
    s = first.strip()
    if s.startswith("{"):
        try:
            obj = json.loads(s)
        except json.JSONDecodeError as exc:
            raise FormatError(p, first_no, "", f"malformed JSON ({exc.msg} at column {exc.colno}); cannot detect the format") from None
        except RecursionError:
            raise FormatError(p, first_no, "", "malformed JSON (nested too deeply); cannot detect the format") from None
        except ValueError as exc:  # e.g. an integer of more than 4,300 digits
            raise FormatError(p, first_no, "", f"unreadable JSON value ({str(exc)[:100]}); cannot detect the format") from None
        keys = set(obj) if isinstance(obj, dict) else set()
        if {"run_id", "topic_id", "answer"} <= keys:
            return "answers"
        if "nuggets" in keys and "qid" in keys:
            return "assignments" if "run_id" in keys or _has_assignment(obj) else "nuggets"
        if "qid" in keys and any(k.endswith("_score") for k in keys):
            return "metrics"
        if {"run_id", "qid", "metric", "value"} <= keys:
            return "scores"
        raise FormatError(p, first_no, "", f"cannot tell the format from the fields {sorted(keys)}; pass --format ({', '.join(FORMATS)})")
    if low.endswith(".tsv") and "\t" in s and s.split("\t")[0] in ("run_id", "qid"):
        return "scores"
    fields = s.split()
    if len(fields) == 4 and fields[3].lstrip("-").isdigit():
        return "qrels"
    if "\t" in s:
        return "topics"
    raise FormatError(p, first_no, "", f"cannot detect the format; pass --format ({', '.join(FORMATS)})")


def _has_assignment(obj: dict) -> bool:
    nuggets = obj.get("nuggets") or []
    return isinstance(nuggets, list) and bool(nuggets) and isinstance(nuggets[0], dict) and "assignment" in nuggets[0]


def read(path: str | os.PathLike, format: str | None = None, **kwargs: Any) -> Any:
    """Read any supported file; ``format`` overrides detection."""
    fmt = format or detect_format(path)
    if fmt not in FORMATS:
        raise FormatError(str(path), 0, "", f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return _reader(fmt)(path, **kwargs)


def load_labels(path: str | os.PathLike, format: str | None = None, name: str | None = None):
    """Load a label set (``LabelSet``) from an assignment file; ``name`` defaults to the file name.

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

    ls = read_assignments(p, name=name)
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
