"""The lexical judge's importance labels: the most salient ``vital_share`` of each call are vital (formula in
``metaeval.judges.lexical``), so judge-created nugget lists have a plausible vital share and no topic lacks one."""

import asyncio

import pytest

from metaeval.data.dataset import load_dataset
from metaeval.judges.lexical import LexicalJudge, vital_by_share
from metaeval.pipeline.nuggetize import create_records
from metaeval.pipeline.stages import StageSettings
from metaeval.types import Document, Importance, Topic

V, O = Importance.VITAL, Importance.OKAY


def test_vital_by_share_counts_and_ties():
    assert vital_by_share([], 0.6) == []
    assert vital_by_share([0.1], 0.6) == [V]  # at least one
    assert vital_by_share([0.2, 0.9], 0.6) == [O, V]  # round(1.2) = 1
    assert vital_by_share([1, 1, 1, 0, 0], 0.6) == [V, V, V, O, O]  # round(3.0) = 3
    assert vital_by_share([0.5] * 4, 0.5) == [V, V, O, O]  # ties: earlier first
    assert sum(x is V for x in vital_by_share(list(range(10)), 0.6)) == 6


def test_salience_hand_computed():
    j = LexicalJudge()
    topic = Topic("q", "why do cats purr")  # content words: cat, purr
    docs = [Document("d1", "Cats purr loudly."), Document("d2", "Dogs bark loudly.")]
    s = j.salience(topic, ["cats purr", "dogs bark", "loudly"], docs)
    # "cats purr": query 2/2 + doc spread (cat: 1/2, purr: 1/2) / 2 = 1 + 0.5
    # "dogs bark": 0 + (1/2 + 1/2) / 2 = 0.5 ; "loudly": 0 + 2/2 = 1.0
    assert s == pytest.approx([1.5, 0.5, 1.0])
    labels = asyncio.run(j.label_importance(topic, ["cats purr", "dogs bark", "loudly"], documents=docs)).labels
    assert labels == (V, O, V)  # round(0.6 * 3) = 2 most salient


def test_demo_created_nuggets_have_a_plausible_vital_share():
    """On the demo (documents graded >= 1, as the sweep's default), every topic gets vital nuggets and the
    share is close to the paper's ~60% (it was 2.8% before: "vital if two documents cover it")."""
    ds = load_dataset("demo")
    rel = ds.qrels[ds.qrels["grade"] >= 1]
    pool = [(Topic(q, ds.topics[q]), [d for d in ds.documents_for(q) if d.docid in set(rel[rel.qid == q].docid)])
            for q in ds.qids]
    records, _ = create_records(LexicalJudge(), pool, StageSettings())
    shares = [sum(n["importance"] == "vital" for n in r["nuggets"]) / len(r["nuggets"]) for r in records]
    assert all(r["nuggets"] for r in records) and min(shares) > 0.4
    total = sum(len(r["nuggets"]) for r in records)
    vital = sum(n["importance"] == "vital" for r in records for n in r["nuggets"])
    assert 0.5 <= vital / total <= 0.7


def test_embedding_judge_importance_uses_the_same_share_rule():
    """The embedding judge (extra [embed]) labels importance by the same share rule; checked here with a stub
    encoder (normalised bag-of-words vectors) so the rule is tested without torch."""
    import numpy as np

    from metaeval.judges.embedding import EmbeddingJudge
    from metaeval.judges.lexical import content_words

    vocab: dict[str, int] = {}

    def encode(texts):
        out = np.zeros((len(texts), 64))
        for i, t in enumerate(texts):
            for w in content_words(t):
                out[i, vocab.setdefault(w, len(vocab))] = 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    judge = EmbeddingJudge(model_path="stub")
    judge._encode = encode
    topic = Topic("q", "why do cats purr")
    docs = [Document("d1", "Cats purr loudly. Dogs bark."), Document("d2", "Cats purr when content.")]
    texts = ["cats purr", "dogs bark", "bread rises", "cats purr when content", "loudly"]
    scores = asyncio.run(judge.salience(topic, texts, docs))
    q = encode([topic.text] + texts)
    # "cats purr": cos with the query {cat, purr} is 1; best sentence of d1 "Cats purr loudly" and of d2 "Cats purr
    # when content" both have cosine 2 / sqrt(2 * 3)
    assert scores[0] == pytest.approx(float(q[1] @ q[0]) + 2 / np.sqrt(6)) and float(q[1] @ q[0]) == pytest.approx(1.0)
    assert scores[2] == pytest.approx(0.0)
    labels = asyncio.run(judge.label_importance(topic, texts, documents=docs)).labels
    assert sum(x is V for x in labels) == 3 and labels[2] is O  # round(0.6 * 5) = 3, the unrelated nugget is okay
