"""``load_dataset``: a registered dataset by name, or a dataset file / folder by path, as a
:class:`~metaeval.data.collection.Dataset` (what a dataset holds is described there).

``load_dataset`` takes a registered name (``demo`` is bundled; others must have been fetched with
``metaeval data fetch``; ``trec-rag-2024-nist-21`` is an alias of ``trec-rag-2024``) or a path: a NIST /
nuggetizer assignment file, any single file ``metaeval.io`` can detect, a folder in the demo layout
(``topics.tsv documents.jsonl qrels.txt runs.jsonl nuggets.jsonl assignments.jsonl``, each optional), or a track
folder as published (e.g. ``trec-rag-2024/``: an assignment file, a topics file, qrels and ``runs/*.jsonl`` under
their own names; see ``_load_published``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from metaeval.data.collection import Dataset
from metaeval.data.registry import ALIASES, REGISTRY, DatasetEntry, get_entry
from metaeval.errors import ConfigError
from metaeval.types import Answer

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

log = logging.getLogger(__name__)

#: The demo layout: file name -> format.
FOLDER_FILES: dict[str, str] = {
    "topics.tsv": "topics",
    "documents.jsonl": "documents",
    "qrels.txt": "qrels",
    "runs.jsonl": "answers",
    "nuggets.jsonl": "nuggets",
    "assignments.jsonl": "assignments",
}


# -------------------------------------------------------------------------------------------------- loading
def load_dataset(name_or_path: str | os.PathLike) -> Dataset:
    """Load a registered dataset by name, or a dataset file / folder by path (see the module docstring).

    A registered dataset that is not in the cache raises ``ConfigError`` naming the ``metaeval data fetch`` command;
    a cached file whose checksum no longer matches raises ``ConfigError`` too.
    """
    key = str(name_or_path)
    if key in REGISTRY or key in ALIASES:
        return _load_registered(get_entry(key))
    p = Path(key).expanduser()
    if not p.exists():
        raise ConfigError(f"{key!r} is neither a registered dataset ({', '.join(REGISTRY)}) nor an existing file or folder")
    if p.is_dir():
        files = {fn: p / fn for fn in FOLDER_FILES if (p / fn).is_file()}
        if files:
            ds = _load_folder(p.name, files)
        else:
            ds = _load_published(p)
            ds.provenance = _provenance(ds.extras.pop("_paths"), source=str(p.resolve()))
            _check_known(ds.provenance["files"])
            return ds
    else:
        from metaeval.io import detect_format

        fmt = detect_format(p)
        name = _registered_name(p.name) or p.name.split(".")[0]
        ds = _load_nist(name, {p.name: p}) if fmt == "assignments" else _load_files(p.name, {p.name: (p, fmt)})
    ds.provenance = _provenance(_paths_of(p), source=str(p.resolve()))
    return ds


def _registered_name(filename: str) -> str | None:
    """The registered dataset whose file this is (``nugget_assignment.20241108.jl`` -> ``trec-rag-2024``), so that a
    copy loaded by path (``dataset.source=...``) keeps the dataset's name; None when no entry (or several) list it."""
    names = [e.name for e in REGISTRY.values() if any(f.filename == filename for f in e.files)]
    return names[0] if len(set(names)) == 1 else None


def _load_registered(entry: DatasetEntry) -> Dataset:
    from metaeval.data.fetch import status

    st = status(entry.name)
    missing = [f.filename for f in st.files if f.action == "missing"]
    corrupt = [f.filename for f in st.files if f.action == "corrupt"]
    if corrupt:
        raise ConfigError(f"dataset {entry.name}: {', '.join(corrupt)} in {st.directory} fail their checksum; run: metaeval data fetch {entry.name} --force --from PATH_OR_URL")
    if missing:
        how = f"metaeval data fetch {entry.name}" + ("" if all(f.url for f in entry.files) else " --from PATH")
        raise ConfigError(f"dataset {entry.name} is not fully fetched ({', '.join(missing)} missing in {st.directory}); "
                          f"with a copy of the file, point at it: dataset={entry.name} dataset.source=PATH (a sweep) "
                          f"or fetch it once: {how}")
    files = {f.filename: f.path for f in st.files}
    loader = LOADERS[entry.kind]
    if entry.kind == "files":
        ds = loader(entry.name, {fn: (path, entry.file(fn).format) for fn, path in files.items()})
    else:
        ds = loader(entry.name, files)
    ds.description = entry.description
    ds.provenance = {
        "dataset": entry.name,
        "source": entry.source,
        "license": entry.license,
        "files": [
            {"filename": f.filename, "path": str(f.path), "md5": f.md5, "sha256": f.sha256, "size": f.size,
             "verified": None if entry.bundled else f.verified, "origin": f.origin}
            for f in st.files
        ],
    }
    if entry.synthetic:  # made-up labels: summaries and reports say so beside every figure
        ds.provenance["synthetic"] = True
        ds.provenance["description"] = entry.description
    return ds


def _load_nist(name: str, files: dict[str, Path]) -> Dataset:
    """A NIST nugget-assignment file: answers, human nuggets and human labels (no documents, no qrels)."""
    from metaeval.io import get_format

    (path,) = files.values()
    labels = get_format("assignments", path).read(path, name="nist")
    answers = [
        Answer(run_id=r.run_id, qid=r.qid, text=r.answer_text or "",
               response_length=None if r.response_length != r.response_length or r.response_length is None else int(r.response_length),
               topic=labels.topics.get(r.qid, ""))
        for r in labels.answers.itertuples(index=False)
    ]
    return Dataset(name=name, topics=dict(labels.topics), answers=answers, nuggets=labels.nuggets(), labels=labels)


def _load_folder(name: str, files: dict[str, Path]) -> Dataset:
    """The demo layout (each file optional): the nuggets and assignment labels in it are the human reference."""
    ds = Dataset(name=name)
    for fn, fmt in FOLDER_FILES.items():
        if fn in files:
            place(ds, files[fn], fmt, human=True)
    _topics_from_answers(ds)
    return ds


def place(ds: Dataset, path: Path, fmt: str, *, human: bool, stem: str | None = None) -> None:
    """Read ``path`` by the format registry's one dispatcher (``metaeval.io.read``) and put it where the format's
    ``role`` says (``metaeval.io.FileFormat.role``): topics, qrels, answers, documents; nuggets and labels are the
    human reference when ``human`` (the demo layout, a track folder), else kept beside it under ``stem`` (loose
    files: not treated as human).  A format without a role is kept in ``ds.extras[stem]``."""
    from metaeval.io import get_format

    spec = get_format(fmt, path)
    stem = stem or path.name.rsplit(".", 1)[0]
    if spec.role == "labels":
        obj = spec.read(path, name="human" if human else stem)
    else:
        obj = spec.read(path)
    if spec.role == "topics":
        ds.topics.update(obj)
    elif spec.role == "qrels":
        import pandas as pd

        ds.qrels = obj if ds.qrels is None else pd.concat([ds.qrels, obj], ignore_index=True)
    elif spec.role == "answers":
        ds.answers.extend(obj)
    elif spec.role == "documents":
        docs, by_topic = obj
        for q, ids in by_topic.items():
            ds.documents.setdefault(q, []).extend(docs[d] for d in ids)
    elif spec.role == "nuggets":
        if human:
            ds.nuggets = obj[["qid", "nugget_id", "nugget", "importance"]].copy()
        else:
            ds.other_nuggets[stem] = obj
        for q, t in obj.attrs.get("topics", {}).items():
            ds.topics.setdefault(q, t)
    elif spec.role == "labels":
        if human:
            ds.labels = obj
        else:
            ds.other_labels[stem] = obj
        for q, t in obj.topics.items():
            ds.topics.setdefault(q, t)
    else:
        ds.extras[stem] = obj


def _answers_from_labels(ds: Dataset, labels) -> None:
    """The (qid, run_id) answers an assignment file carries that the dataset does not have yet (its answer texts)."""
    have = {(a.qid, a.run_id) for a in ds.answers}
    for r in labels.answers.itertuples(index=False):
        if (r.qid, r.run_id) not in have:
            have.add((r.qid, r.run_id))
            rlen = None if r.response_length is None or r.response_length != r.response_length else int(r.response_length)
            ds.answers.append(Answer(run_id=r.run_id, qid=r.qid, text=r.answer_text or "", response_length=rlen,
                                     topic=labels.topics.get(r.qid, "")))


def _topics_from_answers(ds: Dataset) -> None:
    for a in ds.answers:
        if a.topic:
            ds.topics.setdefault(a.qid, a.topic)


def _load_files(name: str, files: dict[str, tuple[Path, str]]) -> Dataset:
    """Loose files, each read by its format.  Nuggets and labels found here are *not* treated as human."""
    ds = Dataset(name=name)
    for fn, (path, fmt) in files.items():
        place(ds, Path(path), fmt, human=False, stem=fn.rsplit(".", 1)[0])
    for ls in ds.other_labels.values():  # assignment files carry the answer texts they labelled
        _answers_from_labels(ds, ls)
    _topics_from_answers(ds)
    return ds


def _load_published(folder: Path) -> Dataset:
    """A track folder as published, read without renaming anything (e.g. ``trec-rag-2024/``): every file at the top
    level is read by its detected format - a nugget-assignment file (NIST's export) gives the human nuggets and
    labels, a ``qid<TAB>text`` file the topics, a qrels file the relevance grades, answer runs the answers - and
    every ``*.jsonl`` in ``runs/`` is an answer run.  Answers from the runs come first; an assignment file adds the
    (qid, run_id) answers the runs do not have.  Files that are not datasets (README, LICENSE) are skipped; two
    files of the same kind where only one can be used (two assignment files) are an error naming both."""
    from metaeval.io import detect_format
    from metaeval.errors import FormatError

    kinds: dict[str, list[Path]] = {}
    top = sorted(q for q in folder.iterdir() if q.is_file() and not q.name.startswith("."))
    for f in top:
        if f.suffix.lower() in (".md", ".txt", ".tsv", ".jl", ".jsonl", ".gz") and not f.name.lower().startswith(("readme", "license")):
            try:
                kinds.setdefault(detect_format(f), []).append(f)
            except FormatError:
                log.info("%s: not a dataset file (format not recognised); skipped", f)
    runs_dir = folder / "runs"
    if runs_dir.is_dir():
        kinds.setdefault("answers", []).extend(sorted(q for q in runs_dir.iterdir() if q.name.endswith((".jsonl", ".jsonl.gz", ".jl"))))
    for kind in ("assignments", "topics", "nuggets"):
        if len(kinds.get(kind, [])) > 1:
            raise ConfigError(f"folder {folder}: {len(kinds[kind])} {kind} files ({', '.join(q.name for q in kinds[kind])}); "
                              "keep one, or load the files one by one")
    if not any(kinds.get(k) for k in ("assignments", "answers", "topics")):
        raise ConfigError(f"folder {folder} holds no dataset files: neither the demo layout ({', '.join(FOLDER_FILES)}) "
                          "nor a track folder (a nugget-assignment file, a topics file, qrels, runs/*.jsonl)")
    ds = Dataset(name=folder.name)
    for kind in ("answers", "topics", "qrels", "nuggets", "assignments"):  # answers first: the runs' own texts win
        for path in kinds.get(kind, [])[: None if kind in ("answers", "qrels") else 1]:
            place(ds, path, kind, human=True)
    if ds.labels is not None:
        if ds.nuggets is None:
            ds.nuggets = ds.labels.nuggets()
        _answers_from_labels(ds, ds.labels)
    _topics_from_answers(ds)
    ds.extras["_paths"] = [q for k in ("assignments", "topics", "qrels", "nuggets", "answers") for q in kinds.get(k, [])]
    return ds


#: entry kind -> loader (see ``DatasetEntry.kind``)
LOADERS: dict[str, Callable[..., Dataset]] = {"nist": _load_nist, "folder": _load_folder, "files": _load_files}


def _paths_of(p: Path) -> list[Path]:
    if p.is_dir():
        return [p / fn for fn in FOLDER_FILES if (p / fn).is_file()]
    return [p]


def _check_known(files: list[dict[str, Any]]) -> None:
    """Files of a track folder that the registry knows by name are checked against its digests: ``verified`` is
    True when they match, False when they differ (a warning names the file), None for unknown names."""
    known = {f.filename: f for e in REGISTRY.values() for f in e.files if f.has_checksum}
    for rec in files:
        spec = known.get(rec["filename"])
        if spec is None:
            continue
        ok = (not spec.md5 or spec.md5 == rec["md5"]) and (not spec.sha256 or spec.sha256 == rec["sha256"])
        rec["verified"] = ok
        if not ok:
            log.warning("%s: differs from the registry's copy of %s (md5 %s, expected %s)", rec["path"], spec.filename,
                        rec["md5"], spec.md5)


def _provenance(paths: list[Path], source: str) -> dict[str, Any]:
    """Digests of files loaded by path (``verified`` is None: there is no registry entry to check them against)."""
    from metaeval.data.fetch import file_digests

    files = []
    for path in paths:
        md5, sha, size = file_digests(path)
        files.append({"filename": path.name, "path": str(path), "md5": md5, "sha256": sha, "size": size, "verified": None})
    return {"dataset": None, "source": source, "files": files}


def demo_dir() -> Path:
    """The bundled demo dataset's folder."""
    from metaeval.data.fetch import DEMO_DIR

    return DEMO_DIR


__all__ = ["Dataset", "load_dataset", "LOADERS", "FOLDER_FILES", "demo_dir"]
