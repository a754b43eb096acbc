"""The experiments' READMEs hold numbers that their commands reproduce.

Each test recomputes a README table through the public API (or the command itself) and compares it with the
README text at the precision printed there, so an edited README or a changed library both fail here.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from metaeval.analysis import describe_labels, label_agreement, tau_levels
from metaeval.calibration import simulate_judge
from metaeval.paper import KENDALL_TAU, TABLE4, TABLE4_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
EXP = ROOT / "experiments"
PROFILES = {"paper-fig6-edits": "C3_edits_auto_vs_edits_manual", "paper-fig6-manual": "C4_manual_auto_vs_manual_manual"}
METRIC = {"V_strict": "v_strict", "A_strict": "a_strict"}


def table(readme: Path, name: str) -> list[list[str]]:
    """Body rows (cells stripped) of the markdown table that follows ``<!-- table:NAME -->``."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"<!-- table:{name} -->")
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    assert len(rows) > 2, f"{readme}: table {name} is empty"
    return rows[2:]  # header and separator


def fmt(value: float, spec: str) -> str:
    return format(value, spec)


def decimals(cell: str) -> int:
    return len(cell.split(".")[1]) if "." in cell else 0


# ------------------------------------------------------------------------------------------- paper_rag24
README_PAPER = EXP / "paper_rag24" / "README.md"


def test_paper_rag24_descriptive_table(nist_labels):
    rows = {r[0]: r[1:] for r in table(README_PAPER, "descriptive")}
    computed = {"NIST 21 topics (this file)": describe_labels(nist_labels)}
    for profile in PROFILES:
        computed[f"simulated {profile}, seed 0"] = describe_labels(simulate_judge(nist_labels, profile, seed=0))
    for source, d in computed.items():
        got = [str(d["topics"])] + [fmt(d[c], ".2f") for c in TABLE4_COLUMNS[1:]]
        assert same_within_last_digit(" | ".join(rows[source]), " | ".join(got)), (source, rows[source], got)
    paper = {"1a": "1a_autonuggets_edits__manualassign", "1b": "1b_manualnuggets__manualassign",
             "3a": "3a_autonuggets_edits__autoassign", "3b": "3b_manualnuggets__autoassign"}
    for tag, key in paper.items():
        (cells,) = [v for k, v in rows.items() if k.startswith(f"paper {tag} ")]
        assert [float(c) for c in cells] == pytest.approx(TABLE4[key], abs=1e-9), tag


def test_paper_rag24_seed0_tau_with_ci(nist_labels):
    rows = table(README_PAPER, "tau_seed0")
    assert len(rows) == 12
    judges = {p: simulate_judge(nist_labels, p, seed=0) for p in PROFILES}
    cache = {}
    for profile, metric, level, tau, lo, hi in rows:
        key = (profile, metric)
        if key not in cache:
            cache[key] = tau_levels(nist_labels, judges[profile], metric=METRIC[metric], n_boot=1000, seed=0)
        t = cache[key]
        got = [fmt(getattr(t, level), ".3f"), fmt(t.ci[level][0], ".3f"), fmt(t.ci[level][1], ".3f")]
        assert same_within_last_digit(" | ".join([tau, lo, hi]), " | ".join(got)), (profile, metric, level, got)


def test_paper_rag24_tau_over_seeds(nist_labels):
    """The 20-seed means, sds and ranges, and the paper column, of the README's tau table."""
    import numpy as np

    rows = table(README_PAPER, "tau_summary")
    assert len(rows) == 12
    vals: dict[tuple[str, str], dict[str, list[float]]] = {}
    for profile in PROFILES:
        for seed in range(20):
            judge = simulate_judge(nist_labels, profile, seed=seed)
            for metric in METRIC:
                t = tau_levels(nist_labels, judge, metric=METRIC[metric])
                d = vals.setdefault((profile, metric), {"run": [], "topic_avg": [], "pooled": []})
                for lvl in d:
                    d[lvl].append(getattr(t, lvl))
    for profile, metric, level, mean, sd, lo, hi, paper, gap in rows:
        v = np.array(vals[(profile, metric)][level])
        pv = KENDALL_TAU[PROFILES[profile]][metric][("run", "topic_avg", "pooled").index(level)]
        assert paper == f"{pv:.3f} ({PROFILES[profile][:2]})"
        got = [fmt(v.mean(), ".3f"), fmt(v.std(ddof=1), ".3f"), fmt(v.min(), ".3f"), fmt(v.max(), ".3f"), fmt(pv - v.mean(), ".3f")]
        assert same_within_last_digit(" | ".join([mean, sd, lo, hi, gap]), " | ".join(got)), (profile, metric, level, got)


_NUM = re.compile(r"[-+]?\d+\.\d+")


def same_within_last_digit(expected: str, printed: str) -> bool:
    """Equal text (whitespace collapsed) and every decimal number within one unit of its last printed digit (a
    near-tie or a last-bit difference between machines may flip the printed digit; more than one unit may not)."""
    ea, pa = _NUM.findall(expected), _NUM.findall(printed)
    ta = [" ".join(t.split()) for t in _NUM.split(expected)]
    tb = [" ".join(t.split()) for t in _NUM.split(printed)]
    if ta != tb or len(ea) != len(pa):
        return False
    for x, y in zip(ea, pa):
        dec = len(x.split(".")[1])
        if len(y.split(".")[1]) != dec or abs(float(x) - float(y)) > 1.0001 * 10 ** -dec:
            return False
    return True


def test_same_within_last_digit():
    assert same_within_last_digit("ppi  0.637 +-0.0051", "ppi 0.638 +-0.0050")
    assert not same_within_last_digit("ppi 0.637", "ppi 0.639")
    assert not same_within_last_digit("ppi 0.637", "ols 0.637")


def test_paper_rag24_calibrate_table(nist_labels, nist_file, tmp_path, capsys):
    """The README's `metaeval calibrate` output for the seed-0 edits judge, line for line, every number within one
    unit of its last printed digit (optimisers and summation order differ between machines)."""
    from metaeval.cli import main
    from metaeval.io.assignments import write_assignments

    text = README_PAPER.read_text(encoding="utf-8")
    start = re.search(r"^\$ metaeval calibrate .*--out results/paper_rag24/calibrate_edits\n", text, re.M).end()
    block = re.split(r"\n\$ |\n```", text[start:], maxsplit=1)[0]
    expected = [line for line in block.splitlines() if line.strip() and not line.startswith("wrote ")]
    assert len(expected) > 20 and expected[-1].startswith("recommendation: V_strict")
    judge = tmp_path / "judge_edits_seed0.jl"
    write_assignments(simulate_judge(nist_labels, "paper-fig6-edits", seed=0, name="simulated-edits-seed0"), judge)
    capsys.readouterr()
    rc = main(["calibrate", "--human", str(nist_file), "--judge", str(judge), "--metric", "v_strict", "--metric",
               "a_strict", "--folds", "5", "--seed", "0", "--out", str(tmp_path / "cal")])
    assert rc == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if line.strip() and not line.startswith("wrote ")]
    assert len(printed) == len(expected)
    bad = [(e, p) for e, p in zip(expected, printed) if not same_within_last_digit(e, p)]
    assert not bad, bad[:3]


# -------------------------------------------------------------------------------- judge_sweep_template
README_TEMPLATE = EXP / "judge_sweep_template" / "README.md"


def test_judge_sweep_template_dry_run(nist_file, capsys, monkeypatch):
    from metaeval.cli import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    text = README_TEMPLATE.read_text(encoding="utf-8")
    block = text.split("<!-- dry-run -->\n```\n", 1)[1].split("```", 1)[0]
    capsys.readouterr()
    rc = main(["sweep", "+experiment=judge_sweep_template", f"dataset.source={nist_file}", "--dry-run"])
    printed = capsys.readouterr().out
    assert rc == 0
    assert printed.strip() == block.strip()
    calls = {line.split()[0]: int(line.split()[1]) for line in printed.splitlines() if "__v1__human_auto" in line}
    assert set(calls) == {"gpt-4o__v1__human_auto", "claude__v1__human_auto", "vllm__v1__human_auto"}
    # independent count: the paper's batching, one call per answer per 10 nuggets
    expected = 0
    with open(nist_file, encoding="utf-8") as fh:
        for line in fh:
            expected += math.ceil(len(json.loads(line)["nuggets"]) / 10)
    assert set(calls.values()) == {expected}
    total = int(re.search(r"([\d,]+) calls in all", text).group(1).replace(",", ""))
    assert total == sum(calls.values())


# ------------------------------------------------------------------------------------- strictness_study
README_STRICT = EXP / "strictness_study" / "README.md"


@pytest.fixture(scope="module")
def strictness_cells(tmp_path_factory):
    """The human_auto cells of the study's sweep (same judges and configs; no bootstrap or calibration, which do
    not change the labels)."""
    from metaeval.cli import main

    out = tmp_path_factory.mktemp("strict")
    rc = main(["sweep", "+experiment=strictness_study", "grid.strategies=[human_auto]", "calibration.enabled=false",
               "analysis.bootstrap=0", f"results_dir={out}", "--no-progress"])
    assert rc == 0
    return out / "strictness_study" / "cells"


def test_strictness_study_agreement_and_confusion(strictness_cells):
    from metaeval.calibration.strictness import strictness_models
    from metaeval.data import load_dataset
    from metaeval.io import load_labels

    human = load_dataset("demo").labels
    agreement = {r[0]: r[1:] for r in table(README_STRICT, "agreement")}
    confusion = {(r[0], r[1]): [int(c) for c in r[2:]] for r in table(README_STRICT, "confusion")}
    assert len(agreement) == 3 and len(confusion) == 9
    g = lambda v: fmt(v, ".4g")  # noqa: E731 - run.py prints with 4 significant digits
    for cell in agreement:
        judge = load_labels(strictness_cells / cell / "labels.jsonl")
        ag = label_agreement(human, judge)
        clus = strictness_models(human, judge, mixed=False)["strictness_index"]["all"]["all"]
        got = [str(ag["n"]), g(ag["exact_agreement"]), g(ag["cohen_kappa"]), g(ag["weighted_kappa"]),
               g(ag["strictness_index"]), f"[{g(ag['strictness_ci'][0])}, {g(ag['strictness_ci'][1])}]",
               f"[{g(clus['ci_cluster'][0])}, {g(clus['ci_cluster'][1])}]", g(ag["p_lower"]), g(ag["p_higher"]),
               g(ag["stuart_maxwell_stat"]), g(ag["stuart_maxwell_p"])]
        assert same_within_last_digit(" | ".join(agreement[cell]), " | ".join(got)), (cell, agreement[cell], got)
        for i, label in enumerate(("not_support", "partial_support", "support")):
            assert confusion[(cell, label)] == ag["confusion"][i], (cell, label)
