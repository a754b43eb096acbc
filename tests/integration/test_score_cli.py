"""``metaeval score`` end to end, as a user runs it (a real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest


def metaeval(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "metaeval", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_score_nist_file(tmp_path, nist_file):
    out = tmp_path / "s.csv"
    res = metaeval("score", nist_file, "--out", out)
    assert res.returncode == 0, res.stderr
    df = pd.read_csv(out)
    assert len(df) == 927
    assert list(df.columns) == ["run_id", "qid", "a_strict", "a", "v_strict", "v", "w_strict", "w", "n_nuggets", "n_vital", "n_failed"]
    assert round(df[df.run_id == "ldilab_gpt_4o"].v_strict.mean(), 4) == 0.6666
    first = res.stdout.splitlines()[2]
    assert "ldilab_gpt_4o" in first and "0.6666" in first and " 21 " in first


@pytest.mark.parametrize("ext", ["parquet", "jsonl"])
def test_score_output_types(tmp_path, nist_file, ext):
    out = tmp_path / f"s.{ext}"
    assert metaeval("score", nist_file, "--out", out).returncode == 0
    df = pd.read_parquet(out) if ext == "parquet" else pd.read_json(out, lines=True)
    assert len(df) == 927


def test_malformed_line_exits_nonzero_naming_line(tmp_path, nist_file):
    lines = nist_file.read_text(encoding="utf-8").splitlines()
    lines[41] = lines[41][:-5]  # truncate line 42
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = metaeval("score", bad)
    assert res.returncode != 0
    assert f"{bad}:42:" in res.stderr and "malformed JSON" in res.stderr
    assert "Traceback" not in res.stderr


def test_unknown_label_scores_the_rest_and_reports(tmp_path, nist_file):
    lines = nist_file.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[9])
    rec["nuggets"][0]["assignment"] = "established"
    lines[9] = json.dumps(rec)
    bad = tmp_path / "unknown.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "s.csv"
    res = metaeval("score", bad, "--out", out)
    assert res.returncode == 0, res.stderr
    assert "1 unknown label value(s) kept as FAILED" in res.stderr and "line 10" in res.stderr and "'established'" in res.stderr
    df = pd.read_csv(out, dtype={"qid": str})
    assert len(df) == 927 and df.n_failed.sum() == 1
    assert df.set_index(["run_id", "qid"]).loc[(rec["run_id"], rec["qid"]), "n_failed"] == 1


def test_missing_file_is_a_clear_error(tmp_path):
    res = metaeval("score", tmp_path / "nope.jsonl")
    assert res.returncode == 2 and "no such file" in res.stderr and "Traceback" not in res.stderr


def test_help_imports_no_heavy_library():
    """``metaeval --help`` must stay fast: building the parser may not import the heavy stack."""
    code = (
        "import sys; from metaeval.cli import build_parser; build_parser().format_help(); "
        "heavy = [m for m in ('pandas', 'numpy', 'scipy', 'statsmodels', 'ray', 'openai', 'anthropic', 'hydra', 'matplotlib') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ""
    assert "score" in metaeval("--help").stdout
