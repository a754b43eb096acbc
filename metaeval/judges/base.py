"""The judge interface: three async methods, each ONE unit of work, and their typed results.

A *unit* is at most one model call plus its traced re-asks, so the pipeline (not the judge) decides the paper's
batching (<=10 documents per creation call, <=10 nuggets per importance/assignment call) and hashes one job per
unit.  Sizes beyond those limits are a programming error (``ValueError``), never silently split.

=====================================================  ==========================================================
method                                                 result
=====================================================  ==========================================================
``create_nuggets(topic, documents<=10, so_far<=30)``   ``NuggetsResult.nuggets``: the updated list (<=30); on
                                                       failure ``nuggets_so_far`` unchanged and ``failed=True``
``label_importance(topic, nuggets<=10)``               ``ImportanceResult.labels``: one ``Importance`` per nugget
``assign(topic, answer, nuggets<=10)``                 ``AssignResult.labels``: one ``Support`` per nugget
``grade_relevance(topic, documents<=10)`` (optional)   ``RelevanceResult.grades``: one UMBRELA grade 0-3 per
                                                       document, ``None`` where it could not be obtained
=====================================================  ==========================================================

``grade_relevance`` is the paper's optional first stage (relevance grading of candidate documents on UMBRELA's
0-3 scale, Upadhyay et al. 2024: 0 = nothing to do with the query, 1 = related but does not answer it, 2 = has
some answer but unclear or hidden among extraneous information, 3 = dedicated to the query and contains the
exact answer).  Judges that cannot grade relevance inherit the default, which raises ``StageUnsupported`` (a
``ConfigError`` that is also a ``NotImplementedError``); each class declares what it can do in ``Judge.STAGES``,
which ``metaeval.judges.catalog`` checks in the driver before any work.

Labels that could not be obtained are ``FAILED`` (never a default label); ``raw`` keeps the last reply and
``reason`` says why.  ``traces`` holds one ``CallTrace`` per model call (re-asks included; empty for judges
that make no call).  ``label_importance`` also takes optional ``documents`` (used by the lexical judge, which
counts supporting documents; ignored by LLM judges, whose importance prompt does not show documents).

Everything is async; ``SyncJudge`` (edge use only: CLI, notebooks) runs one private event loop.
"""

from __future__ import annotations

import abc
import asyncio
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from metaeval.errors import ConfigError
from metaeval.types import Answer, Document, Importance, Nugget, Support, Topic

MAX_DOCUMENTS = 10
MAX_NUGGETS = 30
MAX_BATCH = 10


class StageUnsupported(ConfigError, NotImplementedError):
    """A judge asked for a task it cannot perform (e.g. relevance grading by a replayed label set)."""


@dataclass(frozen=True)
class JudgeResult:
    """Common fields of every result.  ``status``: ``ok`` | ``partial`` (some items FAILED) | ``failed``."""

    status: str
    reason: str | None = None
    raw: str | None = None
    traces: tuple[Any, ...] = ()
    reasks: int = 0
    judge: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def provenance(self) -> dict[str, Any]:
        return {
            "judge": self.judge, "status": self.status, "reason": self.reason, "raw": self.raw,
            "reasks": self.reasks, "traces": [t.to_dict() for t in self.traces],
        }


@dataclass(frozen=True)
class NuggetsResult(JudgeResult):
    nuggets: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImportanceResult(JudgeResult):
    labels: tuple[Importance, ...] = ()


@dataclass(frozen=True)
class AssignResult(JudgeResult):
    labels: tuple[Support, ...] = ()


@dataclass(frozen=True)
class RelevanceResult(JudgeResult):
    """``grades``: one UMBRELA grade (0-3) per document in the order given; ``None`` = FAILED for that document
    (never a default grade)."""

    grades: tuple[int | None, ...] = ()


def grades_status(grades: Sequence[int | None]) -> str:
    """``ok`` | ``partial`` | ``failed`` for a tuple of grades where ``None`` means FAILED."""
    return status_of(["FAILED" if g is None else g for g in grades])


def status_of(labels: Sequence[Any]) -> str:
    n_failed = sum(1 for x in labels if getattr(x, "value", x) == "FAILED")
    if n_failed == 0:
        return "ok"
    return "failed" if n_failed == len(labels) else "partial"


def check_sizes(documents: Sequence[Any] | None = None, nuggets_so_far: Sequence[Any] | None = None,
                batch: Sequence[Any] | None = None) -> None:
    if documents is not None and len(documents) > MAX_DOCUMENTS:
        raise ValueError(f"one creation call takes at most {MAX_DOCUMENTS} documents, got {len(documents)}")
    if nuggets_so_far is not None and len(nuggets_so_far) > MAX_NUGGETS:
        raise ValueError(f"the nugget list holds at most {MAX_NUGGETS} nuggets, got {len(nuggets_so_far)}")
    if batch is not None and len(batch) > MAX_BATCH:
        raise ValueError(f"one call labels at most {MAX_BATCH} nuggets, got {len(batch)}")


def nugget_text(n: Nugget | str) -> str:
    return n.text if isinstance(n, Nugget) else str(n)


class Judge(abc.ABC):
    """Base class.  Subclasses set ``kind`` and implement the three coroutines."""

    kind = "judge"
    #: the stages this judge can perform (the catalog checks a cell's needs against it before any job runs)
    STAGES: tuple[str, ...] = ("relevance", "create", "importance", "assign")
    #: whether repeated draws of one call can differ (``sweep.samples``: k samples per assignment call); a
    #: deterministic judge (lexical, embedding) would only repeat its labels
    SAMPLING: bool = False

    def __init__(self, name: str | None = None):
        self.name = name or self.kind

    def for_sample(self, sample: int) -> "Judge":
        """The same judge drawing sample ``sample`` (0 = this judge) of each call; it shares this judge's client,
        cache and rate limits.  ``sweep.samples=k`` runs samples 0..k-1 of every assignment call (issue 16)."""
        if sample == 0:
            return self
        if not self.SAMPLING:
            raise ConfigError(f"judge {self.name!r} (kind {self.kind!r}) is deterministic: samples would repeat its labels")
        import copy

        twin = copy.copy(self)
        twin._apply_sample(sample)
        return twin

    def _apply_sample(self, sample: int) -> None:  # pragma: no cover - SAMPLING judges override
        raise NotImplementedError

    @abc.abstractmethod
    async def create_nuggets(self, topic: Topic, documents: Sequence[Document],
                             nuggets_so_far: Sequence[str] = ()) -> NuggetsResult: ...

    @abc.abstractmethod
    async def label_importance(self, topic: Topic, nuggets: Sequence[str], *,
                               documents: Sequence[Document] | None = None) -> ImportanceResult: ...

    @abc.abstractmethod
    async def assign(self, topic: Topic, answer: Answer, nuggets: Sequence[Nugget | str]) -> AssignResult: ...

    async def grade_relevance(self, topic: Topic, documents: Sequence[Document]) -> RelevanceResult:
        """Optional: one UMBRELA grade 0-3 per document (<= 10 documents).  The default says the judge cannot."""
        raise StageUnsupported(f"judge {self.name!r} (kind {self.kind!r}) cannot grade document relevance; "
                               "use sweep.relevance=qrels or a judge that can (llm, local-llm, lexical)")

    def describe(self) -> dict[str, Any]:
        """Config and identity for provenance (no secrets)."""
        return {"judge": self.kind, "name": self.name}

    @classmethod
    def check_config(cls, config: dict[str, Any]) -> None:
        """Driver-side check of a judge config before any job runs (``metaeval.judges.catalog``); raises
        ``ConfigError`` naming the option.  Default: options named like ``__init__`` parameters must have the
        parameter's simple type (float / int / bool / str, optionally ``| None``).  Judges that are cheap to build
        may override this to build themselves once (catching range errors too)."""
        import inspect

        kinds = {"float": (int, float), "int": (int,), "bool": (bool,), "str": (str,)}
        params = inspect.signature(cls.__init__).parameters
        for key, value in config.items():
            p = params.get(key)
            if p is None or not isinstance(p.annotation, str):
                continue
            parts = [x.strip() for x in p.annotation.split("|")]
            if value is None and "None" in parts:
                continue
            allowed = tuple(t for x in parts for t in kinds.get(x, ()))
            if len(parts) > 2 or not allowed or any(x not in kinds and x != "None" for x in parts):
                continue  # not a simple type: the class checks it itself
            if isinstance(value, bool) and bool not in allowed or not isinstance(value, allowed):
                raise ConfigError(f"{key} must be {' or '.join(parts)}, got {value!r}")

    def stats(self) -> dict[str, Any]:
        """Running totals (calls, requests, cache hits, retries, failures, tokens, cost); empty for offline judges."""
        return {}

    async def aclose(self) -> None:
        return None

    def warm(self) -> None:
        """Load now what the first call would load (a model server judge: its SDK); nothing by default."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class SyncJudge:
    """Blocking wrapper for the edges (CLI, notebooks): one private event loop for the judge's lifetime."""

    def __init__(self, judge: Judge):
        self.judge = judge
        self._loop = asyncio.new_event_loop()

    def _run(self, coro: Any) -> Any:
        return self._loop.run_until_complete(coro)

    def create_nuggets(self, topic: Topic, documents: Sequence[Document], nuggets_so_far: Sequence[str] = ()) -> NuggetsResult:
        return self._run(self.judge.create_nuggets(topic, documents, nuggets_so_far))

    def label_importance(self, topic: Topic, nuggets: Sequence[str], *, documents: Sequence[Document] | None = None) -> ImportanceResult:
        return self._run(self.judge.label_importance(topic, nuggets, documents=documents))

    def assign(self, topic: Topic, answer: Answer, nuggets: Sequence[Nugget | str]) -> AssignResult:
        return self._run(self.judge.assign(topic, answer, nuggets))

    def grade_relevance(self, topic: Topic, documents: Sequence[Document]) -> RelevanceResult:
        return self._run(self.judge.grade_relevance(topic, documents))

    def close(self) -> None:
        if not self._loop.is_closed():
            self._run(self.judge.aclose())
            self._loop.close()

    def __enter__(self) -> "SyncJudge":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def missing_extra(modules: Sequence[tuple[str, str]], find_model: Callable[[], Any]) -> str | None:
    """Why an optional-extra judge cannot run here, or ``None``: the message of the first of ``modules``
    (``(module, message)``) that is not importable, else the one-line error of ``find_model()`` (its model files)."""
    import importlib.util

    from metaeval.errors import ConfigError

    for module, message in modules:
        if importlib.util.find_spec(module) is None:
            return message
    try:
        find_model()
    except ConfigError as exc:
        return str(exc)
    return None
