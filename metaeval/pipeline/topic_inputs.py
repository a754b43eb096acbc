"""What a topic gives every cell of a sweep, computed once per topic (a 1,000-judge grid asks 1,000 times): the
documents nugget creation reads (qrels grade >= ``sweep.min_grade``; all of the topic's documents when the dataset
has no qrels) and the dataset's human nuggets."""

from __future__ import annotations

from typing import Any

from metaeval.pipeline.labelsets import human_nuggets


class TopicInputs:
    """Per-topic documents and human nuggets of ``dataset``, memoised (each call returns a fresh list)."""

    def __init__(self, dataset: Any, min_grade: int):
        self.dataset = dataset
        self.min_grade = min_grade
        self._docs: dict[str, list] = {}
        self._nuggets: dict[tuple[str, bool], list] = {}

    def documents(self, qid: str) -> list:
        """The topic's documents graded >= ``min_grade`` in the qrels (all of them without qrels)."""
        if qid not in self._docs:
            docs = self.dataset.documents.get(qid, [])
            qrels = self.dataset.qrels
            if qrels is None or not len(docs):
                self._docs[qid] = list(docs)
            else:
                graded = qrels[(qrels["qid"] == qid) & (qrels["grade"] >= self.min_grade)]
                keep = set(graded["docid"])
                self._docs[qid] = [d for d in docs if d.docid in keep]
        return list(self._docs[qid])

    def human_nuggets(self, qid: str, with_importance: bool = False) -> list:
        """:func:`metaeval.pipeline.labelsets.human_nuggets` of the topic."""
        key = (qid, with_importance)
        if key not in self._nuggets:
            self._nuggets[key] = human_nuggets(self.dataset, qid, with_importance)
        return list(self._nuggets[key])
