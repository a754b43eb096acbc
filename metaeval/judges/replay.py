"""Judges that answer from an existing ``LabelSet``: ``ReplayJudge`` (labels as they are) and
``SimulatedJudge`` (labels passed through a confusion matrix, seeded).

Lookup is by *text*, not position: assignment by (qid, run_id, nugget text), importance by (qid, nugget text),
with whitespace collapsed.  A nugget or answer the label set does not hold is FAILED with the reason
``not in label set <name>``; a FAILED reference label stays FAILED.  ``create_nuggets`` returns the label set's
nuggets for the topic (at most 30, documents ignored): a replayed "creation" is the reference nugget list.

``SimulatedJudge`` draws each label ``j ~ Categorical(C[h, :])`` (``metaeval.simulation``,
rows = reference label not_support / partial_support / support) with a generator seeded by
``(seed, sha256(qid, run_id, nugget))``, so a label does not depend on batching or call order.  Importance is
replayed unchanged.  Samples (``sweep.samples``, ``sample_index`` s > 0) redraw every label: independently from
the confusion row (``alpha: null``, the default: the least self-consistent judge with that confusion), or, with
``alpha``, from per-label propensities ``p ~ Dirichlet(alpha * C[h, :])`` shared by all samples.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

from metaeval.errors import ConfigError
from metaeval.judges.base import (
    MAX_NUGGETS, AssignResult, ImportanceResult, Judge, NuggetsResult, check_sizes, nugget_text, status_of,
)
from metaeval.types import Answer, Document, Importance, LabelSet, Nugget, Support, Topic


def _norm(text: str) -> str:
    return " ".join(str(text).split()).lower()


def _load(spec: Any) -> LabelSet:
    if isinstance(spec, LabelSet):
        return spec
    if isinstance(spec, str):
        from metaeval.io import load_labels

        return load_labels(spec)
    raise ConfigError(f"expected a LabelSet or a path to a label file, got {type(spec).__name__}")


class ReplayJudge(Judge):
    kind = "replay"
    STAGES = ("importance", "assign")  # replays stored labels: no documents to grade, no nuggets to create

    def __init__(self, labels: LabelSet, name: str | None = None):
        super().__init__(name or f"replay:{labels.name}")
        self.labels = labels
        lab = labels.labels
        self._support: dict[tuple[str, str, str], str] = {}
        self._importance: dict[tuple[str, str], str] = {}
        self._nuggets: dict[str, list[str]] = {}
        for qid, run, text, imp, sup in zip(lab["qid"], lab["run_id"], lab["nugget"], lab["importance"].astype(str), lab["support"].astype(str)):
            self._support[(str(qid), str(run), _norm(text))] = sup
            self._importance.setdefault((str(qid), _norm(text)), imp)
            seen = self._nuggets.setdefault(str(qid), [])
            if text not in seen:
                seen.append(text)

    def _missing(self, what: list[int]) -> str | None:
        return f"nugget(s) {what} not in label set {self.labels.name}" if what else None

    def reference_support(self, qid: str, run_id: str, nuggets: Sequence[Nugget | str]) -> tuple[list[str], list[int]]:
        out, missing = [], []
        for i, n in enumerate(nuggets):
            lab = self._support.get((str(qid), str(run_id), _norm(nugget_text(n))))
            if lab is None:
                missing.append(i + 1)
            out.append(lab or "FAILED")
        return out, missing

    async def assign(self, topic: Topic, answer: Answer, nuggets: Sequence[Nugget | str]) -> AssignResult:
        check_sizes(batch=nuggets)
        labs, missing = self.reference_support(topic.qid, answer.run_id, nuggets)
        out = tuple(Support(x) for x in labs)
        return AssignResult(status=status_of(out), reason=self._missing(missing), judge=self.name, labels=out)

    async def label_importance(self, topic: Topic, nuggets: Sequence[str], *,
                               documents: Sequence[Document] | None = None) -> ImportanceResult:
        check_sizes(batch=nuggets)
        out, missing = [], []
        for i, n in enumerate(nuggets):
            lab = self._importance.get((str(topic.qid), _norm(nugget_text(n))))
            if lab is None:
                missing.append(i + 1)
            out.append(Importance(lab) if lab else Importance.FAILED)
        return ImportanceResult(status=status_of(out), reason=self._missing(missing), judge=self.name, labels=tuple(out))

    async def create_nuggets(self, topic: Topic, documents: Sequence[Document],
                             nuggets_so_far: Sequence[str] = ()) -> NuggetsResult:
        check_sizes(documents=documents, nuggets_so_far=nuggets_so_far)
        ref = self._nuggets.get(str(topic.qid))
        if not ref:
            return NuggetsResult(status="failed", reason=f"topic {topic.qid} not in label set {self.labels.name}",
                                 judge=self.name, nuggets=tuple(nuggets_so_far))
        return NuggetsResult(status="ok", judge=self.name, nuggets=tuple(ref[:MAX_NUGGETS]))

    def describe(self) -> dict[str, Any]:
        return {"judge": self.kind, "name": self.name, "labels": self.labels.name,
                "source": self.labels.provenance.get("path")}

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "ReplayJudge":
        if "labels" not in config:
            raise ConfigError("a replay judge config needs 'labels' (a label file path or a LabelSet)")
        return cls(_load(config["labels"]), name=config.get("name"))


class SimulatedJudge(ReplayJudge):
    kind = "simulated"
    STAGES = ("assign",)  # passes reference support labels through a confusion matrix

    SAMPLING = True  # sample s redraws every label (see ``assign``)

    def __init__(self, reference: LabelSet, confusion: Any = None, seed: int = 0, name: str | None = None,
                 sample_index: int = 0, alpha: float | None = None):
        from metaeval.simulation import DEFAULT_CONFUSION, resolve_confusion

        super().__init__(reference, name=name or f"simulated:{reference.name}")
        self.confusion_spec = DEFAULT_CONFUSION if confusion is None else confusion
        self.confusion = resolve_confusion(self.confusion_spec)
        self.seed = int(seed)
        self.sample_index = int(sample_index)
        if alpha is not None and not float(alpha) > 0:
            raise ConfigError(f"alpha must be > 0 (or null for independent draws), got {alpha!r}")
        self.alpha = None if alpha is None else float(alpha)

    def _apply_sample(self, sample: int) -> None:
        self.sample_index = self.sample_index + int(sample)

    async def assign(self, topic: Topic, answer: Answer, nuggets: Sequence[Nugget | str]) -> AssignResult:
        import numpy as np

        from metaeval.simulation import simulate_support

        check_sizes(batch=nuggets)
        ref, missing = self.reference_support(topic.qid, answer.run_id, nuggets)
        out = []
        for n, lab in zip(nuggets, ref):
            digest = hashlib.sha256("\x1f".join((str(topic.qid), str(answer.run_id), _norm(nugget_text(n)))).encode()).digest()
            item = int.from_bytes(digest[:8], "little")
            if self.alpha is None:  # every draw independent from the confusion row (sample 0: the historical stream)
                rng = np.random.default_rng([self.seed, item] + ([self.sample_index] if self.sample_index else []))
                out.append(Support(str(simulate_support(np.array([lab], dtype=object), self.confusion, rng)[0])))
            else:
                out.append(Support(self._draw_with_propensity(lab, item)))
        return AssignResult(status=status_of(out), reason=self._missing(missing), judge=self.name, labels=tuple(out))

    def _draw_with_propensity(self, label: str, item: int) -> str:
        """A label with its own propensities: ``p ~ Dirichlet(alpha * C[h, :])`` (one per label, shared by every
        sample), then sample ``s`` draws ``~ Categorical(p)``.  The marginal confusion stays ``C`` for every
        ``alpha``; small ``alpha`` = a self-consistent judge, large ``alpha`` = independent draws
        (``metaeval.planning.consistency``)."""
        import numpy as np

        from metaeval.simulation import codes_to_labels, labels_to_codes

        h = int(labels_to_codes(np.array([label], dtype=object))[0])
        if h < 0:
            return "FAILED"
        p = np.random.default_rng([self.seed, item]).gamma(self.alpha * np.maximum(self.confusion[h], 1e-9))
        u = np.random.default_rng([self.seed, item, self.sample_index, 1]).random()
        code = int(min((u >= np.cumsum(p / p.sum())[:2]).sum(), 2))
        return str(codes_to_labels(np.array([code], dtype=np.int8))[0])

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "confusion": self.confusion.round(6).tolist(),
                "confusion_spec": self.confusion_spec if isinstance(self.confusion_spec, str) else "matrix",
                "seed": self.seed, "sample_index": self.sample_index, "alpha": self.alpha}

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "SimulatedJudge":
        ref = config.get("reference", config.get("labels"))
        if ref is None:
            raise ConfigError("a simulated judge config needs 'reference' (a label file path or a LabelSet)")
        alpha = config.get("alpha")
        return cls(_load(ref), confusion=config.get("confusion"), seed=int(config.get("seed", 0)), name=config.get("name"),
                   sample_index=int(config.get("sample_index", 0)), alpha=None if alpha is None else float(alpha))
