"""``Dataset``: everything an experiment reads about one collection (loaded by ``metaeval.data.dataset.load_dataset``),
with its counts and consistency checks.

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
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from metaeval.types import Answer, Document, Importance, LabelSet, Nugget

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


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
