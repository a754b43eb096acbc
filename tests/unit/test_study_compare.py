"""The study compares the grid's natural neighbours (same judge, another prompt or strategy) and only them, with
the calibrated-error rows from the cells' calibration, in ``analysis/compare.json`` and ``analysis/paired.csv``."""

from __future__ import annotations

import json

import numpy as np


def test_study_writes_the_neighbours_comparison(nist_labels, tmp_path):
    from metaeval.layout import ResultsLayout
    from metaeval.study.run import StudyInput, run_study
    from metaeval.study.settings import build_study_settings
    from metaeval.testing.relabel import judge_like

    ref = nist_labels.subset(qids=nist_labels.qids[:12])
    sup = ref.labels["support"].astype(str).to_numpy()
    noisy = np.where((np.arange(len(sup)) * 2654435761 % 1000) < 400, "not_support", sup)
    sets = {"j__v1__human_auto": ref.with_labels(noisy, name="v1"), "j__v2__human_auto": judge_like(ref, "v2"),
            "k__v1__human_auto": judge_like(ref, "k")}
    rows = [{"cell": c, "judge": c.split("__")[0], "prompt": c.split("__")[1], "strategy": "human_auto",
             "stats": {"judge_calls": 0, "calls": 0}} for c in sets]
    settings = build_study_settings({"bootstrap": 200, "seed": 0, "metrics": ["v_strict"]},
                                    {"folds": 3, "seed": 0, "workers": 1, "methods": ["none", "ppi_pp"]})
    lay = ResultsLayout(tmp_path, "grid")
    run_study(StudyInput(layout=lay, label_sets=sets, reference=ref, settings=settings, config={"name": "grid"},
                         cells=rows, calibratable=list(sets), dataset={"name": "nist"}, topics={q: "" for q in ref.qids}))
    doc = json.loads((lay.analysis_dir / "compare.json").read_text())
    pairs = {(r["candidate_a"], r["candidate_b"]) for r in doc["rows"]}
    assert pairs == {("j__v1__human_auto", "j__v2__human_auto")}  # never across judges k vs j
    stats = {r["statistic"] for r in doc["rows"]}
    assert stats >= {"tau", "cohen_kappa", "weighted_kappa", "exact_agreement", "calibrated_mae"}
    nested = next(r for r in doc["rows"] if r["statistic"] == "calibrated_mae")
    cal = json.loads(lay.calibration(next(iter(sets))).read_text())
    assert nested["value_a"] == cal["selection"]["nested_mae"]["mean"]
    (line,) = doc["lines"]
    kappa = next(r for r in doc["rows"] if r["statistic"] == "cohen_kappa")
    assert kappa["better"] in sets and kappa["p_holm"] < 0.05
    assert line.startswith(f"j__v1__human_auto vs j__v2__human_auto (prompt v1 vs v2): {kappa['better']} agrees better")
    paired = lay.read_table(lay.analysis_dir / "paired.csv")
    assert len(paired) == len(doc["rows"])


def test_a_study_without_pairs_leaves_no_comparison(nist_labels, tmp_path):
    from metaeval.layout import ResultsLayout
    from metaeval.study.run import StudyInput, run_study
    from metaeval.study.settings import build_study_settings
    from metaeval.testing.relabel import judge_like

    ref = nist_labels.subset(qids=nist_labels.qids[:6])
    lay = ResultsLayout(tmp_path, "one")
    (lay.analysis_dir).mkdir(parents=True)
    (lay.analysis_dir / "compare.json").write_text('{"rows": [{"stale": 1}]}')  # from an earlier study
    settings = build_study_settings({"bootstrap": 0, "metrics": ["v_strict"]}, {"enabled": False})
    cells = {"a__v1__h": judge_like(ref, "a"), "a__v2__h": judge_like(ref, "b")}
    rows = [{"cell": c, "judge": "a", "prompt": c.split("__")[1], "strategy": "h"} for c in cells]
    run_study(StudyInput(layout=lay, label_sets=cells, reference=ref, settings=settings, cells=rows))
    assert not (lay.analysis_dir / "compare.json").exists()  # bootstrap 0: no paired replicates, no comparison
