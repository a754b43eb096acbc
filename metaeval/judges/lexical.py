"""``LexicalJudge``: an offline, pure-Python nugget judge by content-word overlap.  No model, no network.

Tokens: lower-cased words ``[a-z0-9]+``, stop words removed, a light suffix stemmer (``-ies -> y``, ``-ing``,
``-ed``, ``-es``, ``-s``).  For a nugget with content-word set ``N`` and a text window ``W``:

    coverage(N, W) = |N ∩ W| / |N|

* **assign**: ``c = max`` coverage over single answer sentences and pairs of adjacent sentences;
  ``support`` if ``c >= support_threshold`` (default 0.6), ``partial_support`` if ``c >= partial_threshold``
  (default 0.3), else ``not_support``.  A nugget made of stop words only (a title such as "She's All That") is
  decided by its words in order: ``support`` if that word sequence occurs in the answer (same tokens, stop words
  kept, not stemmed), else ``not_support``; only a nugget with no word at all is FAILED (reason given).
* **create**: candidate statements are document sentences (cut to ``max_words`` at a clause boundary) with
  at least 3 content words; each is scored by ``2 * |query terms ∩ S| + mean document frequency of its words``;
  candidates whose content words overlap an existing nugget with Jaccard >= ``dedup_jaccard`` are dropped; the
  list keeps ``nuggets_so_far`` first and fills up to 30 with the best new ones.
* **importance**: each nugget gets a salience score from the query's content words ``Q`` and, when documents
  ``D_1..D_m`` are given, how widely the nugget's words occur in them:

      salience(N) = |Q ∩ N| / |Q|  +  (1/|N|) Σ_{w ∈ N} |{j : w ∈ D_j}| / m      (second term only with documents)

  and the ``round(vital_share * k)`` most salient of the ``k`` nuggets in the call (at least one; ties keep list
  order, which is the creation order) are ``vital``, the rest ``okay``.  ``vital_share`` defaults to 0.6, the
  share of vital nuggets among NIST assessors' nuggets reported by Pradeep et al. (2025) and in the demo's
  human nuggets (37/62).  A fixed share, not an absolute threshold, because salience has no scale shared across
  collections; it also guarantees every topic a vital nugget, so V and V_strict are defined.  (An earlier rule,
  "vital if >= 2 documents cover it", marked 0-3% of created nuggets vital: a created nugget is one document's
  sentence.)  Without documents the reason says importance came from query-term overlap alone.
* **relevance** (UMBRELA's 0-3 scale, a lexical proxy): with ``Q`` the query's content words, ``D`` those of the
  document (title + text), ``d = coverage(Q, D)`` and ``w = max`` coverage over single sentences and pairs of
  adjacent sentences (the title is a sentence of its own):
  ``3`` ("dedicated, exact answer") if ``w >= relevance_exact`` (default 0.75: the query terms meet in one
  passage); else ``2`` ("some answer") if ``d >= relevance_answer`` (default 0.5); else ``1`` ("related") if
  ``d >= relevance_related`` (default 0.2) and ``d > 0``; else ``0``.  A query with no content words cannot be
  graded: every grade is ``None`` (FAILED) with the reason.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Mapping, Sequence

from metaeval.judges.base import (
    MAX_NUGGETS, AssignResult, ImportanceResult, Judge, NuggetsResult, RelevanceResult, check_sizes, grades_status,
    nugget_text, status_of,
)
from metaeval.types import Answer, Document, Importance, Nugget, Support, Topic

STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here
hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off
on once only or other our ours out over own same she should so some such than that the their theirs them then
there these they this those through to too under until up very was we were what when where which while who whom
why will with would you your yours many much may might must one ones well like use used using
""".split())
_WORD = re.compile(r"[a-z0-9]+")
_SENT = re.compile(r"(?<=[.!?])\s+|\n+")


def stem(w: str) -> str:
    for suf, rep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if len(w) > len(suf) + 2 and w.endswith(suf) and not w.endswith("ss"):
            return w[: -len(suf)] + rep
    return w


def content_words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.split(text) if s and s.strip()]


def coverage(nugget_words: set[str], window: set[str]) -> float:
    return len(nugget_words & window) / len(nugget_words) if nugget_words else 0.0


def vital_by_share(scores: Sequence[float], share: float) -> list[Importance]:
    """``vital`` for the ``max(1, round(share * k))`` highest of ``k`` scores (ties: earlier first), else ``okay``."""
    k = len(scores)
    if not k:
        return []
    n_vital = max(1, min(k, int(share * k + 0.5)))
    top = set(sorted(range(k), key=lambda i: (-scores[i], i))[:n_vital])
    return [Importance.VITAL if i in top else Importance.OKAY for i in range(k)]


def contains_sequence(text: str, words: Sequence[str]) -> bool:
    """True when ``words`` (lower-case tokens) occur consecutively in ``text``'s tokens."""
    toks, k = _WORD.findall(text.lower()), len(words)
    return k > 0 and any(toks[i:i + k] == list(words) for i in range(len(toks) - k + 1))


def best_coverage(nugget: str, text_sentences: Sequence[str]) -> float:
    nw = content_words(nugget)
    sets = [content_words(s) for s in text_sentences]
    windows = sets + [a | b for a, b in zip(sets, sets[1:])]
    return max((coverage(nw, w) for w in windows), default=0.0)


class LexicalJudge(Judge):
    #: the config options ``from_config`` reads (besides judge, name, concurrency, requires, label, cache)
    OPTIONS: tuple[str, ...] = ("support_threshold", "partial_threshold", "vital_share", "max_words", "dedup_jaccard", "relevance_related",
               "relevance_answer", "relevance_exact")
    kind = "lexical"

    def __init__(self, support_threshold: float = 0.6, partial_threshold: float = 0.3, vital_share: float = 0.6,
                 max_words: int = 20, dedup_jaccard: float = 0.6, relevance_related: float = 0.2,
                 relevance_answer: float = 0.5, relevance_exact: float = 0.75, name: str | None = None):
        super().__init__(name)
        if not 0 <= partial_threshold <= support_threshold <= 1:
            raise ValueError("need 0 <= partial_threshold <= support_threshold <= 1")
        if not 0 <= relevance_related <= relevance_answer <= relevance_exact <= 1:
            raise ValueError("need 0 <= relevance_related <= relevance_answer <= relevance_exact <= 1")
        if not 0 < vital_share <= 1:
            raise ValueError("need 0 < vital_share <= 1")
        self.t_related, self.t_answer, self.t_exact = relevance_related, relevance_answer, relevance_exact
        self.t_support, self.t_partial = support_threshold, partial_threshold
        self.vital_share, self.max_words, self.dedup_jaccard = vital_share, max_words, dedup_jaccard

    # ------------------------------------------------------------------ assign
    async def assign(self, topic: Topic, answer: Answer, nuggets: Sequence[Nugget | str]) -> AssignResult:
        check_sizes(batch=nuggets)
        sents = list(answer.sentences) or sentences(answer.text)
        labels, empty = [], []
        for i, n in enumerate(nuggets):
            text = nugget_text(n)
            if not content_words(text):  # stop words only: the exact word sequence decides; no word: FAILED
                seq = _WORD.findall(text.lower())
                if not seq:
                    labels.append(Support.FAILED)
                    empty.append(i + 1)
                else:
                    labels.append(Support.SUPPORT if contains_sequence(answer.text, seq) else Support.NOT_SUPPORT)
                continue
            c = best_coverage(text, sents)
            labels.append(Support.SUPPORT if c >= self.t_support else Support.PARTIAL_SUPPORT if c >= self.t_partial else Support.NOT_SUPPORT)
        reason = f"nugget(s) {empty} have no words to match" if empty else None
        return AssignResult(status=status_of(labels), reason=reason, judge=self.name, labels=tuple(labels))

    # ------------------------------------------------------------------ importance
    async def label_importance(self, topic: Topic, nuggets: Sequence[str], *,
                               documents: Sequence[Document] | None = None) -> ImportanceResult:
        check_sizes(batch=nuggets)
        scores = self.salience(topic, [nugget_text(n) for n in nuggets], documents)
        labels = vital_by_share(scores, self.vital_share)
        reason = None if documents else "no documents given: importance from query-term overlap"
        return ImportanceResult(status="ok", reason=reason, judge=self.name, labels=tuple(labels))

    def salience(self, topic: Topic, texts: Sequence[str], documents: Sequence[Document] | None = None) -> list[float]:
        """``salience(N)`` of the module docstring for each nugget text."""
        q = content_words(topic.text)
        doc_sets = [content_words(((d.title or "") + " " + d.text)) for d in documents or ()]
        out = []
        for t in texts:
            cw = content_words(t)
            s = len(q & cw) / len(q) if q else 0.0
            if doc_sets and cw:
                s += sum(sum(w in d for d in doc_sets) for w in cw) / (len(cw) * len(doc_sets))
            out.append(s)
        return out

    # ------------------------------------------------------------------ relevance
    def relevance_grade(self, query_words: set[str], document: Document) -> int:
        """The 0-3 grade of one document for a query with content words ``query_words`` (see module docstring)."""
        text = (document.title + "\n" if document.title else "") + document.text
        d = coverage(query_words, content_words(text))
        sets = [content_words(x) for x in sentences(text)]
        w = max((coverage(query_words, x) for x in sets + [a | b for a, b in zip(sets, sets[1:])]), default=0.0)
        if w >= self.t_exact:
            return 3
        if d >= self.t_answer:
            return 2
        return 1 if d > 0 and d >= self.t_related else 0

    async def grade_relevance(self, topic: Topic, documents: Sequence[Document]) -> RelevanceResult:
        check_sizes(documents=documents)
        q = content_words(topic.text)
        if not q:
            grades: tuple[int | None, ...] = (None,) * len(documents)
            return RelevanceResult(status=grades_status(grades) if documents else "ok", judge=self.name, grades=grades,
                                   reason=f"query {topic.qid!r} has no content words to grade relevance by")
        grades = tuple(self.relevance_grade(q, d) for d in documents)
        return RelevanceResult(status="ok", judge=self.name, grades=grades)

    # ------------------------------------------------------------------ create
    def _clip(self, sent: str) -> str:
        words = sent.split()
        if len(words) <= self.max_words:
            return sent.strip()
        cut = " ".join(words[: self.max_words])
        for sep in (";", ",", " - "):
            if sep in cut[len(cut) // 3 :]:
                cut = cut[: cut.rindex(sep)]
                break
        return cut.strip()

    async def create_nuggets(self, topic: Topic, documents: Sequence[Document],
                             nuggets_so_far: Sequence[str] = ()) -> NuggetsResult:
        check_sizes(documents=documents, nuggets_so_far=nuggets_so_far)
        q = content_words(topic.text)
        df: Counter[str] = Counter()
        per_doc = [[self._clip(s) for s in sentences(d.text)] for d in documents]
        for d in documents:
            df.update(content_words(d.text))
        cands: list[tuple[float, str]] = []
        for sents in per_doc:
            for s in sents:
                cw = content_words(s)
                if len(cw) < 3:
                    continue
                score = 2.0 * len(cw & q) + sum(df[w] for w in cw) / len(cw)
                cands.append((score, s.rstrip(".")))
        kept = [" ".join(n.split()) for n in nuggets_so_far]
        kept_sets = [content_words(n) for n in kept]
        for score, s in sorted(cands, key=lambda c: (-c[0], c[1])):
            if len(kept) >= MAX_NUGGETS:
                break
            cw = content_words(s)
            if any(len(cw & k) / max(1, len(cw | k)) >= self.dedup_jaccard for k in kept_sets):
                continue
            kept.append(s)
            kept_sets.append(cw)
        return NuggetsResult(status="ok", judge=self.name, nuggets=tuple(kept))

    def describe(self) -> dict[str, Any]:
        return {"judge": self.kind, "name": self.name, "support_threshold": self.t_support,
                "partial_threshold": self.t_partial, "vital_share": self.vital_share,
                "max_words": self.max_words, "dedup_jaccard": self.dedup_jaccard,
                "relevance_thresholds": {"related": self.t_related, "answer": self.t_answer, "exact": self.t_exact}}

    @classmethod
    def check_config(cls, config: dict[str, Any]) -> None:
        """Types, then build once (cheap, no resources) so range errors surface in the driver."""
        super().check_config(config)
        try:
            cls.from_config(config)
        except (TypeError, ValueError) as exc:
            from metaeval.errors import ConfigError

            raise ConfigError(str(exc)) from None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "LexicalJudge":
        keys = ("support_threshold", "partial_threshold", "vital_share", "max_words", "dedup_jaccard",
                "relevance_related", "relevance_answer", "relevance_exact", "name")
        return cls(**{k: config[k] for k in keys if k in config})
