"""Interop with castorini/nuggetizer on the shared files (../shared/data/nuggetizer-interop, trec-rag-2024/runs).

* ``metaeval score --format nuggetizer`` reproduces the published metrics file byte for byte;
* ``metaeval assign`` with the offline lexical judge writes assignment JSONL that nuggetizer's own types accept
  field by field and that nuggetizer's own metric code scores exactly as ``metaeval score`` does (marked
  ``interop``: needs ``pip install nuggetizer``);
* ``metaeval create`` writes nuggetizer's nugget file from a pool in nuggetizer's request format.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metaeval.cli import main

ASSIGN = "assignments_baseline_rag24.test_gpt4o_top20.jsonl"
METRICS = "metrics_baseline_rag24.test_gpt_4o_top20.jsonl"
NUGGETS = "rag24_nuggets_mistral.jsonl"


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_score_format_nuggetizer_reproduces_the_metrics_file(nuggetizer_dir, tmp_path, capsys):
    out = tmp_path / "metrics.jsonl"
    assert main(["score", str(nuggetizer_dir / ASSIGN), "--format", "nuggetizer", "--out", str(out)]) == 0
    assert out.read_bytes() == (nuggetizer_dir / METRICS).read_bytes()


def test_metrics_file_is_accepted_as_score_input(nuggetizer_dir, capsys):
    assert main(["score", str(nuggetizer_dir / METRICS)]) == 0
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if "metrics_baseline" in line).split()
    assert row[2] == "301" and row[3] == "0.4082" and row[4] == "0.3035"  # V_strict, A_strict of the 'all' line


def test_metrics_long_table_matches_file(nuggetizer_dir):
    from metaeval.io.metrics import read_metrics_long

    long = read_metrics_long(nuggetizer_dir / METRICS, run_id="r")
    assert set(long["metric"]) == {"v_strict", "v", "w_strict", "w", "a_strict", "a"} and len(long) == 6 * 301
    first = _lines(nuggetizer_dir / METRICS)[0]
    got = long[(long.qid == first["qid"]) & (long.metric == "v_strict")]["value"].item()
    assert got == first["strict_vital_score"]
    from metaeval.io.scores import read_score_table

    table = read_score_table(nuggetizer_dir / METRICS)  # wherever a score table is read, a metrics file is too
    assert len(table) == 6 * 301 and set(table["run_id"]) == {"metrics_baseline_rag24.test_gpt_4o_top20"}  # the file stem


@pytest.fixture(scope="module")
def assigned(nuggetizer_dir, shared_data, tmp_path_factory):
    """``metaeval assign`` (lexical judge) of the Mistral nuggets of the first 30 topics to the gpt-4o baseline."""
    tmp = tmp_path_factory.mktemp("assign")
    nug = tmp / "nuggets.jsonl"
    nug.write_text("".join((nuggetizer_dir / NUGGETS).read_text(encoding="utf-8").splitlines(True)[:30]), encoding="utf-8")
    run = shared_data / "trec-rag-2024" / "runs" / "baseline_rag24.test_gpt-4o_top20.jsonl"
    out = tmp / "assignments.jsonl"
    assert main(["assign", "--nuggets", str(nug), "--answers", str(run), "--judge", "lexical", "--out", str(out)]) == 0
    return nug, run, out


def test_assign_writes_one_line_per_answer_with_the_nuggets_in_order(assigned):
    nug, run, out = assigned
    recs, nuggets = _lines(out), {r["qid"]: r for r in _lines(nug)}
    answers = {r["topic_id"]: r for r in _lines(run)}
    assert [r["qid"] for r in recs] == [a for a in answers if a in nuggets]  # answer order, topics with nuggets
    for r in recs:
        src = nuggets[r["qid"]]
        assert r["query"] == src["query"] and r["run_id"] == "baseline_rag24.test_gpt-4o_top20"
        assert r["answer_text"] == " ".join(s["text"] for s in answers[r["qid"]]["answer"])
        assert r["response_length"] == answers[r["qid"]]["response_length"]
        assert [(n["text"], n["importance"]) for n in r["nuggets"]] == [(n["text"], n["importance"]) for n in src["nuggets"]]
        assert {n["assignment"] for n in r["nuggets"]} <= {"support", "partial_support", "not_support", "FAILED"}
    transcripts = _lines(out.with_name("assignments.transcripts.jsonl"))
    assert {t["stage"] for t in transcripts} == {"assign"} and all(t["calls"] == [] for t in transcripts)  # offline
    assert sum(len(t["labels"]) for t in transcripts) == sum(len(r["nuggets"]) for r in recs)


@pytest.mark.interop
def test_assign_output_round_trips_through_nuggetizer(assigned, tmp_path):
    """nuggetizer's own dataclasses take every nugget field by field, and its own metric code gives the scores
    that ``metaeval score --format nuggetizer`` writes for the same file."""
    pytest.importorskip("nuggetizer", reason="pip install nuggetizer (the interop extra)")
    from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores
    from nuggetizer.core.types import AssignedScoredNugget

    from metaeval.io.assignments import read_assignments

    _, _, out = assigned
    recs = _lines(out)
    ours = read_assignments(out)
    lab = ours.labels
    for r in recs:
        objs = [AssignedScoredNugget(**n) for n in r["nuggets"]]  # exactly text, importance, assignment
        rows = lab[(lab.qid == r["qid"]) & (lab.run_id == r["run_id"])].sort_values("nugget_id")
        assert [o.text for o in objs] == rows["nugget"].tolist()
        assert [o.assignment for o in objs] == rows["support_raw"].tolist()
        assert [o.importance for o in objs] == rows["importance_raw"].tolist()
    metrics = tmp_path / "m.jsonl"
    assert main(["score", str(out), "--format", "nuggetizer", "--out", str(metrics)]) == 0
    mine = {m["qid"]: m for m in _lines(metrics)}
    for r in recs:
        theirs = calculate_nugget_scores(r["qid"], r["nuggets"])
        for field in ("strict_vital_score", "vital_score", "strict_all_score", "all_score"):
            assert mine[r["qid"]][field] == getattr(theirs, field), (r["qid"], field)
    overall = calculate_global_metrics(recs)
    for field in ("strict_vital_score", "vital_score", "strict_all_score", "all_score"):
        assert mine["all"][field] == pytest.approx(overall[field], abs=1e-15)


def test_create_from_a_pool_writes_nuggetizer_nuggets(tmp_path):
    pool = tmp_path / "pool.jsonl"
    docs = [
        "Cats purr by rapidly twitching the muscles of the larynx.",
        "Purring happens when cats are content, and cats also purr when injured or frightened.",
        "Kittens purr when they are a few days old to tell their mother they are fine.",
        "Bread needs yeast to rise.",
    ]
    cands = [{"docid": f"d{i}", "doc": {"segment": t}} for i, t in enumerate(docs)] + \
            [{"docid": "judged-0", "doc": {"segment": "Cats purr at 25 to 150 hertz."}, "judgment": 0}]
    pool.write_text(json.dumps({"query": {"qid": "q1", "text": "why do cats purr"}, "candidates": cands}) + "\n", encoding="utf-8")
    out = tmp_path / "nuggets.jsonl"
    assert main(["create", "--pool", str(pool), "--judge", "lexical", "--out", str(out)]) == 0
    (rec,) = _lines(out)
    assert set(rec) == {"query", "qid", "nuggets"} and rec["qid"] == "q1"
    assert rec["nuggets"] and all(set(n) == {"text", "importance"} for n in rec["nuggets"])
    imps = [n["importance"] for n in rec["nuggets"]]
    assert imps == sorted(imps, key=lambda x: x != "vital")  # vital first
    assert not any("hertz" in n["text"] for n in rec["nuggets"])  # the candidate judged 0 is left out
    from metaeval.io.nuggets import read_nuggets

    assert len(read_nuggets(out)) == len(rec["nuggets"])  # our own reader takes it back


def test_analyze_nuggetizer_output_against_nist_with_run_map(nuggetizer_dir, shared_data, nist_file, tmp_path, capsys):
    """The issue's case: nuggetizer-format output (here written by ``metaeval assign``, lexical judge, on the NIST
    topics plus 4 others) against NIST with ``--run-map``: tau on the shared topics and runs, descriptive
    statistics on the shared topics only."""
    nist_qids = {json.loads(x)["qid"] for x in nist_file.read_text(encoding="utf-8").splitlines() if x.strip()}
    lines = (nuggetizer_dir / NUGGETS).read_text(encoding="utf-8").splitlines(True)
    ours = [x for x in lines if json.loads(x)["qid"] in nist_qids]
    others = [x for x in lines if json.loads(x)["qid"] not in nist_qids][:4]
    nug = tmp_path / "nuggets.jsonl"
    nug.write_text("".join(ours + others), encoding="utf-8")
    out = tmp_path / "assignments.jsonl"
    runs = shared_data / "trec-rag-2024" / "runs"
    assert main(["assign", "--nuggets", str(nug), "--answers", str(runs), "--judge", "lexical", "--out", str(out)]) == 0
    capsys.readouterr()
    argv = ["analyze", "--reference", str(nist_file), "--candidate", str(out), "--bootstrap", "0", "--metrics", "V_strict",
            "--out", str(tmp_path / "an")]
    assert main(argv) == 0  # without the map only the l31 run is shared: one run, no run-level tau
    capsys.readouterr()
    unmapped = json.loads((tmp_path / "an" / "analysis.json").read_text())["candidates"]["assignments"]["metrics"]["v_strict"]
    assert unmapped["cells"]["n_runs"] == 1 and unmapped["run"]["tau"] is None
    mapped = argv + ["--run-map", "baseline_rag24.test_gpt-4o_top20=baseline_frag_rag24.test_gpt-4o_top20"]
    assert main(mapped) == 0
    doc = json.loads((tmp_path / "an" / "analysis.json").read_text())
    cells = doc["candidates"]["assignments"]["metrics"]["v_strict"]["cells"]
    n_topics = len(ours)
    assert cells["n_runs"] == 2 and cells["n_topics"] == n_topics and cells["n_cells"] == 2 * n_topics
    assert doc["candidates"]["assignments"]["metrics"]["v_strict"]["run"]["tau"] in (-1.0, 1.0)  # one run pair
    desc = doc["candidates"]["assignments"]["descriptive"]
    note = " ".join(str(v) for k, v in desc.items() if k.endswith("_note"))
    assert desc["topics"] == n_topics and f"has {n_topics + 4} topics" in note  # described on the shared topics only
    assert desc["n_runs"] == 2  # and the shared runs (command-r-plus was not judged by NIST)
