"""Frozen, content-hashed job specs (HELM's RunSpec idea): identity drives deduplication and resume.

A job's key is ``sha256`` of the canonical JSON of its spec.  Two grid cells that need the same unit of work
(the same judge creating nuggets for the same topic with the same prompt) produce the same key, so the work
runs once.  What does *not* change the output (retries, timeouts, concurrency, the strategy that asked for it)
is not part of the spec.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any

from metaeval.hashing import content_hash

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.judges.catalog import JudgeSpec

#: pipeline order; ``relevance`` runs only with ``sweep.relevance=judge`` (for cells whose judge creates nuggets)
STAGES: tuple[str, ...] = ("relevance", "create", "importance", "assign")


@dataclass(frozen=True)
class JobSpec:
    """One unit of work for one judge.

    Attributes:
        stage: ``relevance`` (all relevance-grading batches over one topic's candidate documents), ``create``
            (all creation windows of one topic), ``importance`` (all importance batches of one
            topic's nugget list) or ``assign`` (all assignment batches of one answer).
        judge: the judge's identity hash (``judge_identity``: its declared identity fields).
        prompt: the prompt selection's identity (template ids and versions).
        qid: topic.
        run_id: run (``assign`` only).
        inputs: hash of everything the judge reads (documents, nugget texts, answer text).
        sample: sample index (for repeated sampling at temperature > 0).
    """

    stage: str
    judge: str
    prompt: str
    qid: str
    inputs: str
    run_id: str = ""
    sample: int = 0

    @cached_property
    def key(self) -> str:
        """Computed once per spec (the driver reads it several times per job: dispatch, store, owners)."""
        return content_hash(self.as_dict(), 24)

    def as_dict(self) -> dict[str, Any]:
        """``dataclasses.asdict`` (every field is a str or an int), without its recursive deep copy."""
        return {name: getattr(self, name) for name in _SPEC_FIELDS}


_SPEC_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(JobSpec))


def judge_identity(judge: "JudgeSpec") -> str:
    """Hash of what changes a judge's output: its declared identity (``JudgeSpec.identity``: options without the
    catalog's, cache and prompt keys, and the deployment's ``IDENTITY_FIELDS``; never limits, prices, the key's
    variable, the URL, replicas, resources, mode or batch settings)."""
    return content_hash(judge.identity())
