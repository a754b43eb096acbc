"""Judges that answer from an existing ``LabelSet``: ``ReplayJudge`` (labels as they are) and
``SimulatedJudge`` (labels passed through a confusion matrix, seeded).

Lookup is by *text*, not position: assignment by (qid, run_id, nugget text), importance by (qid, nugget text),
with whitespace collapsed.  A nugget or answer the label set does not hold is FAILED with the reason
``not in label set <name>``; a FAILED reference label stays FAILED.  ``create_nuggets`` returns the label set's
nuggets for the topic (at most 30, documents ignored): a replayed "creation" is the reference nugget list.

``SimulatedJudge`` draws each label ``j ~ Categorical(C[h, :])`` (``metaeval.simulation``,
rows = reference label not_support / partial_support / support) with a generator seeded by
``(seed, sha256(qid, run_id, nugget))``, so a label does not depend on batching or call order
(``metaeval.random_streams.judge_stream(seed, item)``, its first uniform computed by ``metaeval.seeded_uniform``
at a fraction of the cost).  Importance is
replayed unchanged.  Samples (``sweep.samples``, ``sample_index`` s > 0) redraw every label: independently from
the confusion row (``alpha: null``, the default: the least self-consistent judge with that confusion), or, with
``alpha``, from per-label propensities ``p ~ Dirichlet(alpha * C[h, :])`` shared by all samples.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any, Mapping, Sequence

from metaeval.errors import ConfigError
from metaeval.judges.base import (
    MAX_NUGGETS, AssignResult, ImportanceResult, Judge, NuggetsResult, check_sizes, nugget_text, status_of,
)
from metaeval.types import SUPPORT_CODE, SUPPORT_ORDER, Answer, Document, Importance, LabelSet, Nugget, Support, Topic


#: code (``metaeval.types.SUPPORT_CODE``, position in ``SUPPORT_ORDER``) -> support label
_SUPPORT_BY_CODE = tuple(Support(name) for name in SUPPORT_ORDER)


@functools.lru_cache(maxsize=1 << 16)
def _norm(text: str) -> str:
    """Whitespace collapsed, lower case (memoised: a topic's nugget texts recur in every answer's batches)."""
    return " ".join(str(text).split()).lower()


def _load(spec: Any) -> LabelSet:
    if isinstance(spec, LabelSet):
        return spec
    if isinstance(spec, str):
        from metaeval.io import load_labels

        return load_labels(spec)
    raise ConfigError(f"expected a LabelSet or a path to a label file, got {type(spec).__name__}")


class ReplayJudge(Judge):
    #: the config options ``from_config`` reads (besides judge, name, concurrency, requires, label, cache)
    OPTIONS: tuple[str, ...] = ("labels",)
    kind = "replay"
    STAGES = ("importance", "assign")  # replays stored labels: no documents to grade, no nuggets to create

    def __init__(self, labels: LabelSet, name: str | None = None):
        super().__init__(name or f"replay:{labels.name}")
        self.labels = labels
        lab = labels.labels
        self._support: dict[tuple[str, str, str], str] = {}
        self._importance: dict[tuple[str, str], str] = {}
        self._nuggets: dict[str, list[str]] = {}
        # plain lists first: iterating pandas (Arrow-backed) columns element by element is ~1 us per element
        for qid, run, text, imp, sup in zip(lab["qid"].tolist(), lab["run_id"].tolist(), lab["nugget"].tolist(),
                                            lab["importance"].astype(str).tolist(), lab["support"].astype(str).tolist()):
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
    OPTIONS: tuple[str, ...] = ("reference", "labels", "confusion", "seed", "sample_index", "alpha")
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
        self._cum: Any = None

    def _thresholds(self) -> tuple[list[list[float]], list[int | None]]:
        """``simulate_codes``' class thresholds for this confusion (cumulative rows, last column 1 + 1e-12),
        computed once instead of per label; and per row the class every draw gives (a one-hot row, e.g. an
        identity confusion: the same class for the smallest and the largest uniform), else None."""
        if self._cum is None:
            import numpy as np

            from metaeval.simulation import row_stochastic

            cum = np.cumsum(row_stochastic(self.confusion), axis=1)
            cum[:, -1] = 1.0 + 1e-12
            rows = cum[:, :2].tolist()
            top = 1.0 - 2.0 ** -53  # the largest value random() returns
            lowest = [(0.0 >= a) + (0.0 >= b) for a, b in rows]  # the class of u = 0 per row
            fixed = [lo if lo == (top >= a) + (top >= b) else None for lo, (a, b) in zip(lowest, rows)]
            self._cum = (rows, fixed)
        return self._cum

    def _apply_sample(self, sample: int) -> None:
        self.sample_index = self.sample_index + int(sample)

    async def assign(self, topic: Topic, answer: Answer, nuggets: Sequence[Nugget | str]) -> AssignResult:
        from metaeval.seeded_uniform import first_uniform

        check_sizes(batch=nuggets)
        qid, run = str(topic.qid), str(answer.run_id)
        texts = [_norm(nugget_text(n)) for n in nuggets]
        ref, missing = [], []  # = reference_support(), normalising each text once
        for i, t in enumerate(texts):
            lab = self._support.get((qid, run, t))
            if lab is None:
                missing.append(i + 1)
            ref.append(lab or "FAILED")
        out = []
        cum, fixed = self._thresholds()
        extra = [self.sample_index] if self.sample_index else []
        for t, lab in zip(texts, ref):
            h = SUPPORT_CODE.get(lab)
            if self.alpha is None and (h is None or fixed[h] is not None):  # FAILED, or a row every draw agrees on
                out.append(Support.FAILED if h is None else _SUPPORT_BY_CODE[fixed[h]])
                continue
            digest = hashlib.sha256("\x1f".join((qid, run, t)).encode()).digest()
            item = int.from_bytes(digest[:8], "little")
            if self.alpha is None:  # every draw independent from the confusion row (sample 0: the historical stream)
                # = simulate_support([lab], confusion, judge_stream(seed, item(, sample))) for one label, without
                # its per-call array work: one uniform draw u, class = number of thresholds of row h that u reaches
                u = first_uniform([self.seed, item, *extra])  # = judge_stream(seed, item(, s)).random()
                out.append(_SUPPORT_BY_CODE[(u >= cum[h][0]) + (u >= cum[h][1])])
            else:
                out.append(Support(self._draw_with_propensity(lab, item)))
        return AssignResult(status=status_of(out), reason=self._missing(missing), judge=self.name, labels=tuple(out))

    def _draw_with_propensity(self, label: str, item: int) -> str:
        """A label with its own propensities: ``p ~ Dirichlet(alpha * C[h, :])`` (one per label, shared by every
        sample), then sample ``s`` draws ``~ Categorical(p)``.  The marginal confusion stays ``C`` for every
        ``alpha``; small ``alpha`` = a self-consistent judge, large ``alpha`` = independent draws
        (``metaeval.planning.consistency``)."""
        import numpy as np

        from metaeval.random_streams import judge_stream
        from metaeval.seeded_uniform import first_uniform

        h = SUPPORT_CODE.get(label)
        if h is None:
            return "FAILED"
        p = judge_stream(self.seed, item).gamma(self.alpha * np.maximum(self.confusion[h], 1e-9))
        u = first_uniform([self.seed, item, self.sample_index, 1])
        code = int(min((u >= np.cumsum(p / p.sum())[:2]).sum(), 2))
        return SUPPORT_ORDER[code]

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
