"""The bundled demo dataset: reproducible from its generator, consistent, readable by the io readers."""

import importlib.util
import json
import re
import sys
from pathlib import Path
from collections import Counter

import pytest

from metaeval.data.dataset import load_dataset
from metaeval.data.fetch import DEMO_DIR

#: the generator lives outside the package (scripts/), the files it writes inside it (metaeval/data/demo/)
BUILDER = Path(__file__).resolve().parents[2] / "scripts" / "build_demo.py"


@pytest.fixture(scope="module")
def demo():
    return load_dataset("demo")


@pytest.fixture(scope="module")
def builder():
    spec = importlib.util.spec_from_file_location("build_demo", BUILDER)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["build_demo"] = mod  # dataclasses look their module up here
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop("build_demo", None)
        raise
    return mod


def test_committed_files_equal_a_fresh_build(builder):
    files = builder.build()
    assert set(files) == {"topics.tsv", "documents.jsonl", "qrels.txt", "runs.jsonl", "nuggets.jsonl", "assignments.jsonl", "README.md"}
    for fn, content in files.items():
        assert (DEMO_DIR / fn).read_text(encoding="utf-8") == content, f"{fn} differs; run python scripts/build_demo.py"
    assert builder.build() == files  # deterministic


def test_small_and_honestly_described():
    data = [p for p in DEMO_DIR.iterdir() if p.name != "README.md" and p.is_file()]
    assert sum(p.stat().st_size for p in data) < 200 * 1024
    readme = (DEMO_DIR / "README.md").read_text()
    assert "ILLUSTRATIVE DEMO DATA" in readme and "NOT REAL ASSESSMENTS" in readme


def test_shape(demo):
    s = demo.summary()
    assert s["topics"] == 8 and s["runs"] == 8 and s["answers"] == 64
    assert demo.labels is not None and demo.nuggets is not None and demo.qrels is not None
    per_topic = demo.nuggets.groupby("qid").size()
    assert per_topic.between(6, 10).all()
    assert len(demo.labels.labels) == sum(per_topic[q] * 8 for q in per_topic.index)
    for qid in demo.qids:
        docs = demo.documents_for(qid)
        assert 6 <= len(docs) <= 10
        assert all(re.fullmatch(rf"demo_doc_{qid}_\d+", d.docid) for d in docs)
        assert all(2 <= len(re.findall(r"[.!?](\s|$)", d.text)) <= 5 for d in docs), qid


def test_consistency(demo):
    assert demo.check() == []
    # every assignment's nugget is a human nugget of that topic, with the same text and importance
    ref = {(r.qid, r.nugget_id): (r.nugget, str(r.importance)) for r in demo.nuggets.itertuples()}
    for r in demo.labels.labels.itertuples():
        assert ref[(r.qid, r.nugget_id)] == (r.nugget, str(r.importance))
    # every run answers every topic; every cited document exists for that topic
    assert Counter(a.run_id for a in demo.answers) == {r: 8 for r in demo.run_ids}
    docids = {q: {d.docid for d in demo.documents_for(q)} for q in demo.qids}
    for a in demo.answers:
        assert set(a.references) <= docids[a.qid]
        for c in a.citations:
            assert all(0 <= i < len(a.references) for i in c)
    # the labelled answer text is the run's answer
    texts = {(a.qid, a.run_id): a.text for a in demo.answers}
    for r in demo.labels.answers.itertuples():
        assert texts[(r.qid, r.run_id)] == r.answer_text


def test_importance_and_label_shares(demo):
    imp = demo.nuggets["importance"].astype(str)
    assert 0.55 <= (imp == "vital").mean() <= 0.65
    assert set(imp) == {"vital", "okay"}
    assert all(5 <= len(t.split()) <= 12 for t in demo.nuggets["nugget"])
    sup = demo.labels.labels["support"].astype(str).value_counts()
    assert set(sup.index) == {"support", "partial_support", "not_support"}
    assert min(sup) >= 50  # every label is well represented
    grades = demo.qrels["grade"]
    assert set(grades) == {0, 1, 2, 3}


def test_nugget_sources_are_relevant_documents(builder, demo):
    grade = {(r.qid, r.docid): r.grade for r in demo.qrels.itertuples()}
    for t in builder.TOPICS:
        for n in t.nuggets:
            for d in n.docs:
                assert grade[(t.qid, f"demo_doc_{t.qid}_{d}")] >= 1


def test_labels_agree_with_the_sentences(builder):
    """Recompute every label from the hand-written sentences present in the committed answer texts."""
    topics = {t.qid: t for t in builder.TOPICS}
    for line in (DEMO_DIR / "assignments.jsonl").read_text().splitlines():
        rec = json.loads(line)
        t = topics[rec["qid"]]
        text = rec["answer_text"]
        expect = ["not_support"] * len(t.nuggets)
        for i, n in enumerate(t.nuggets):
            variants = [(n.full, "support", n.also.get("full", {})), (n.partial, "partial_support", n.also.get("partial", {}))]
            if n.border:
                variants.append((n.border[0], n.border[1], {}))
            for sent, lab, also in variants:
                if sent in text:
                    for j, l2 in [(i, lab), *also.items()]:
                        if builder.RANK[l2] > builder.RANK[expect[j]]:
                            expect[j] = l2
        assert [x["assignment"] for x in rec["nuggets"]] == expect, (rec["qid"], rec["run_id"])


def test_run_quality_spreads_from_excellent_to_poor(demo):
    from metaeval.scoring import run_scores, score_answers

    runs = run_scores(score_answers(demo.labels)).set_index("run_id")["v_strict"]
    assert runs["demo-a"] == runs.max() and runs["demo-h"] == runs.min()
    assert runs["demo-a"] > 0.8 and runs["demo-h"] < 0.1
    assert runs["demo-b"] > runs["demo-d"] > runs["demo-g"]


def test_round_trip_through_io_readers(tmp_path, demo):
    from metaeval.io import detect_format
    from metaeval.io.answers import read_answers, write_answers
    from metaeval.io.assignments import read_assignments, write_assignments
    from metaeval.io.nuggets import read_nuggets, write_nuggets
    from metaeval.io.trec import read_qrels, read_topics, write_qrels, write_topics

    expected = {"topics.tsv": "topics", "qrels.txt": "qrels", "runs.jsonl": "answers",
                "nuggets.jsonl": "nuggets", "assignments.jsonl": "assignments"}
    for fn, fmt in expected.items():
        assert detect_format(DEMO_DIR / fn) == fmt, fn

    write_answers(demo.answers, tmp_path / "runs.jsonl")
    assert (tmp_path / "runs.jsonl").read_text() == (DEMO_DIR / "runs.jsonl").read_text()
    assert read_answers(tmp_path / "runs.jsonl") == demo.answers

    write_assignments(demo.labels, tmp_path / "assignments.jsonl")
    again = read_assignments(tmp_path / "assignments.jsonl", name="human")
    cols = ["qid", "run_id", "nugget_id", "nugget", "importance", "support"]
    assert again.labels[cols].equals(demo.labels.labels[cols])

    nug = read_nuggets(DEMO_DIR / "nuggets.jsonl")
    write_nuggets(nug, tmp_path / "nuggets.jsonl")
    assert (tmp_path / "nuggets.jsonl").read_text() == (DEMO_DIR / "nuggets.jsonl").read_text()

    write_topics(read_topics(DEMO_DIR / "topics.tsv"), tmp_path / "topics.tsv")
    assert (tmp_path / "topics.tsv").read_text() == (DEMO_DIR / "topics.tsv").read_text()
    write_qrels(read_qrels(DEMO_DIR / "qrels.txt"), tmp_path / "qrels.txt")
    assert (tmp_path / "qrels.txt").read_text() == (DEMO_DIR / "qrels.txt").read_text()


def test_load_demo_by_folder_path_equals_by_name(demo):
    by_path = load_dataset(DEMO_DIR)
    assert by_path.summary() | {"name": "demo"} == demo.summary()
    assert by_path.answers == demo.answers
    assert [f["md5"] for f in by_path.provenance["files"]] == [f["md5"] for f in demo.provenance["files"]]
