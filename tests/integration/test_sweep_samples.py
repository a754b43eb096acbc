"""``sweep.samples=k`` end to end (issue 16): k draws of every assignment call in one sweep, the judge's
self-consistency in consistency.json, the summary and the report, against the simulated judge (offline) and an
LLM judge sampled from the wire-compatible test server."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from metaeval.io.assignments import read_assignments
from metaeval.testing.rules import sampling_rule
from metaeval.testing.server import ChatTestServer
from tests.integration.test_sweep import summary, sweep

SIM = ["runtime=serial", "grid=single", "judge=simulated_fig6", "strategy=human_auto", "analysis.bootstrap=100"]


def _codes(paths: list[Path]) -> np.ndarray:
    from metaeval.simulation import labels_to_codes

    return np.stack([labels_to_codes(read_assignments(p).labels["support"].astype(object).to_numpy()) for p in paths])


def test_simulated_samples_in_one_sweep(tmp_path):
    sweep(tmp_path, *SIM, "sweep.samples=4", "name=s")
    cell = tmp_path / "s" / "cells" / "simulated_fig6__human_auto"
    files = [cell / "labels.jsonl"] + [cell / "samples" / f"labels.s{i}.jsonl" for i in (1, 2, 3)]
    assert all(f.exists() for f in files) and not (cell / "samples" / "labels.s4.jsonl").exists()
    cons = json.loads((cell / "consistency.json").read_text(encoding="utf-8"))
    # the flip rate recomputed from the four label files by hand: pairwise disagreement of draws per label
    codes = _codes(files)
    k = codes.shape[0]
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    by_hand = np.mean([(codes[a] != codes[b]).mean() for a, b in pairs])
    assert cons["k"] == 4 and abs(cons["flip"]["flip_rate"] - by_hand) < 1e-12
    assert 0.1 < by_hand < 0.8  # independent draws from Figure 6 rows disagree often, never always
    # tau over draws: one value per draw, scipy's tau-b on each draw's run means
    from scipy.stats import kendalltau

    from metaeval.data.dataset import load_dataset
    from metaeval.scoring import run_scores, score_answers

    ref = run_scores(score_answers(load_dataset("demo").labels)).set_index("run_id")["v_strict"]
    per_draw = []
    for f in files:
        j = run_scores(score_answers(read_assignments(f))).set_index("run_id")["v_strict"]
        # run means that differ only by summation order are ties (metaeval settles to 10 decimals before ranking)
        per_draw.append(kendalltau(np.round(ref.loc[j.index], 10), np.round(j, 10)).statistic)
    assert np.allclose(cons["tau"]["vs_reference"]["per_draw"], per_draw, atol=1e-9)
    assert cons["topic_bootstrap_tau_sd"] > 0
    variants = cons["calibration"]["variants"]
    assert set(variants) == {"hard (draw 0)", "majority", "soft (vote share)"}
    assert all({"none", "ppi", "ppi_pp", "regression"} <= set(v) for v in variants.values())
    s = summary(tmp_path, "s")
    row = next(c for c in s["cells"] if c["cell"] == "simulated_fig6__human_auto")
    assert row["samples"] == 4 and row["consistency"]["flip"] == cons["flip"]
    assert row["labels"] == 4 * len(read_assignments(files[0]).labels)  # label counts (and FAILED rate) over all draws
    md = (tmp_path / "s" / "summary.md").read_text(encoding="utf-8")
    assert "Judge self-consistency" in md and f"flip rate {cons['flip']['flip_rate']:.3f}" in md
    report = (tmp_path / "s" / "report.md")
    if report.exists():  # the sweep writes the report unless report.enabled is off
        assert "Judge self-consistency (k samples)" in report.read_text(encoding="utf-8")
    # draw 0 is the one-sample sweep: rerunning with samples=1 reuses every job and keeps labels.jsonl as it is
    before = (cell / "labels.jsonl").read_bytes()
    sweep(tmp_path, *SIM, "name=s")
    s1 = summary(tmp_path, "s")
    row1 = next(c for c in s1["cells"] if c["cell"] == "simulated_fig6__human_auto")
    assert row1["this_run"]["executed"] == 0 and row1["samples"] == 1 and "consistency" not in row1
    assert (cell / "labels.jsonl").read_bytes() == before


def test_llm_judge_samples_against_the_test_server(tmp_path):
    common = ["runtime=serial", "grid=single", "judge=testserver", "strategy=human_auto", "analysis.bootstrap=50",
              "calibration.enabled=false", "judge.deployment.params.temperature=0.7"]
    with ChatTestServer(rule=sampling_rule(p_redraw=0.3, seed=0)) as srv:
        url = f"judge.deployment.base_url={srv.openai_base_url}"
        sweep(tmp_path / "one", url, "name=one", *common)
        one = srv.counts["requests"]
        srv.reset_counts()
        res = sweep(tmp_path / "k", url, "name=k", "sweep.samples=3", *common)
        three = srv.counts["requests"]
        srv.reset_counts()
        sweep(tmp_path / "k", url, "name=k", "sweep.samples=3", *common)  # resume: every draw is stored and cached
        again = srv.counts["requests"]
    assert one > 0 and three == 3 * one and again == 0, (one, three, again)
    assert "temperature 0" not in res.stderr
    cons = json.loads((tmp_path / "k" / "k" / "cells" / "testserver__v1__human_auto" / "consistency.json").read_text(encoding="utf-8"))
    # 30% of labels redrawn uniformly from 3 labels in draws 1 and 2: flip rate well above 0, well below 1
    assert cons["k"] == 3 and 0.05 < cons["flip"]["flip_rate"] < 0.5
    assert "vs_reference" in cons["tau"] and "calibration" in cons


def test_samples_refused_for_a_deterministic_single_judge(tmp_path):
    res = sweep(tmp_path, "runtime=serial", "grid=single", "judge=lexical", "strategy=human_auto", "sweep.samples=3",
                "name=lex", check=False)
    assert res.returncode == 2 and "deterministic" in res.stderr
    assert not (tmp_path / "lex" / "jobs.jsonl").exists()


def test_dry_run_counts_every_draw(tmp_path):
    def calls(*extra: str) -> int:
        res = sweep(tmp_path, "--dry-run", "runtime=serial", "grid=single", "judge=testserver", "strategy=human_auto",
                    "name=dry", *extra)
        rows = [line for line in res.stdout.splitlines() if "testserver__v1__human_auto" in line]
        assert rows, res.stdout
        return int(rows[0].split()[1].replace(",", ""))

    assert calls("sweep.samples=5") == 5 * calls() > 0
