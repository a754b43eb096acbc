"""Core data model: topics, documents, nuggets, answers, assignments and label sets.

Two levels live here:

* small frozen dataclasses (``Topic``, ``Document``, ``Nugget``, ``Answer``, ``Assignment``) that the judge
  layer and the pipeline pass around one item at a time, and
* ``LabelSet``, the tabular form in which every label source (NIST assessors, a judge run by metaeval,
  castorini/nuggetizer output, a simulated judge) is held for scoring, analysis and calibration.

A label set is *all labels from one source*.  Its ``labels`` table has one row per (topic, run, nugget)::

    qid  run_id  nugget_id  nugget  importance  support  line

``importance`` and ``support`` are pandas categoricals over ``IMPORTANCE_LEVELS`` / ``SUPPORT_LEVELS``; a label
that could not be read or parsed is ``FAILED`` (the raw text is kept in ``importance_raw`` / ``support_raw``),
never silently mapped to ``okay`` or ``not_support``.  ``line`` is the 1-based line of the source file (or
``-1`` for labels made in memory) so every problem can be traced back.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import Iterator, Sequence

    import numpy as np
    import pandas as pd


class Importance(str, enum.Enum):
    """Nugget importance.  ``FAILED`` marks a label that is missing or unreadable."""

    VITAL = "vital"
    OKAY = "okay"
    FAILED = "FAILED"


class Support(str, enum.Enum):
    """Nugget-to-answer assignment label (ordinal: not_support < partial_support < support)."""

    NOT_SUPPORT = "not_support"
    PARTIAL_SUPPORT = "partial_support"
    SUPPORT = "support"
    FAILED = "FAILED"

    @property
    def rank(self) -> int:
        """Ordinal rank 0/1/2 (:data:`SUPPORT_CODE`), or -1 (:data:`FAILED_CODE`) for FAILED."""
        return SUPPORT_CODE.get(self.value, FAILED_CODE)


#: The label of a missing or unreadable judgment (importance or support), and its integer code.
FAILED = "FAILED"
FAILED_CODE = -1
#: Ordinal orders of the valid labels, **lowest first** (both the same direction); a label's *code* is its
#: position here, :data:`FAILED_CODE` for FAILED or anything else (:func:`label_codes`).
SUPPORT_ORDER: tuple[str, ...] = ("not_support", "partial_support", "support")
IMPORTANCE_ORDER: tuple[str, ...] = ("okay", "vital")
#: support label -> code (0, 1, 2) in :data:`SUPPORT_ORDER`; look up with ``.get(label, FAILED_CODE)``.
SUPPORT_CODE: dict[str, int] = {name: i for i, name in enumerate(SUPPORT_ORDER)}
#: Category lists of the ``support`` / ``importance`` columns of a label set (pandas categoricals; FAILED last).
#: Both follow their order (one direction everywhere: lowest first, FAILED last): support
#: :data:`SUPPORT_ORDER`, importance :data:`IMPORTANCE_ORDER` (okay, vital).  ``IMPORTANCE_LEVELS`` is also the code
#: order of ``metaeval.calibration.pairs.Pairs.imp`` (okay 0, vital 1, FAILED 2); compare codes by name
#: (``pairs.IMP_CODES["vital"]``), never by number.
SUPPORT_LEVELS: tuple[str, ...] = (*SUPPORT_ORDER, FAILED)
IMPORTANCE_LEVELS: tuple[str, ...] = (*IMPORTANCE_ORDER, FAILED)


def label_codes(labels: Any, order: "Sequence[str]") -> "np.ndarray":
    """Position of each label in ``order`` as int8 (:data:`FAILED_CODE` = -1 for FAILED, missing or anything
    else); vectorised (one hash lookup per label)."""
    import numpy as np
    import pandas as pd

    arr = np.asarray(labels, dtype=object)
    index = pd.Index(list(order), dtype=object)
    idx = index.get_indexer(arr.reshape(-1))
    miss = np.nonzero(idx < 0)[0]
    if miss.size:  # enum members (``Support.SUPPORT``) hash by name: look their values up
        vals = [getattr(x, "value", x) for x in arr.reshape(-1)[miss]]
        idx[miss] = index.get_indexer(np.asarray(vals, dtype=object))
    return idx.astype(np.int8).reshape(arr.shape)


def support_codes(labels: Any) -> "np.ndarray":
    """Support labels -> int8 codes 0/1/2 in :data:`SUPPORT_ORDER`, -1 for FAILED or anything else."""
    return label_codes(labels, SUPPORT_ORDER)


def importance_codes(labels: Any) -> "np.ndarray":
    """Importance labels -> int8 codes 0 (okay) / 1 (vital) in :data:`IMPORTANCE_ORDER`, -1 for FAILED or else."""
    return label_codes(labels, IMPORTANCE_ORDER)


def support_labels(codes: Any) -> "np.ndarray":
    """Inverse of :func:`support_codes`: object array of label strings (-1, or any negative code, -> FAILED)."""
    import numpy as np

    names = np.array([*SUPPORT_ORDER, FAILED], dtype=object)
    c = np.asarray(codes, dtype=np.int64)
    return names[np.where(c < 0, len(SUPPORT_ORDER), c)]


LABEL_COLUMNS: tuple[str, ...] = (
    "qid",
    "run_id",
    "nugget_id",
    "nugget",
    "importance",
    "support",
    "importance_raw",
    "support_raw",
    "line",
)
ANSWER_COLUMNS: tuple[str, ...] = ("qid", "run_id", "answer_text", "response_length", "line")


def parse_importance(raw: Any) -> Importance:
    """Map a raw importance string to ``Importance``; anything unknown is ``FAILED`` (never ``okay``)."""
    if isinstance(raw, Importance):
        return raw
    if isinstance(raw, str):
        key = raw.strip().lower()
        if key in IMPORTANCE_ORDER:
            return Importance(key)
    return Importance.FAILED


def parse_support(raw: Any) -> Support:
    """Map a raw assignment string to ``Support``; anything unknown is ``FAILED`` (never ``not_support``).

    Accepted spellings: ``support``, ``partial_support``, ``not_support`` (case-insensitive; a space or a
    hyphen in place of the underscore is accepted, as LLM replies often write ``partial support``).
    """
    if isinstance(raw, Support):
        return raw
    if isinstance(raw, str):
        key = raw.strip().lower().replace("-", "_").replace(" ", "_")
        if key in SUPPORT_ORDER:
            return Support(key)
    return Support.FAILED


@dataclass(frozen=True)
class Topic:
    qid: str
    text: str


@dataclass(frozen=True)
class Document:
    docid: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class Nugget:
    text: str
    importance: Importance = Importance.FAILED
    nugget_id: int = -1


@dataclass(frozen=True)
class Answer:
    run_id: str
    qid: str
    text: str
    sentences: tuple[str, ...] = ()
    citations: tuple[tuple[int, ...], ...] = ()
    response_length: int | None = None
    references: tuple[str, ...] = ()
    topic: str = ""


@dataclass(frozen=True)
class Assignment:
    """One nugget x answer label, with where it came from."""

    qid: str
    run_id: str
    nugget: Nugget
    label: Support
    source: str
    provenance: Mapping[str, Any] = field(default_factory=dict)
    raw: str | None = None


@dataclass(frozen=True)
class LabelProblem:
    """A label that was kept as FAILED because its value was not understood."""

    path: str
    line: int
    field: str
    value: Any

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: field {self.field!r} has unknown value {self.value!r} (kept as FAILED)"


@dataclass
class LabelSet:
    """All labels from one source, addressable by ``name``.

    Attributes:
        name: the source's name, e.g. ``"nist"`` or ``"judge:gpt-4o/assign-v1"``.
        labels: one row per (qid, run_id, nugget_id); see the module docstring for the columns.
        answers: one row per (qid, run_id) with the answer text when the source carried it.
        topics: qid -> query text.
        provenance: free-form description of where the labels came from (file, checksum, config).
        problems: unknown labels that were kept as FAILED.
    """

    name: str
    labels: "pd.DataFrame"
    answers: "pd.DataFrame"
    topics: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    problems: list[LabelProblem] = field(default_factory=list)

    # ------------------------------------------------------------------ views
    @property
    def qids(self) -> list[str]:
        """The topics, sorted: those with labels, else those with answers."""
        return sorted(self.labels["qid"].unique().tolist()) if len(self.labels) else sorted(self.answers["qid"].unique())

    @property
    def run_ids(self) -> list[str]:
        """The runs with an answer, sorted."""
        return sorted(self.answers["run_id"].unique().tolist())

    def nuggets(self) -> "pd.DataFrame":
        """One row per (qid, nugget_id): the nugget text and the importance it was most often given."""
        lab = self.labels
        cols = ["qid", "nugget_id", "nugget", "importance"]
        if lab.empty:
            return lab[cols].copy()
        return lab.drop_duplicates(["qid", "nugget_id"])[cols].reset_index(drop=True)

    def failure_counts(self) -> dict[str, int]:
        """How many importance and support labels are FAILED."""
        lab = self.labels
        return {
            "importance_failed": int((lab["importance"] == "FAILED").sum()),
            "support_failed": int((lab["support"] == "FAILED").sum()),
            "labels": int(len(lab)),
        }

    def subset(self, qids: "list[str] | None" = None, run_ids: "list[str] | None" = None, name: str | None = None) -> "LabelSet":
        """A new label set restricted to the given topics and/or runs."""
        lab, ans = self.labels, self.answers
        if qids is not None:
            qs = set(qids)
            lab = lab[lab["qid"].isin(qs)]
            ans = ans[ans["qid"].isin(qs)]
        if run_ids is not None:
            rs = set(run_ids)
            lab = lab[lab["run_id"].isin(rs)]
            ans = ans[ans["run_id"].isin(rs)]
        kept = set(ans["qid"]) | set(lab["qid"])  # once, not once per topic (301 topics x 542k rows: 57 s)
        topics = {q: t for q, t in self.topics.items() if q in kept}
        return LabelSet(
            name=name or self.name,
            labels=lab.reset_index(drop=True),
            answers=ans.reset_index(drop=True),
            topics=topics,
            provenance=dict(self.provenance),
            problems=[p for p in self.problems],
        )

    def with_labels(self, support: Any, name: str, provenance: Mapping[str, Any] | None = None) -> "LabelSet":
        """A copy with the support column replaced (same rows, same order): how judges and simulations relabel."""
        lab = self.labels.copy()
        lab["support"] = make_support_categorical(support)
        lab["support_raw"] = lab["support"].astype(str)
        return LabelSet(
            name=name,
            labels=lab,
            answers=self.answers.copy(),
            topics=dict(self.topics),
            provenance=dict(provenance or {}),
            problems=[],
        )

    def __len__(self) -> int:
        """The number of labels: one per (qid, run_id, nugget_id), as in ``repr``."""
        return len(self.labels)

    def __iter__(self) -> "Iterator[tuple]":
        """The labels, one named tuple per row of ``labels`` (fields ``qid, run_id, nugget_id, ...``), so that
        ``pd.DataFrame(labelset)`` is the ``labels`` table: same rows, columns and values.

        pandas (2.x and 3.x) builds a DataFrame from an object only through iteration (neither the interchange
        protocol nor the Arrow stream protocol reaches its constructor), so this is how ``pd.DataFrame(ls)``
        works.  The frame it builds infers its dtypes: ``importance`` and ``support`` come back as strings, not
        the categoricals of ``ls.labels`` (use ``ls.labels`` itself to keep them), and an empty label set gives
        an empty frame without columns.  Nothing in the package iterates a label set or tests for iterables
        (inputs that may be one or many are told apart with ``isinstance(x, (list, tuple))``)."""
        return self.labels.itertuples(index=False, name="Label")

    def __bool__(self) -> bool:
        """A label set is true even when it holds no labels (``if labels:`` tests presence, not size)."""
        return True

    def __repr__(self) -> str:
        return (
            f"LabelSet(name={self.name!r}, topics={self.labels['qid'].nunique()}, "
            f"answers={len(self.answers)}, labels={len(self.labels)})"
        )


def make_importance_categorical(values: Any) -> "pd.Categorical":
    import pandas as pd

    return pd.Categorical(values, categories=list(IMPORTANCE_LEVELS))


def make_support_categorical(values: Any) -> "pd.Categorical":
    import pandas as pd

    return pd.Categorical(values, categories=list(SUPPORT_LEVELS))


def build_label_set(
    name: str,
    rows: list[tuple],
    answers: list[tuple],
    topics: dict[str, str] | None = None,
    provenance: dict[str, Any] | None = None,
    problems: list[LabelProblem] | None = None,
) -> LabelSet:
    """Make a ``LabelSet`` from row tuples ordered as ``LABEL_COLUMNS`` and ``ANSWER_COLUMNS``."""
    import pandas as pd

    rows = _without_lone_surrogates(name, rows, LABEL_COLUMNS, provenance)
    answers = _without_lone_surrogates(name, answers, ANSWER_COLUMNS, provenance)
    labels = pd.DataFrame.from_records(rows, columns=list(LABEL_COLUMNS))
    labels["importance"] = make_importance_categorical(labels["importance"])
    labels["support"] = make_support_categorical(labels["support"])
    labels["nugget_id"] = labels["nugget_id"].astype("int64")
    labels["line"] = labels["line"].astype("int64")
    ans = pd.DataFrame.from_records(answers, columns=list(ANSWER_COLUMNS))
    ans["line"] = ans["line"].astype("int64")
    return LabelSet(
        name=name,
        labels=labels,
        answers=ans,
        topics=dict(topics or {}),
        provenance=dict(provenance or {}),
        problems=list(problems or []),
    )


def _without_lone_surrogates(name: str, records: list[tuple], columns: tuple[str, ...],
                             provenance: dict[str, Any] | None) -> list[tuple]:
    """``records`` with every lone UTF-16 surrogate (``"\\ud800"`` from a JSON escape: valid JSON, not encodable
    as UTF-8, so Arrow, CSV and JSON writers fail on it) replaced by U+FFFD, with one warning naming the label
    set, the first line and field.  A record whose strings all encode is returned as it is (one ``encode`` per
    record on the fast path)."""
    out: list[tuple] | None = None
    first: tuple[Any, str] | None = None
    fixed = 0
    for k, rec in enumerate(records):
        try:
            "\x00".join(v for v in rec if isinstance(v, str)).encode("utf-8")
            continue
        except UnicodeEncodeError:
            pass
        if out is None:
            out = list(records)
        vals = list(rec)
        for j, v in enumerate(vals):
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    vals[j] = v.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
                    fixed += 1
                    if first is None:
                        first = (rec[columns.index("line")] if "line" in columns else -1, columns[j])
        out[k] = tuple(vals)
    if out is None:
        return records
    import logging

    src = (provenance or {}).get("path") or name
    line, field = first or (-1, "?")
    logging.getLogger(__name__).warning(
        "%s%s: field %r: %d text value(s) held a lone UTF-16 surrogate (\\ud800-\\udfff, not valid Unicode text); "
        "replaced by U+FFFD", src, f":{line}" if isinstance(line, int) and line > 0 else "", field, fixed)
    return out
