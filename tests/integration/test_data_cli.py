"""`metaeval data ...` end to end (in-process CLI), load_dataset on the real NIST file, and scoring the demo."""

import importlib.util
import shutil
import subprocess
import sys

import pytest

from metaeval.cli import main
from metaeval.data.dataset import load_dataset
from metaeval.data.fetch import DEMO_DIR
from metaeval.errors import ConfigError


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("METAEVAL_CACHE", str(d))
    return d


def test_list_fetch_path_info(cache, shared_data, capsys):
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    header, *rows = out.strip().splitlines()
    assert header.split()[:5] == ["NAME", "FILES", "CACHED", "CHECKSUMS", "SOURCE"]
    by_name = {r.split()[0]: r for r in rows}
    assert {"trec-rag-2024", "trec-rag-2024-nist-56", "demo"} <= set(by_name)
    assert "NOT RECORDED" in by_name["trec-rag-2024-nist-56"]
    assert "bundled" in by_name["demo"] and " - " in by_name["trec-rag-2024"]

    assert main(["data", "fetch", "trec-rag-2024-nist-21", "--from", str(shared_data / "trec-rag-2024")]) == 0
    out = capsys.readouterr().out
    assert "fetched" in out and "checksum OK" in out
    assert main(["data", "fetch", "trec-rag-2024-nist-21", "--from", str(shared_data / "trec-rag-2024")]) == 0
    assert "present" in capsys.readouterr().out

    assert main(["data", "list"]) == 0
    row = [r for r in capsys.readouterr().out.splitlines() if r.split()[0] == "trec-rag-2024"][0]
    assert "2.8 MB" in row and "cache verified" in row

    assert main(["data", "path", "trec-rag-2024-nist-21"]) == 0  # the former name still works (an alias)
    assert capsys.readouterr().out.strip() == str(cache / "datasets" / "trec-rag-2024")
    assert main(["data", "path", "demo"]) == 0
    assert capsys.readouterr().out.strip() == str(DEMO_DIR)

    assert main(["data", "info", "demo"]) == 0
    out = capsys.readouterr().out
    assert "ILLUSTRATIVE DEMO DATA" in out and "answers: 64" in out and "problem" not in out


def test_cli_errors(cache, shared_data, tmp_path, capsys):
    assert main(["data", "path", "trec-rag-2024-topics"]) == 2
    assert "metaeval data fetch trec-rag-2024-topics" in capsys.readouterr().err
    bad = tmp_path / "topics.rag24.test.txt"
    shutil.copyfile(shared_data / "trec-rag-2024" / "topics.rag24.test.txt", bad)
    bad.write_text(bad.read_text().replace("vicarious", "Vicarious", 1))
    assert main(["data", "fetch", "trec-rag-2024-topics", "--from", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "checksum mismatch" in err and "expected 234113ab626a5ca31d57d4c0c7a87b6e" in err
    assert not (cache / "datasets" / "trec-rag-2024-topics").exists()
    assert main(["data", "fetch", "nope"]) == 2
    assert "unknown dataset" in capsys.readouterr().err


def test_fetch_unrecorded_prints_digests(cache, shared_data, capsys):
    src = shared_data / "trec-rag-2024" / "nugget_assignment.20241108.jl"
    assert main(["data", "fetch", "trec-rag-2024-nist-56", "--from", str(src)]) == 0
    out = capsys.readouterr().out
    assert "CHECKSUM NOT RECORDED" in out and "md5=918bb96e714eec2e3a0c64d0771a6a6f" in out and "sha256=84ceb734" in out


def test_load_nist_by_name_and_by_path(cache, shared_data, nist_file):
    with pytest.raises(ConfigError, match="--from"):
        load_dataset("trec-rag-2024-nist-21")
    main(["data", "fetch", "trec-rag-2024-nist-21", "--from", str(nist_file)])
    ds = load_dataset("trec-rag-2024")
    assert ds.summary() == {"name": "trec-rag-2024", "topics": 21, "runs": 45, "answers": 927, "documents": 0,
                            "qrels": 0, "human_nuggets": 298, "human_labels": 13158}
    assert ds.provenance["files"][0]["md5"] == "918bb96e714eec2e3a0c64d0771a6a6f" and ds.provenance["files"][0]["verified"] is True
    assert ds.documents == {} and ds.qrels is None and ds.labels.name == "nist"
    # nuggets are consistent with the labels: the only problems are runs that skipped topics
    assert all(p.startswith("run ") for p in ds.check())
    by_path = load_dataset(nist_file)
    assert by_path.summary() | {"name": ds.name} == ds.summary()
    assert by_path.provenance["files"][0]["md5"] == "918bb96e714eec2e3a0c64d0771a6a6f"
    assert all(a.qid in ds.topics for a in ds.answers)
    assert sum(not a.text for a in ds.answers) == 4  # the NIST export holds 4 empty answers
    assert len(ds.human_nuggets_for(ds.qids[0])) == int((ds.nuggets["qid"] == ds.qids[0]).sum()) > 0


def test_load_other_registered_datasets(cache, shared_data):
    main(["data", "fetch", "nuggetizer-rag24-mistral", "--from", str(shared_data / "nuggetizer-interop")])
    ds = load_dataset("nuggetizer-rag24-mistral")
    assert ds.labels is None and ds.nuggets is None  # judge output is never the human reference
    assert set(ds.other_labels) == {"assignments_baseline_rag24.test_gpt4o_top20"}
    assert set(ds.other_nuggets) == {"rag24_nuggets_mistral"}
    assert ds.run_ids == ["baseline_rag24.test_gpt-4o_top20"] and len(ds.answers) == 301
    main(["data", "fetch", "trec-rag-2024-topics", "--from", str(shared_data / "trec-rag-2024")])
    assert len(load_dataset("trec-rag-2024-topics").topics) == 301


def test_load_errors(tmp_path):
    with pytest.raises(ConfigError, match="neither a registered dataset"):
        load_dataset(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no dataset files"):
        load_dataset(tmp_path / "empty")


def test_trec_rag_folder_loads_as_published(shared_data):
    """../shared/data/trec-rag-2024 as the track publishes it: NIST's assignment export, the topics file, the qrels
    and runs/*.jsonl under their own names - nothing renamed into the demo layout."""
    ds = load_dataset(shared_data / "trec-rag-2024")
    assert ds.labels is not None and len(ds.labels.labels) == 13158 and len(ds.nuggets) == 298
    assert len(ds.topics) == 301 and ds.qrels is not None and ds.qrels["qid"].nunique() == 86
    runs = {a.run_id for a in ds.answers}
    assert {"baseline_rag24.test_gpt-4o_top20", "baseline_rag24.test_command-r-plus_top20",
            "baseline_frag_rag24.test_gpt-4o_top20"} <= runs and len(runs) == 47  # 45 judged + 2 baselines not judged
    l31 = [a for a in ds.answers if a.run_id == "baseline_rag24.test_l31_70b_instruct_top20"]
    assert len(l31) == 301 and all(a.sentences for a in l31)  # the run file's answers (with sentences) come first
    files = {f["filename"]: f for f in ds.provenance["files"]}
    for name in ("nugget_assignment.20241108.jl", "topics.rag24.test.txt", "qrels.rag24.test-nist.txt"):
        assert files[name]["verified"] is True  # known to the registry by name: checked against its digests


def test_score_on_demo_assignments(tmp_path, capsys):
    if importlib.util.find_spec("metaeval.commands.score") is None:
        pytest.skip("metaeval score not present yet")
    out = tmp_path / "s.csv"
    assert main(["score", str(DEMO_DIR / "assignments.jsonl"), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    ranked = [ln.split()[1] for ln in text.splitlines() if len(ln.split()) > 1 and ln.split()[1].startswith("demo-")]
    assert len(ranked) == 8 and ranked[0] == "demo-a" and ranked[-1] == "demo-h"
    import pandas as pd

    df = pd.read_csv(out)
    assert len(df) == 64 and df["n_failed"].sum() == 0


def test_build_demo_check_cli():
    script = DEMO_DIR.resolve().parents[2] / "scripts" / "build_demo.py"  # the generator is not shipped
    assert not (DEMO_DIR / "build_demo.py").exists()
    r = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_info_on_the_nist_folder_sums_up_partial_runs_in_one_note(shared_data, capsys):
    """The runs that answer only the judged topics are expected in a NIST export: one note line, not 44
    "problem:" lines, and exit 0; a real inconsistency is still a problem line (exit 1)."""
    assert main(["data", "info", str(shared_data / "trec-rag-2024")]) == 0
    out = capsys.readouterr().out
    assert "problem" not in out
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and notes[0].startswith("note: 44 of 47 runs answer only part of the 301 topics")
    assert "42 run(s) answer 21" in notes[0] and "human labels cover 21 topics" in notes[0]
    ds = load_dataset(shared_data / "trec-rag-2024")
    assert len(ds.partial_runs()) == 44 and ds.check(coverage=False) == []
    assert len(ds.check()) == 44  # the default keeps every line (API unchanged)
    ds.answers = [a for a in ds.answers if not (a.qid == "2024-142395" and a.run_id == "FT-llama3")]
    assert any(p.startswith("labels for (2024-142395, FT-llama3) but no such answer") for p in ds.check(coverage=False))
