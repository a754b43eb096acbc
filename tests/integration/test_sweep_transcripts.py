"""A sweep writes one transcript per cell (``layout.transcripts(cell)``): every judge unit of the jobs the cell
used, in stage order, from the store (so a resumed run writes the same file)."""

from __future__ import annotations

import json

from metaeval.workflow.compose import compose_sweep
from metaeval.pipeline.sweep import run_sweep


def _lines(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_sweep_writes_cell_transcripts(tmp_path):
    overrides = ["grid=single", "judge=lexical", "strategy=auto_auto", "runtime=serial", "name=tr",
                 f"results_dir={tmp_path}"]
    config, cells = compose_sweep(overrides)
    outcome = run_sweep(config.pipeline, cells)
    (cid,) = outcome.label_sets
    path = outcome.layout.transcripts(cid)
    recs = _lines(path)
    stages = [r["stage"] for r in recs]
    assert stages == sorted(stages, key=["create", "importance", "assign"].index)  # stage order
    ls = outcome.label_sets[cid]
    assign = [r for r in recs if r["stage"] == "assign"]
    assert sum(len(r["labels"]) for r in assign) == len(ls.labels)  # every assignment label has its unit
    assert {(r["qid"], r["run_id"]) for r in assign} == set(zip(ls.answers["qid"], ls.answers["run_id"]))
    assert all(r["calls"] == [] and r["judge"] == "lexical" for r in recs)  # offline judge: no model call
    created = [r for r in recs if r["stage"] == "create"]
    assert created and all(r["items"] and r["labels"] for r in created)  # document ids in, nuggets out
    settings, cells = compose_sweep(overrides)
    again = run_sweep(settings.pipeline, cells)  # everything reused from the store: the same transcript
    assert _lines(again.layout.transcripts(cid)) == recs
