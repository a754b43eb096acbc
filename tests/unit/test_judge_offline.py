"""Offline judges: lexical (hand-computed overlaps), replay and simulated (against the NIST label set)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from metaeval.judges import make_judge
from metaeval.judges.lexical import LexicalJudge, best_coverage, content_words
from metaeval.types import Answer, Document, Importance, Support, Topic

run = asyncio.run


def test_content_words_and_coverage_by_hand():
    assert content_words("The cats are purring loudly") == {"cat", "purr", "loudly"}
    # nugget {cat, purr, larynx}; best window "Cats purr with the larynx muscles." covers all 3
    assert best_coverage("Cats purr with the larynx", ["Dogs bark.", "Cats purr with the larynx muscles."]) == 1.0
    # 1 of 3 words in any single sentence, but 2 of 3 in an adjacent pair
    assert best_coverage("cats purr larynx", ["Cats sleep.", "Purring is common."]) == pytest.approx(2 / 3)


def test_lexical_assign_thresholds():
    j = LexicalJudge(support_threshold=0.6, partial_threshold=0.3)
    ans = Answer("r", "q", "Cats purr by vibrating the larynx. Purring often signals contentment.")
    res = run(j.assign(Topic("q", "why do cats purr"), ans, [
        "Cats purr by vibrating the larynx",          # 4/4 -> support
        "Purring lowers stress hormones in humans",   # purr 1/5 -> not_support
        "Cats purr when injured or frightened",       # cat, purr 2/5 = 0.4 -> partial
        "the of and",                                 # stop words only, not in the answer -> not_support
        "...",                                        # no word at all -> FAILED with a reason
    ]))
    assert res.labels == (Support.SUPPORT, Support.NOT_SUPPORT, Support.PARTIAL_SUPPORT, Support.NOT_SUPPORT,
                          Support.FAILED)
    assert res.status == "partial" and "nugget(s) [5] have no words to match" in res.reason


def test_lexical_decides_a_stop_word_nugget_by_its_word_sequence():
    """"She's All That" has no content word (she, s, all, that are stop words or single letters): an offline judge
    can still decide it, by the title's words in order."""
    j = LexicalJudge()
    ans = Answer("r", "q", "The 1999 film She's All That starred Freddie Prinze Jr. That is all she said.")
    res = run(j.assign(Topic("q", "which teen films"), ans, ["She's All That", "All that she", "That is all she"]))
    assert res.labels == (Support.SUPPORT, Support.NOT_SUPPORT, Support.SUPPORT) and res.status == "ok"


def test_lexical_create_and_importance():
    docs = [Document("d1", "Cats purr by vibrating the larynx muscles. The weather is nice today."),
            Document("d2", "Purring happens when cats vibrate the larynx muscles. Cats also purr when injured."),
            Document("d3", "Cats purr when injured, which may help healing. Bread needs yeast.")]
    t = Topic("q", "why do cats purr")
    res = run(LexicalJudge().create_nuggets(t, docs, ["Cats purr by vibrating the larynx muscles"]))
    assert res.status == "ok" and res.nuggets[0] == "Cats purr by vibrating the larynx muscles"
    assert len(res.nuggets) <= 30 and len(set(res.nuggets)) == len(res.nuggets)
    assert not any(n.startswith("Cats purr by vibrating") for n in res.nuggets[1:])  # de-duplicated
    imp = run(LexicalJudge().label_importance(t, ["cats purr larynx muscles", "bread needs yeast"], documents=docs))
    assert imp.labels == (Importance.VITAL, Importance.OKAY)  # 2 supporting documents vs 1
    imp2 = run(LexicalJudge().label_importance(t, ["cats purr", "bread needs yeast"]))
    assert imp2.labels == (Importance.VITAL, Importance.OKAY) and "query-term overlap" in imp2.reason


def _nist_unit(nist_labels, k=0):
    lab = nist_labels.labels
    qid, run_id = lab.iloc[k]["qid"], lab.iloc[k]["run_id"]
    rows = lab[(lab.qid == qid) & (lab.run_id == run_id)].sort_values("nugget_id").head(9)
    return Topic(qid, nist_labels.topics[qid]), Answer(run_id, qid, ""), rows


def test_replay_reproduces_nist_and_fails_unknown(nist_labels):
    judge = make_judge({"judge": "replay", "labels": nist_labels})
    topic, answer, rows = _nist_unit(nist_labels)
    res = run(judge.assign(topic, answer, rows["nugget"].tolist() + ["a nugget NIST never wrote"]))
    assert [x.value for x in res.labels[:-1]] == rows["support"].astype(str).tolist()
    assert res.labels[-1] is Support.FAILED and "not in label set" in res.reason
    imp = run(judge.label_importance(topic, rows["nugget"].tolist()))
    assert [x.value for x in imp.labels] == rows["importance"].astype(str).tolist()
    created = run(judge.create_nuggets(topic, []))
    assert created.nuggets[: len(rows)] == tuple(rows["nugget"])
    missing = run(judge.create_nuggets(Topic("nope", "x"), []))
    assert missing.failed and "not in label set" in missing.reason


def test_simulated_identity_confusion_replays_and_is_order_independent(nist_labels):
    topic, answer, rows = _nist_unit(nist_labels, 100)
    nuggets = rows["nugget"].tolist()
    ident = make_judge({"judge": "simulated", "reference": nist_labels, "confusion": np.eye(3).tolist()})
    assert [x.value for x in run(ident.assign(topic, answer, nuggets)).labels] == rows["support"].astype(str).tolist()
    sim = make_judge({"judge": "simulated", "reference": nist_labels, "seed": 7})
    a = run(sim.assign(topic, answer, nuggets))
    b = run(sim.assign(topic, answer, nuggets[::-1]))
    assert a.labels == b.labels[::-1]  # a label depends on (seed, qid, run, nugget), not on batching
    other = make_judge({"judge": "simulated", "reference": nist_labels, "seed": 8})
    assert all(x.value != "FAILED" for x in a.labels)
    assert sim.describe()["confusion_spec"] == "paper-fig6-edits" and other.seed == 8


def test_simulated_rates_follow_the_confusion_matrix(nist_labels):
    conf = np.array([[0.5, 0.0, 0.5], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    sim = make_judge({"judge": "simulated", "reference": nist_labels, "confusion": conf.tolist(), "seed": 1})
    lab = nist_labels.labels
    lab = lab[lab.support == "not_support"].head(400)
    flips = 0
    for (qid, run_id), grp in lab.groupby(["qid", "run_id"], observed=True):
        for start in range(0, len(grp), 10):
            chunk = grp.iloc[start:start + 10]
            res = run(sim.assign(Topic(qid, ""), Answer(run_id, qid, ""), chunk["nugget"].tolist()))
            flips += sum(x is Support.SUPPORT for x in res.labels)
            assert all(x in (Support.SUPPORT, Support.NOT_SUPPORT) for x in res.labels)
    # Binomial(400, 0.5): mean 200, sd 10 -> a 4-sd band
    assert 160 <= flips <= 240


@pytest.mark.slow
def test_embedding_judge_if_installed():
    from metaeval.judges.embedding import extra_missing

    why = extra_missing()
    if why:
        pytest.skip(f"embedding extra not installed: {why}")
    judge = make_judge("embedding")
    ans = Answer("r", "q", "Cats purr by vibrating their larynx. Bread rises because yeast makes gas.")
    res = run(judge.assign(Topic("q", "why do cats purr"), ans, [
        "Cats produce the purr with the larynx", "Stock markets fell sharply on Monday"]))
    assert res.labels[0] in (Support.SUPPORT, Support.PARTIAL_SUPPORT) and res.labels[1] is Support.NOT_SUPPORT
