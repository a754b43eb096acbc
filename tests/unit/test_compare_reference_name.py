"""``metaeval compare`` on sweep cells names the reference as the sweep's summary names the dataset: after
``dataset=trec-rag-2024 dataset.source=$NIST`` it said "the human labels of dataset /abs/path/nugget_assignment...jl"
(the source where the name belongs; the demo, which has no source, read "dataset demo")."""

from __future__ import annotations

import json

import metaeval
from metaeval.study.compare import Candidate, sweep_reference
from tests.helpers.results import summary_doc

DEMO = metaeval.paths.PACKAGE_DIR / "data" / "demo"


def _sweep(tmp_path, dataset):
    root = tmp_path / "results" / "s"
    (root / "cells" / "c").mkdir(parents=True)
    (root / "summary.json").write_text(json.dumps(summary_doc([], config={"dataset": dataset})))
    return Candidate("c", root / "cells" / "c" / "labels.jsonl", sweep=root)


def test_the_reference_goes_by_the_dataset_name_with_its_source_beside_it(tmp_path):
    c = _sweep(tmp_path, {"name": "trec-rag-2024", "source": str(DEMO), "nuggets": None})
    labels, said = sweep_reference([c])
    assert said == f"the human labels of dataset trec-rag-2024 ({DEMO})"
    assert len(labels) > 0


def test_a_dataset_without_a_source_is_named_once(tmp_path):
    c = _sweep(tmp_path, {"name": "demo", "source": None, "nuggets": None})
    assert sweep_reference([c])[1] == "the human labels of dataset demo"
