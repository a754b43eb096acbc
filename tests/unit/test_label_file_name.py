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


def test_calibrate_names_a_cell_labels_file_by_its_cell(tmp_path, capsys):
    """``metaeval calibrate --judge results/X/cells/CELL/labels.jsonl`` printed ``calibration of labels against
    ...`` and wrote ``"judge": "labels"``: the loader every command shares (``io.load_labels``) now names the file by
    the same rule."""
    import json

    from metaeval.cli import main
    from metaeval.io import load_labels

    human = DEMO / "assignments.jsonl"
    cell = tmp_path / "lexical__human_auto"
    cell.mkdir()
    shutil.copy(human, cell / "labels.jsonl")
    assert load_labels(cell / "labels.jsonl").name == "lexical__human_auto"
    assert load_labels(cell).name == "lexical__human_auto"
    assert load_labels(human).name == "assignments" and load_labels(human, name="nist").name == "nist"
    rc = main(["calibrate", "--human", str(human), "--judge", str(cell / "labels.jsonl"), "--metrics", "V_strict",
               "--out", str(tmp_path / "cal"), "-q"])
    assert rc in (0, None)
    assert "calibration of lexical__human_auto against assignments:" in capsys.readouterr().out
    assert json.loads((tmp_path / "cal" / "calibration.json").read_text())["judge"] == "lexical__human_auto"
