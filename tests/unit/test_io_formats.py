"""Readers and writers against the real files in ../shared/data, and bad input with clear errors."""

from __future__ import annotations

import json
import logging

import pytest

from metaeval.errors import FormatError
from metaeval.io import detect_format, load_labels, read
from metaeval.io.answers import read_answers, write_answers
from metaeval.io.assignments import read_assignments, write_assignments
from metaeval.io.metrics import read_metrics, write_metrics
from metaeval.io.nuggets import read_nuggets, write_nuggets
from metaeval.io.scores import read_score_table, write_table
from metaeval.io.trec import read_qrels, read_topics
from metaeval.scoring import score_answers, to_long

NIST_LINE = {"query": "q", "qid": "1", "run_id": "r", "answer_text": "a", "response_length": 1,
             "nuggets": [{"text": "n0", "importance": "vital", "assignment": "support"}]}


def write_lines(tmp_path, lines, name="f.jsonl"):
    p = tmp_path / name
    p.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return p


def test_nist_shape(nist_labels):
    assert nist_labels.labels["qid"].nunique() == 21
    assert len(nist_labels.run_ids) == 45
    assert len(nist_labels.labels) == 13158
    assert len(nist_labels.nuggets()) == 298
    assert nist_labels.problems == []


def test_assignment_round_trip_is_lossless(tmp_path, nuggetizer_dir):
    src = nuggetizer_dir / "assignments_baseline_rag24.test_gpt4o_top20.jsonl"
    a = read_assignments(src)
    out = tmp_path / "rt.jsonl"
    write_assignments(a, out)
    with open(src, encoding="utf-8") as f1, open(out, encoding="utf-8") as f2:
        for l1, l2 in zip(f1, f2):
            r1, r2 = json.loads(l1), json.loads(l2)
            assert r1 == r2
    assert len(read_assignments(out).problems) == len(a.problems) == 65


def test_unknown_labels_kept_as_failed_and_reported(nuggetizer_dir, caplog):
    with caplog.at_level(logging.WARNING):
        a = read_assignments(nuggetizer_dir / "assignments_baseline_rag24.test_gpt4o_top20.jsonl")
    fc = a.failure_counts()
    assert fc["support_failed"] == 25 and fc["importance_failed"] == 40
    est = a.labels[a.labels["support_raw"] == "established"]
    assert len(est) == 3 and set(est["support"]) == {"FAILED"}
    assert "65 unknown label value(s) kept as FAILED" in caplog.text and "line 31" in caplog.text


@pytest.mark.parametrize(
    "line, field, message",
    [
        ('{"qid": "1", "run_id": "r", "nuggets": [}', "", "malformed JSON"),
        ({"qid": "1", "nuggets": []}, "run_id", "missing required field"),
        ({"qid": "1", "run_id": "r", "nuggets": "x"}, "nuggets", "expected a list"),
        ({"qid": "1", "run_id": "r", "nuggets": [{"importance": "vital"}]}, "nuggets[0].text", "missing"),
        ({"qid": "1", "run_id": 5, "nuggets": []}, "run_id", "expected a string"),
        ('[1, 2]', "", "expected a JSON object"),
    ],
)
def test_structural_errors_name_file_line_field(tmp_path, line, field, message):
    p = write_lines(tmp_path, [dict(NIST_LINE, qid="a"), dict(NIST_LINE, qid="b"), line])
    with pytest.raises(FormatError, match=message) as err:
        read_assignments(p)
    assert err.value.line == 3 and err.value.field == field and str(p) in str(err.value)


def test_duplicate_and_empty(tmp_path):
    p = write_lines(tmp_path, [NIST_LINE, NIST_LINE])
    with pytest.raises(FormatError, match="duplicate .* first seen on line 1") as err:
        read_assignments(p)
    assert err.value.line == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(FormatError, match="empty file"):
        read_assignments(empty)


def test_non_utf8_is_a_clear_error(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(json.dumps(NIST_LINE).encode() + b"\n\xff\xfe\n")
    with pytest.raises(FormatError, match="not UTF-8"):
        read_assignments(p)


def test_one_unknown_label_in_many_lines(tmp_path):
    lines = [dict(NIST_LINE, qid=str(i)) for i in range(2000)]
    lines[1234] = dict(NIST_LINE, qid="1234", nuggets=[{"text": "n0", "importance": "vital", "assignment": "maybe"}])
    a = read_assignments(write_lines(tmp_path, lines))
    assert len(a.answers) == 2000
    assert [(p.line, p.value) for p in a.problems] == [(1235, "maybe")]
    s = score_answers(a).set_index("qid")
    assert s.loc["1234", "n_failed"] == 1 and s.drop("1234")["v_strict"].eq(1.0).all()


def test_answers_reader_matches_nist_answer_text(shared_data, nist_labels):
    runs = read_answers(shared_data / "trec-rag-2024/runs/baseline_rag24.test_l31_70b_instruct_top20.jsonl")
    assert len(runs) == 301 and all(a.run_id == "baseline_rag24.test_l31_70b_instruct_top20" for a in runs)
    nist = nist_labels.answers.set_index(["run_id", "qid"])["answer_text"]
    common = [a for a in runs if (a.run_id, a.qid) in nist.index]
    assert len(common) == 21
    for a in common:
        assert a.text == nist[(a.run_id, a.qid)]
    assert all(c < len(a.references) for a in runs for cs in a.citations for c in cs)


def test_answers_round_trip_and_bad_citation(tmp_path, shared_data):
    runs = read_answers(shared_data / "trec-rag-2024/runs/baseline_rag24.test_gpt-4o_top20.jsonl")
    out = tmp_path / "run.jsonl"
    write_answers(runs, out)
    assert read_answers(out) == runs
    bad = {"run_id": "r", "topic_id": "1", "references": ["d"], "answer": [{"text": "x", "citations": [3]}]}
    with pytest.raises(FormatError, match="citation 3") as err:
        read_answers(write_lines(tmp_path, [bad]))
    assert err.value.field == "answer[0].citations"


def test_topics_qrels_nuggets_metrics(shared_data, tmp_path):
    topics = read_topics(shared_data / "trec-rag-2024/topics.rag24.test.txt")
    assert len(topics) == 301
    qrels = read_qrels(shared_data / "trec-rag-2024/qrels.rag24.test-nist.txt")
    assert qrels["qid"].nunique() == 86 and set(qrels["grade"]) <= {0, 1, 2, 3}
    nug = read_nuggets(shared_data / "nuggetizer-interop/rag24_nuggets_mistral.jsonl")
    assert nug["qid"].nunique() == 301  # 301 lines (the last has no newline)
    out = tmp_path / "n.jsonl"
    write_nuggets(nug, out)
    assert read_nuggets(out)[["qid", "nugget", "importance"]].equals(nug[["qid", "nugget", "importance"]])
    met = read_metrics(shared_data / "nuggetizer-interop/metrics_baseline_rag24.test_gpt_4o_top20.jsonl")
    assert len(met) == 301 and met.attrs["all"]["v_strict"] == pytest.approx(met["v_strict"].mean())
    bad = tmp_path / "qrels.txt"
    bad.write_text("1 0 d1 2\n1 0 d2 x\n", encoding="utf-8")
    with pytest.raises(FormatError, match="not an integer") as err:
        read_qrels(bad)
    assert err.value.line == 2 and err.value.field == "grade"


def test_metrics_writer_matches_nuggetizer_file(tmp_path, nuggetizer_dir):
    labels = read_assignments(nuggetizer_dir / "assignments_baseline_rag24.test_gpt4o_top20.jsonl")
    out = tmp_path / "metrics.jsonl"
    write_metrics(score_answers(labels), out)
    ours = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    theirs = [json.loads(x) for x in (nuggetizer_dir / "metrics_baseline_rag24.test_gpt_4o_top20.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [o["qid"] for o in ours] == [t["qid"] for t in theirs]
    for o, t in zip(ours, theirs):
        for k, v in t.items():
            assert o[k] == pytest.approx(v, abs=1e-12) if k != "qid" else o[k] == v


def test_detect_format_on_real_files(shared_data, nuggetizer_dir):
    assert detect_format(shared_data / "trec-rag-2024/nugget_assignment.20241108.jl") == "assignments"
    assert detect_format(nuggetizer_dir / "rag24_nuggets_mistral.jsonl") == "nuggets"
    assert detect_format(nuggetizer_dir / "metrics_baseline_rag24.test_gpt_4o_top20.jsonl") == "metrics"
    assert detect_format(shared_data / "trec-rag-2024/runs/baseline_rag24.test_gpt-4o_top20.jsonl") == "answers"
    assert detect_format(shared_data / "trec-rag-2024/topics.rag24.test.txt") == "topics"
    assert detect_format(shared_data / "trec-rag-2024/qrels.rag24.test-nist.txt") == "qrels"
    with pytest.raises(FormatError, match="not nugget assignment labels"):
        load_labels(nuggetizer_dir / "rag24_nuggets_mistral.jsonl")
    assert len(read(shared_data / "trec-rag-2024/topics.rag24.test.txt", format="topics")) == 301


@pytest.mark.parametrize("ext", ["csv", "parquet", "jsonl", "tsv"])
def test_score_tables_round_trip(tmp_path, nist_labels, ext):
    per = score_answers(nist_labels)
    p = tmp_path / f"s.{ext}"
    write_table(per, p)
    long = read_score_table(p)
    expected = to_long(per)
    assert len(long) == len(expected)
    merged = long.merge(expected, on=["run_id", "qid", "metric"], suffixes=("", "_x"))
    assert len(merged) == len(expected) and (merged["value"] - merged["value_x"]).abs().max() < 1e-12
    write_table(expected, tmp_path / f"long.{ext}")
    assert len(read_score_table(tmp_path / f"long.{ext}")) == len(expected)


def test_score_table_bad_value_names_row(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("run_id,qid,metric,value\nr,1,v_strict,0.5\nr,2,v_strict,abc\n", encoding="utf-8")
    with pytest.raises(FormatError, match="not a number") as err:
        read_score_table(p)
    assert err.value.line == 3 and err.value.field == "value"
