"""``metaeval compare`` on label files (the reference given), its errors, and the report section it renders."""

from __future__ import annotations

import json

import pytest

from metaeval.cli import main
from metaeval.io.assignments import write_assignments
from metaeval.testing.relabel import judge_like


@pytest.fixture(scope="module")
def files(nist_labels, tmp_path_factory):
    d = tmp_path_factory.mktemp("compare")
    small = nist_labels.subset(qids=nist_labels.qids[:12])
    write_assignments(small, d / "ref.jsonl")
    write_assignments(judge_like(small, "judge"), d / "judge.jsonl")
    write_assignments(small, d / "copy.jsonl")  # agrees perfectly: a clear winner
    return d


def test_label_files_with_a_reference(files, capsys):
    d = files
    out = d / "out"
    rc = main(["compare", str(d / "judge.jsonl"), str(d / "copy.jsonl"), "--reference", str(d / "ref.jsonl"),
               "--metric", "V_strict", "--bootstrap", "200", "--out", str(out)])
    assert rc == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "judge vs copy: copy agrees better with the reference (copy minus judge): run-level tau on v_strict +" in text
    # the table names its metric, and says its intervals are per comparison while its p-values are Holm-adjusted
    assert "paired differences A - B on v_strict (Kendall tau at three levels, calibrated error)" in text
    assert "each 95% interval is per comparison (not adjusted for multiplicity)" in text
    doc = json.loads((out / "compare.json").read_text())
    assert doc["format"] == "metaeval-compare" and doc["metric"] == "v_strict" and doc["n_boot"] == 200
    kappa = next(r for r in doc["rows"] if r["statistic"] == "cohen_kappa")
    assert kappa["value_b"] == pytest.approx(1.0) and kappa["better"] == "copy"
    assert not any(r["statistic"].endswith("_mae") for r in doc["rows"])  # label files: no calibration study
    html = (out / "compare.html").read_text()
    assert "Which configuration agrees better" in html and "copy agrees better" in html
    md = (out / "compare.md").read_text()
    assert "| A | B | statistic |" in md and "Cohen's kappa (labels)" in md
    assert "95% percentile interval per comparison, not adjusted for multiplicity" in md
    tex = (out / "compare.tex").read_text()
    assert "\\label{tab:metaeval-compare}" in tex and "Holm $p$" in tex
    assert "interval, unadjusted" in tex


def test_errors_name_what_to_do(files, capsys, tmp_path):
    d = files
    assert main(["compare", str(d / "judge.jsonl"), str(d / "copy.jsonl")]) == 2
    assert "give the reference labels with --reference FILE" in capsys.readouterr().err
    assert main(["compare", str(d / "judge.jsonl"), "--reference", str(d / "ref.jsonl")]) == 2
    assert "at least two candidates" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "nope"), str(d / "copy.jsonl"), "--reference", str(d / "ref.jsonl")]) == 2
    assert "not a cell folder" in capsys.readouterr().err
    assert main(["compare", str(d / "judge.jsonl"), str(d / "copy.jsonl"), "--reference", str(d / "ref.jsonl"),
                 "--metric", "ndcg"]) == 2
    assert "--metric ndcg" in capsys.readouterr().err


def test_the_terminal_view_never_cuts_a_hyphenated_term_a_path_or_a_signed_number(monkeypatch):
    """The lines wrap at spaces only: "run-level", "-0.236" and a long path stay whole at any terminal width (the
    full tier once wrapped "popen-" / "gw1" and "run-" / "level", breaking what a reader - and a test - looks for)."""
    import shutil

    from metaeval.commands.compare import format_comparison

    doc = {"candidates": ["a", "b"], "reference": "/tmp/pytest-of-root/pytest-217/popen-gw1/compare0/ref.jsonl",
           "pairs": "every pair", "variant": "b", "n_boot": 200, "seed": 0, "alpha": 0.05, "metric": "v_strict",
           "lines": ["a vs b: b agrees better with the reference (b minus a): run-level tau on v_strict -0.236 "
                     "[-0.512, -0.071], Holm p 0.010; per-topic-averaged tau +0.464 [+0.268, +0.670]"], "rows": []}
    for width in range(30, 121, 7):
        monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=(120, 24), w=width: __import__("os").terminal_size((w, 24)))
        text = format_comparison(doc)
        words = text.split()
        for whole in ("run-level", "-0.236", "[-0.512,", "per-topic-averaged", doc["reference"] + ":"):
            assert whole in words, (width, text)
