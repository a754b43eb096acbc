"""Issue 32 item 9: a sweep cell's ``labels.jsonl`` goes by its cell id (the folder), not "labels", in the Python
API as in ``metaeval analyze`` and ``metaeval compare``; any other file by its stem."""

from __future__ import annotations

import shutil

import metaeval
from metaeval.paths import label_file_name
from metaeval.study.compare import resolve_candidates

DEMO = metaeval.paths.PACKAGE_DIR / "data" / "demo"


def test_the_generic_labels_file_is_named_by_its_folder(tmp_path):
    cell = tmp_path / "lexical__human_auto"
    cell.mkdir()
    assert label_file_name(cell / "labels.jsonl") == "lexical__human_auto"
    assert label_file_name(tmp_path / "nist.20241108.jl") == "nist"


def test_api_and_compare_name_a_cell_labels_file_by_its_cell(tmp_path):
    human = DEMO / "assignments.jsonl"
    cell = tmp_path / "mycell"
    cell.mkdir()
    shutil.copy(human, cell / "labels.jsonl")
    res = metaeval.analyze(human, cell / "labels.jsonl", metrics="v_strict", n_boot=50)
    assert res.cells["candidate"].tolist() == ["mycell"]
    assert [c.name for c in resolve_candidates([str(cell / "labels.jsonl")], minimum=1)] == ["mycell"]
