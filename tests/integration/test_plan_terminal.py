"""``metaeval plan``'s terminal summary (issue 23 item 15): every line fits 100 columns, plain words (the
implementation check's jargon stays in plan.md), and the assumptions the plan rests on are printed."""

import json

import pytest

from metaeval.cli import main

JARGON = ("plug-in", "sqrt(", "ddof", "analytic", "resampled")


def _plan(tmp_path, nist_file, capsys, *extra):
    out = tmp_path / "p"
    rc = main(["plan", "--reference", str(nist_file), "--simulate-judge", "paper-fig6-edits", "--reps", "20",
               "--metric", "V_strict", "--out", str(out), *extra])
    printed = capsys.readouterr().out
    assert rc == 0
    return printed, json.loads((out / "plan.json").read_text(encoding="utf-8")), out


@pytest.mark.parametrize("extra", [
    ["--pilot", "8", "--replay-reps", "0", "--total-topics", "301"],                       # table, next topics
    ["--samples", "3", "--replay-reps", "3", "--seconds-per-label", "30", "--level", "0.9"],  # replay + consistency
])
def test_terminal_summary_fits_100_columns_in_plain_words(tmp_path, nist_file, capsys, extra):
    printed, plan, out = _plan(tmp_path, nist_file, capsys, *extra)
    lines = printed.splitlines()
    too_wide = [line for line in lines if len(line) > 100]
    assert not too_wide, too_wide
    for word in JARGON:
        assert word not in printed.lower(), word
    # the detail left the terminal but is still in plan.md
    assert plan["agreement"]["line"] in (out / "plan.md").read_text(encoding="utf-8")
    flat = " ".join(printed.split())
    # the assumptions, in words
    p, b = plan["pilot"], plan["budget"]
    assert f"{b['seconds_per_label']:g} s per label" in flat and "--seconds-per-label" in flat
    assert f"metric: {plan['metric_name']}" in flat and f"confidence level {plan['level']:.0%}" in flat
    assert f"pilot: {p['runs']} runs on {p['topics']} topics" in flat and f"track: {p['total_topics']} topics" in flat
    assert ("the default" in flat) == ("--seconds-per-label" not in extra)
    # the planner's columns, and the recommendation last (wrapped, nothing lost)
    assert lines[lines.index(next(x for x in lines if x.lstrip().startswith("topics")))].split() == [
        "topics", "hours", "+/-", "(predicted)", "interval", "holds", "tau", "tau", "range", "runs", "swapped"]
    assert flat.endswith(" ".join(plan["recommendation"].split()))
    if plan.get("replay"):
        assert "replay:" in flat and plan.get("consistency") and "flip rate" in flat


def test_docs_worked_example_is_what_plan_prints(tmp_path, nist_labels, nist_file, capsys, monkeypatch):
    """docs/planning.md's example output is byte for byte what its command prints (seeded; pilot 8 leaves too few
    topics for the replay, so only the 400 resampled tracks are random and they are seeded)."""
    import importlib.util
    import re
    from pathlib import Path

    from metaeval.io.assignments import write_assignments

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("assessor_plan_run", root / "experiments" / "assessor_plan" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.chdir(tmp_path)  # the example writes to results/plan-demo, and the "wrote" line names that path
    Path("results/assessor_plan").mkdir(parents=True)
    write_assignments(mod.lexical_labels(nist_labels), "results/assessor_plan/lexical.jl")
    rc = main(["plan", "--reference", str(nist_file), "--pilot", "8", "--judge", "results/assessor_plan/lexical.jl",
               "--total-topics", "301", "--metric", "V_strict", "--out", "results/plan-demo"])
    assert rc == 0
    printed = capsys.readouterr().out
    doc = (root / "docs" / "planning.md").read_text(encoding="utf-8")
    block = re.search(r"```\n(The plan assumes:\n.*?)```\n", doc, re.S).group(1)
    assert block == printed
