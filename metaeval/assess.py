"""Assessor workflow files: the paper's semi-manual conditions (section 4.1.2, 4.2.2).

* ``export_nuggets``: the nuggets a judge created for each topic (up to 30, *without importance*, as NIST
  assessors received them) as an editable sheet (CSV or JSONL): ``qid, query, nugget_id, nugget, importance``.
  Assessors add rows, delete rows, merge (delete one, rewrite the other) and rewrite text, and may fill
  ``importance`` (vital / okay).
* ``import_nuggets``: reads the edited sheet back as a human nugget set (nuggetizer creation format), renumbering
  nuggets per topic in sheet order.  Rows with an empty nugget are dropped (that is how a nugget is deleted);
  an importance that is neither empty, ``vital`` nor ``okay`` is kept as FAILED and reported with its line.
* ``export_assignments`` / ``import_assignments``: one row per (answer, nugget) with an empty ``label`` column for
  manual assignment; imported labels become a label set (NIST assignment format), unknown labels FAILED.

An edited or manual nugget set then runs through ``human_auto`` like any other:
``metaeval sweep grid=single strategy=human_auto dataset.nuggets=edited.jsonl``.
"""

from __future__ import annotations

import csv
import logging
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

from metaeval.errors import ConfigError, FormatError
from metaeval.io.jsonl import iter_jsonl, write_jsonl
from metaeval.types import LabelProblem, parse_importance, parse_support

log = logging.getLogger(__name__)

NUGGET_SHEET = ("qid", "query", "nugget_id", "nugget", "importance")
ASSIGN_SHEET = ("qid", "run_id", "nugget_id", "nugget", "importance", "answer_text", "label")


def _write_sheet(path: str | os.PathLike, columns: tuple[str, ...], rows: Iterable[dict[str, Any]]) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".jsonl":
        return write_jsonl(path, ({c: r.get(c, "") for c in columns} for r in rows))
    if path.suffix != ".csv":
        raise ConfigError(f"{path}: a sheet must be .csv or .jsonl")
    n = 0
    from metaeval.io.atomic import atomic_open

    with atomic_open(path, "w", newline="") as fh:  # atomic, umask mode, OS errors as one line
        w = csv.DictWriter(fh, fieldnames=list(columns))
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in columns})
            n += 1
    return n


def _read_sheet(path: str | os.PathLike, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, row) pairs; CSV lines count the header as line 1."""
    path = str(path)
    if path.endswith(".jsonl"):
        for lineno, obj in iter_jsonl(path):
            for col in required:
                if col not in obj:
                    raise FormatError(path, lineno, col, "missing column")
            yield lineno, {k: "" if v is None else str(v) for k, v in obj.items()}
        return
    if not Path(path).exists():
        raise FormatError(path, 0, "", "no such file")
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise FormatError(path, 1, missing[0], f"missing column (header is {reader.fieldnames})")
        for i, row in enumerate(reader, start=2):
            yield i, {k: (v or "") for k, v in row.items() if k is not None}


def export_nuggets(created: dict[str, list[str]], topics: dict[str, str], path: str | os.PathLike, max_nuggets: int = 30) -> int:
    """Write judge-created nuggets (qid -> texts) as an assessor sheet, without importance."""
    rows = ({"qid": q, "query": topics.get(q, ""), "nugget_id": i, "nugget": t, "importance": ""}
            for q in sorted(created) for i, t in enumerate(created[q][:max_nuggets]))
    return _write_sheet(path, NUGGET_SHEET, rows)


def import_nuggets(sheet: str | os.PathLike, out: str | os.PathLike) -> dict[str, Any]:
    """Read an edited nugget sheet and write it in nuggetizer's creation format; returns counts and problems."""
    topics: dict[str, str] = {}
    per_topic: dict[str, list[dict[str, str]]] = {}
    problems: list[LabelProblem] = []
    for line, row in _read_sheet(sheet, ("qid", "nugget")):
        qid, text = row["qid"].strip(), " ".join(row["nugget"].split())
        if not qid:
            raise FormatError(str(sheet), line, "qid", "empty topic id")
        if row.get("query"):
            topics.setdefault(qid, row["query"].strip())
        if not text:
            continue  # a deleted nugget
        item = {"text": text}
        raw = row.get("importance", "").strip()
        if raw:
            imp = parse_importance(raw)
            if imp.value == "FAILED":
                problems.append(LabelProblem(str(sheet), line, "importance", raw))
            item["importance"] = imp.value if imp.value != "FAILED" else raw
        per_topic.setdefault(qid, []).append(item)
    if not per_topic:
        raise FormatError(str(sheet), 0, "nugget", "no nuggets in the sheet")
    write_jsonl(out, ({"qid": q, "query": topics.get(q, ""), "nuggets": ns} for q, ns in per_topic.items()))
    if problems:
        log.warning("%s: %d unknown importance value(s) kept as FAILED: %s", sheet, len(problems), "; ".join(map(str, problems[:5])))
    return {"topics": len(per_topic), "nuggets": sum(map(len, per_topic.values())), "problems": [str(p) for p in problems]}


def export_assignments(nuggets, answers, path: str | os.PathLike) -> int:
    """One row per (answer, nugget of its topic) with an empty ``label`` for manual assignment.

    ``nuggets``: DataFrame ``qid, nugget_id, nugget, importance``; ``answers``: iterable of ``Answer``.
    """
    by_topic = {q: g.sort_values("nugget_id") for q, g in nuggets.groupby("qid")}
    rows = []
    for a in sorted(answers, key=lambda a: (a.qid, a.run_id)):
        g = by_topic.get(a.qid)
        if g is None:
            continue
        for n in g.itertuples(index=False):
            rows.append({"qid": a.qid, "run_id": a.run_id, "nugget_id": int(n.nugget_id), "nugget": n.nugget,
                         "importance": str(n.importance), "answer_text": a.text, "label": ""})
    return _write_sheet(path, ASSIGN_SHEET, rows)


def import_assignments(sheet: str | os.PathLike, out: str | os.PathLike, topics: dict[str, str] | None = None) -> dict[str, Any]:
    """Read a filled assignment sheet; write NIST assignment JSONL.  Empty or unknown labels are FAILED (reported)."""
    answers: dict[tuple[str, str], dict[str, Any]] = {}
    problems: list[LabelProblem] = []
    for line, row in _read_sheet(sheet, ("qid", "run_id", "nugget_id", "nugget", "label")):
        key = (row["qid"].strip(), row["run_id"].strip())
        rec = answers.setdefault(key, {"query": (topics or {}).get(key[0], ""), "qid": key[0], "run_id": key[1],
                                       "answer_text": row.get("answer_text", ""), "nuggets": []})
        try:
            nid = int(row["nugget_id"])
        except ValueError:
            raise FormatError(str(sheet), line, "nugget_id", f"not an integer: {row['nugget_id']!r}") from None
        raw = row["label"].strip()
        sup = parse_support(raw)
        if sup.value == "FAILED":
            problems.append(LabelProblem(str(sheet), line, "label", raw))
        rec["nuggets"].append((nid, {"text": row["nugget"], "importance": row.get("importance", "") or "FAILED",
                                     "assignment": sup.value if sup.value != "FAILED" else (raw or "FAILED")}))
    if not answers:
        raise FormatError(str(sheet), 0, "label", "no rows in the sheet")
    for rec in answers.values():
        rec["nuggets"] = [n for _, n in sorted(rec["nuggets"], key=lambda p: p[0])]
    write_jsonl(out, answers.values())
    if problems:
        log.warning("%s: %d empty or unknown label(s) kept as FAILED: %s", sheet, len(problems), "; ".join(map(str, problems[:5])))
    return {"answers": len(answers), "labels": sum(len(r["nuggets"]) for r in answers.values()),
            "problems": [str(p) for p in problems]}


def created_nuggets_from_results(results_dir: str | os.PathLike, cell: str, judge_id: str | None,
                                 prompt_id: str | None, skipped: bool = False
                                 ) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The nuggets a sweep cell's judge created per topic (before importance and the top-20 cut), and the topics'
    query texts (from the cell's ``labels.jsonl``).  ``judge_id`` / ``prompt_id``: the cell's, from the study's
    summary (``metaeval.study.records.CellSummary``; the command reads it).  Everything is read through
    ``metaeval.layout``."""
    from metaeval.layout import ResultsLayout

    lay = ResultsLayout.open(results_dir)
    created: dict[str, list[str]] = {}
    for rec in lay.iter_jobs():  # file order: a later record of a job supersedes an earlier one
        spec = rec["spec"]
        if (spec.get("stage") == "create" and spec.get("judge") == judge_id and spec.get("prompt") == prompt_id
                and rec.get("status") == "done" and isinstance(rec.get("output"), dict)):
            created[spec["qid"]] = list(rec["output"].get("nuggets", []))
    if not created:
        raise ConfigError(f"cell {cell!r} created no nuggets (its strategy does not include nugget creation)")
    labels = lay.read_labels(cell) if not skipped else None
    topics = dict(labels.topics) if labels is not None else {}
    return created, topics
