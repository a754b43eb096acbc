"""Per-query trec_eval -q / ir_measures outputs -> long score table."""

from __future__ import annotations

import pytest

from metaeval.errors import FormatError
from metaeval.io.trec_eval import read_trec_eval, read_trec_eval_dir

TREC = """runid                 \tall\tmyrun
num_ret               \t2024-1\t100
ndcg_cut_10           \t2024-1\t0.5000
ndcg_cut_10           \t2024-2\t0.2500
map                   \t2024-1\t0.1
map                   \t2024-2\t0.3
ndcg_cut_10           \tall\t0.3750
map                   \tall\t0.2
"""

IRM = """2024-1\tnDCG@10\t0.4
2024-2\tnDCG@10\t0.6
2024-1\tAP\t0.2
2024-2\tAP\t0.1
"""


def test_trec_eval_layout(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text(TREC)
    df = read_trec_eval(f)
    assert set(df["run_id"]) == {"myrun"}
    assert "all" not in set(df["qid"])
    got = {(r.qid, r.metric): r.value for r in df.itertuples()}
    assert got == {("2024-1", "num_ret"): 100.0, ("2024-1", "ndcg_cut_10"): 0.5, ("2024-2", "ndcg_cut_10"): 0.25,
                   ("2024-1", "map"): 0.1, ("2024-2", "map"): 0.3}


def test_ir_measures_layout_and_run_id_from_file_name(tmp_path):
    f = tmp_path / "run-b.tsv"
    f.write_text(IRM)
    df = read_trec_eval(f)
    assert set(df["run_id"]) == {"run-b"} and len(df) == 4
    assert df.set_index(["qid", "metric"]).loc[("2024-2", "nDCG@10"), "value"] == 0.6


def test_folder_and_errors(tmp_path):
    (tmp_path / "a.txt").write_text(TREC)
    (tmp_path / "b.tsv").write_text(IRM)
    df = read_trec_eval_dir(tmp_path)
    assert set(df["run_id"]) == {"myrun", "b"}
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.txt").write_text("map\t1\t0.5\nmap\t2\tN/A\n")
    with pytest.raises(FormatError) as e:
        read_trec_eval_dir(bad)
    assert e.value.line == 2 and e.value.field == "value" and "x.txt" in str(e.value)
    (bad / "x.txt").write_text("map\t1\n")
    with pytest.raises(FormatError, match="expected 3"):
        read_trec_eval(bad / "x.txt")
    (bad / "x.txt").write_text("map\t1\t0.5\nmap\t1\t0.6\nP_5\t2\t0.1\n")
    with pytest.raises(FormatError, match="duplicate"):
        read_trec_eval(bad / "x.txt")
    (bad / "x.txt").write_text("q1\tm\t0.5\n")
    with pytest.raises(FormatError, match="cannot tell"):
        read_trec_eval(bad / "x.txt")
    assert len(read_trec_eval(bad / "x.txt", fmt="ir_measures")) == 1
    dup = tmp_path / "dup"
    dup.mkdir()
    (dup / "1.txt").write_text(TREC)
    (dup / "2.txt").write_text(TREC)
    with pytest.raises(FormatError, match="also in"):
        read_trec_eval_dir(dup)
    with pytest.raises(FormatError, match="not a folder"):
        read_trec_eval_dir(tmp_path / "nope")
