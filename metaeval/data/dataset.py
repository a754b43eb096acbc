"""``Dataset``: everything an experiment reads about one collection, and ``load_dataset`` to get it.

A dataset holds

* ``topics``: qid -> query text;
* ``documents``: qid -> list of ``Document`` (candidate documents for nugget creation; may be empty, e.g. the NIST
  nugget files carry no documents);
* ``answers``: list of ``Answer`` (one per (run, topic));
* ``qrels``: DataFrame ``qid, docid, grade`` or ``None``;
* ``nuggets``: the *human* nuggets, DataFrame ``qid, nugget_id, nugget, importance`` or ``None``
  (``nugget_id`` is the nugget's position in the topic's list and matches ``labels.labels.nugget_id``);
* ``labels``: the *human* assignment ``LabelSet`` (the reference for meta-evaluation) or ``None``;
* ``other_nuggets`` / ``other_labels``: nuggets and labels from other sources shipped with the data (e.g. the
  Mistral nuggets and assignments of ``nuggetizer-rag24-mistral``), keyed by file stem - never the reference;
* ``name``, ``description`` and ``provenance`` (each file's path, md5, sha256, size, and whether it was verified
  against the registry).

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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from metaeval.data.registry import ALIASES, REGISTRY, DatasetEntry, get_entry
from metaeval.errors import ConfigError
from metaeval.types import Answer, Document, Importance, LabelSet, Nugget

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


@dataclass
class Dataset:
    name: str
    description: str = ""
    topics: dict[str, str] = field(default_factory=dict)
    documents: dict[str, list[Document]] = field(default_factory=dict)
    answers: list[Answer] = field(default_factory=list)
    qrels: "pd.DataFrame | None" = None
    nuggets: "pd.DataFrame | None" = None
    labels: LabelSet | None = None
    other_nuggets: dict[str, "pd.DataFrame"] = field(default_factory=dict)
    other_labels: dict[str, LabelSet] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ views
    @property
    def qids(self) -> list[str]:
        qs = set(self.topics) | {a.qid for a in self.answers}
        return sorted(qs)

    @property
    def run_ids(self) -> list[str]:
        return sorted({a.run_id for a in self.answers})

    def answers_for(self, qid: str) -> list[Answer]:
        return [a for a in self.answers if a.qid == qid]

    def documents_for(self, qid: str) -> list[Document]:
        return list(self.documents.get(qid, []))

    def human_nuggets_for(self, qid: str) -> list[Nugget]:
        """The human nuggets of one topic, in ``nugget_id`` order."""
        if self.nuggets is None:
            return []
        g = self.nuggets[self.nuggets["qid"] == qid].sort_values("nugget_id")
        return [Nugget(text=r.nugget, importance=Importance(str(r.importance)), nugget_id=int(r.nugget_id)) for r in g.itertuples(index=False)]

    def answers_frame(self) -> "pd.DataFrame":
        """One row per answer: ``qid, run_id, answer_text, response_length, n_sentences, n_citations``."""
        import pandas as pd

        return pd.DataFrame(
            [(a.qid, a.run_id, a.text, a.response_length, len(a.sentences), sum(len(c) for c in a.citations)) for a in self.answers],
            columns=["qid", "run_id", "answer_text", "response_length", "n_sentences", "n_citations"],
        )

    def summary(self) -> dict[str, Any]:
        """Counts, for printing."""
        return {
            "name": self.name,
            "topics": len(self.qids),
            "runs": len(self.run_ids),
            "answers": len(self.answers),
            "documents": sum(len(v) for v in self.documents.values()),
            "qrels": 0 if self.qrels is None else len(self.qrels),
            "human_nuggets": 0 if self.nuggets is None else len(self.nuggets),
            "human_labels": 0 if self.labels is None else len(self.labels.labels),
        }

    def partial_runs(self) -> dict[str, int]:
        """run -> how many topics it answers, for the runs that answer only part of ``qids`` (a NIST export holds
        only the judged topics' answers, so there this is expected, not a problem)."""
        runs: dict[str, set[str]] = {}
        for a in self.answers:
            runs.setdefault(a.run_id, set()).add(a.qid)
        all_q = set(self.topics) or {a.qid for a in self.answers}
        return {run: len(qs) for run, qs in sorted(runs.items()) if qs != all_q}

    def coverage_note(self) -> str:
        """One line summing up :meth:`partial_runs` ('' when every run answers every topic)."""
        partial = self.partial_runs()
        if not partial:
            return ""
        n_topics = len(set(self.topics) or {a.qid for a in self.answers})
        counts = sorted(Counter(partial.values()).items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{runs} run(s) answer {n}" for n, runs in counts[:3]) + (", ..." if len(counts) > 3 else "")
        labelled = len(set(self.labels.labels["qid"])) if self.labels is not None else 0
        why = (f"expected: the human labels cover {labelled} topics and the export holds only the judged answers; "
               if labelled and labelled < n_topics else "")
        return (f"{len(partial)} of {len(self.run_ids)} runs answer only part of the {n_topics} topics ({shown}); "
                f"{why}comparisons use the (topic, run) cells both sides share")

    def check(self, coverage: bool = True) -> list[str]:
        """Consistency problems (empty list when consistent): every labelled nugget is a human nugget of its topic
        with the same text and importance; every labelled answer exists; every cited reference is a known document
        of its topic (when documents are given); with ``coverage``, every run answers every topic (one line per
        run of :meth:`partial_runs`; ``coverage=False`` leaves those to :meth:`coverage_note`)."""
        problems: list[str] = []
        if self.labels is not None and self.nuggets is not None:
            ref = {(r.qid, int(r.nugget_id)): (r.nugget, str(r.importance)) for r in self.nuggets.itertuples(index=False)}
            lab = self.labels.labels.drop_duplicates(["qid", "nugget_id", "nugget", "importance"])
            for r in lab.itertuples(index=False):
                got = ref.get((r.qid, int(r.nugget_id)))
                if got is None:
                    problems.append(f"label nugget {r.qid}/{r.nugget_id} {r.nugget!r} is not a human nugget of that topic")
                elif got != (r.nugget, str(r.importance)):
                    problems.append(f"label nugget {r.qid}/{r.nugget_id} {(r.nugget, str(r.importance))} differs from the human nugget {got}")
        if self.labels is not None and self.answers:
            have = {(a.qid, a.run_id) for a in self.answers}
            for r in self.labels.answers.itertuples(index=False):
                if (r.qid, r.run_id) not in have:
                    problems.append(f"labels for ({r.qid}, {r.run_id}) but no such answer")
        if self.documents:
            for a in self.answers:
                known = {d.docid for d in self.documents.get(a.qid, [])}
                cited = {a.references[i] for c in a.citations for i in c if i < len(a.references)}
                for docid in sorted(cited - known):
                    problems.append(f"answer ({a.qid}, {a.run_id}) cites {docid}, not a document of topic {a.qid}")
        if coverage:
            runs: dict[str, set[str]] = {}
            for a in self.answers:
                runs.setdefault(a.run_id, set()).add(a.qid)
            all_q = set(self.topics) or {a.qid for a in self.answers}
            for run in self.partial_runs():
                qs = runs[run]
                problems.append(f"run {run} answers {len(qs)} of {len(all_q)} topics (missing {sorted(all_q - qs)[:5]})")
        return problems

    def __repr__(self) -> str:
        s = self.summary()
        return "Dataset(" + ", ".join(f"{k}={v!r}" for k, v in s.items()) + ")"


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
        ds = _load_nist(p.name.split(".")[0], {p.name: p}) if fmt == "assignments" else _load_files(p.name, {p.name: (p, fmt)})
    ds.provenance = _provenance(_paths_of(p), source=str(p.resolve()))
    return ds


def _load_registered(entry: DatasetEntry) -> Dataset:
    from metaeval.data.fetch import status

    st = status(entry.name)
    missing = [f.filename for f in st.files if f.action == "missing"]
    corrupt = [f.filename for f in st.files if f.action == "corrupt"]
    if corrupt:
        raise ConfigError(f"dataset {entry.name}: {', '.join(corrupt)} in {st.directory} fail their checksum; run: metaeval data fetch {entry.name} --force --from PATH_OR_URL")
    if missing:
        how = f"metaeval data fetch {entry.name}" + ("" if all(f.url for f in entry.files) else " --from PATH")
        raise ConfigError(f"dataset {entry.name} is not fully fetched ({', '.join(missing)} missing in {st.directory}); run: {how}")
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
    from metaeval.io.assignments import read_assignments

    (path,) = files.values()
    labels = read_assignments(path, name="nist")
    answers = [
        Answer(run_id=r.run_id, qid=r.qid, text=r.answer_text or "",
               response_length=None if r.response_length != r.response_length or r.response_length is None else int(r.response_length),
               topic=labels.topics.get(r.qid, ""))
        for r in labels.answers.itertuples(index=False)
    ]
    return Dataset(name=name, topics=dict(labels.topics), answers=answers, nuggets=labels.nuggets(), labels=labels)


def _load_folder(name: str, files: dict[str, Path]) -> Dataset:
    """The demo layout (each file optional): the nuggets and assignment labels in it are the human reference."""
    from metaeval.io.answers import read_answers
    from metaeval.io.assignments import read_assignments
    from metaeval.io.documents import read_documents
    from metaeval.io.nuggets import read_nuggets
    from metaeval.io.trec import read_qrels, read_topics

    ds = Dataset(name=name)
    if "topics.tsv" in files:
        ds.topics = read_topics(files["topics.tsv"])
    if "documents.jsonl" in files:
        docs, by_topic = read_documents(files["documents.jsonl"])
        ds.documents = {q: [docs[d] for d in ids] for q, ids in by_topic.items()}
    if "qrels.txt" in files:
        ds.qrels = read_qrels(files["qrels.txt"])
    if "runs.jsonl" in files:
        ds.answers = read_answers(files["runs.jsonl"])
    if "nuggets.jsonl" in files:
        nug = read_nuggets(files["nuggets.jsonl"])
        ds.nuggets = nug[["qid", "nugget_id", "nugget", "importance"]].copy()
        for q, t in nug.attrs.get("topics", {}).items():
            ds.topics.setdefault(q, t)
    if "assignments.jsonl" in files:
        ds.labels = read_assignments(files["assignments.jsonl"], name="human")
        for q, t in ds.labels.topics.items():
            ds.topics.setdefault(q, t)
    for a in ds.answers:
        if a.topic:
            ds.topics.setdefault(a.qid, a.topic)
    return ds


def _load_files(name: str, files: dict[str, tuple[Path, str]]) -> Dataset:
    """Loose files, each read by its format.  Nuggets and labels found here are *not* treated as human."""
    from metaeval.io import read

    ds = Dataset(name=name)
    for fn, (path, fmt) in files.items():
        stem = fn.rsplit(".", 1)[0]
        if fmt == "documents":
            from metaeval.io.documents import read_documents

            docs, by_topic = read_documents(path)
            for q, ids in by_topic.items():
                ds.documents.setdefault(q, []).extend(docs[d] for d in ids)
            continue
        obj = read(path, format=fmt)
        if fmt == "topics":
            ds.topics.update(obj)
        elif fmt == "qrels":
            import pandas as pd

            ds.qrels = obj if ds.qrels is None else pd.concat([ds.qrels, obj], ignore_index=True)
        elif fmt == "answers":
            ds.answers.extend(obj)
        elif fmt == "nuggets":
            ds.other_nuggets[stem] = obj
            for q, t in obj.attrs.get("topics", {}).items():
                ds.topics.setdefault(q, t)
        elif fmt == "assignments":
            obj.name = stem
            ds.other_labels[stem] = obj
            for q, t in obj.topics.items():
                ds.topics.setdefault(q, t)
        else:
            ds.extras[stem] = obj
    have = {(a.qid, a.run_id) for a in ds.answers}
    for ls in ds.other_labels.values():  # assignment files carry the answer texts they labelled
        for r in ls.answers.itertuples(index=False):
            if (r.qid, r.run_id) not in have:
                have.add((r.qid, r.run_id))
                rlen = None if r.response_length is None or r.response_length != r.response_length else int(r.response_length)
                ds.answers.append(Answer(run_id=r.run_id, qid=r.qid, text=r.answer_text or "", response_length=rlen,
                                         topic=ls.topics.get(r.qid, "")))
    for a in ds.answers:
        if a.topic:
            ds.topics.setdefault(a.qid, a.topic)
    return ds


def _load_published(folder: Path) -> Dataset:
    """A track folder as published, read without renaming anything (e.g. ``trec-rag-2024/``): every file at the top
    level is read by its detected format - a nugget-assignment file (NIST's export) gives the human nuggets and
    labels, a ``qid<TAB>text`` file the topics, a qrels file the relevance grades, answer runs the answers - and
    every ``*.jsonl`` in ``runs/`` is an answer run.  Answers from the runs come first; an assignment file adds the
    (qid, run_id) answers the runs do not have.  Files that are not datasets (README, LICENSE) are skipped; two
    files of the same kind where only one can be used (two assignment files) are an error naming both."""
    from metaeval.io import detect_format
    from metaeval.io.answers import read_answers
    from metaeval.io.assignments import read_assignments
    from metaeval.io.nuggets import read_nuggets
    from metaeval.io.trec import read_qrels, read_topics
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
    for path in kinds.get("answers", []):
        ds.answers.extend(read_answers(path))
    if kinds.get("topics"):
        ds.topics = read_topics(kinds["topics"][0])
    if kinds.get("qrels"):
        import pandas as pd

        ds.qrels = pd.concat([read_qrels(q) for q in kinds["qrels"]], ignore_index=True)
    if kinds.get("nuggets"):
        nug = read_nuggets(kinds["nuggets"][0])
        ds.nuggets = nug[["qid", "nugget_id", "nugget", "importance"]].copy()
    if kinds.get("assignments"):
        labels = read_assignments(kinds["assignments"][0], name="human")
        ds.labels = labels
        if ds.nuggets is None:
            ds.nuggets = labels.nuggets()
        have = {(a.qid, a.run_id) for a in ds.answers}
        for r in labels.answers.itertuples(index=False):
            if (r.qid, r.run_id) not in have:
                rlen = None if r.response_length is None or r.response_length != r.response_length else int(r.response_length)
                ds.answers.append(Answer(run_id=r.run_id, qid=r.qid, text=r.answer_text or "", response_length=rlen,
                                         topic=labels.topics.get(r.qid, "")))
        for q, t in labels.topics.items():
            ds.topics.setdefault(q, t)
    for a in ds.answers:
        if a.topic:
            ds.topics.setdefault(a.qid, a.topic)
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
