"""A provider, a calibration method and a dataset format plugged in from OUTSIDE the package (issue 31).

Each toy is one file in ``tests/helpers/plugins/`` that registers itself on import (``@register_backend``,
``@register``, ``register_format``); nothing in ``metaeval/`` names them.  Each is then used through the public
path a user takes: the provider through a sweep (the judge resolved by the catalog from a config folder, its calls
served by the local test server), the method as a candidate of that sweep's calibration and of
``metaeval.calibrate``, the format through ``metaeval.load_dataset``.  The registrations are undone afterwards.
"""

from __future__ import annotations

import importlib

import pytest

import metaeval

TOYS = ("tests.helpers.plugins.toy_backend", "tests.helpers.plugins.toy_method", "tests.helpers.plugins.toy_format")


@pytest.fixture
def toys():
    from metaeval.calibration.methods.base import REGISTRY as METHODS
    from metaeval.io import REGISTRY as FORMATS
    from metaeval.judges.backends.base import BACKENDS

    import sys

    mods = [importlib.reload(sys.modules[m]) if m in sys.modules else importlib.import_module(m) for m in TOYS]
    yield mods
    BACKENDS.pop("toy_http", None)
    METHODS.pop("toy_shift", None)
    FORMATS.pop("toy_answers", None)


def test_registries_list_the_toys_and_forget_them(toys):
    from metaeval.calibration.methods import method_names
    from metaeval.io import format_names
    from metaeval.judges.backends import backend_names
    from metaeval.study.calibration_workflow.defaults import ALL_METHODS

    assert "toy_http" in backend_names() and "toy_answers" in format_names()
    assert method_names("score")[-1] == "toy_shift" and "toy_shift" in method_names() and "toy_shift" in ALL_METHODS


def test_toy_provider_and_method_through_a_sweep_and_calibrate(toys, tmp_path):
    from metaeval.data.dataset import demo_dir
    from metaeval.judges.catalog import resolve_judge
    from metaeval.pipeline.replicas import auto_replicas
    from metaeval.testing.server import ChatTestServer

    with ChatTestServer() as srv:
        conf = tmp_path / "conf" / "judge"
        conf.mkdir(parents=True)
        (conf / "toy.yaml").write_text(
            "judge: llm\nname: toy\ndeployment:\n  name: toy\n  backend: toy_http\n  model: test-model\n"
            f"  base_url: {srv.openai_base_url}\n  api_key_env: null\n  params: {{temperature: 0.0}}\n"
            "  limits: {concurrency: 8, max_retries: 2, timeout_s: 10}\n", encoding="utf-8")
        spec = resolve_judge("toy", config_dirs=[tmp_path / "conf"])  # the catalog resolves it like a shipped judge
        assert spec.deployment.backend == "toy_http" and auto_replicas(spec, 256, 8) == 8  # replicas ask the backend
        res = metaeval.sweep(["grid=single", "judge=toy", "strategy=human_auto", "name=toy", f"results_dir={tmp_path}",
                              "runtime=serial", "calibration.methods=[toy_shift]"], config_dir=tmp_path / "conf")
        assert srv.counts["ok"] > 0, (srv.counts, res.json["cells"][0])
    (cell,) = res.json["cells"]
    assert cell["judge_config"]["deployment"]["backend"] == "toy_http"
    assert cell["labels"] > 0 and cell["failure_rate"] == 0
    cal = cell["calibration"]
    # a candidate of the cell's calibration (the demo's 8 topics are below calibration.min_topics: not evaluated there)
    assert cal["candidates"]["toy_shift"]["status"] in ("ok", "not evaluated")
    assert cal["method_names"]["toy_shift"] == "toy shift"
    assert {"ppi_pp", "toy_shift"} <= set(cal["candidates"])  # the interval fallback always, and the asked

    labels = tmp_path / "toy" / "cells" / cell["cell"] / "labels.jsonl"
    out = metaeval.calibrate(demo_dir() / "assignments.jsonl", labels, methods=["toy_shift"], repeats=2, folds=3,
                             min_topics=2)
    held = out.json["candidates"]["toy_shift"]["held_out"]
    assert held["mae"]["mean"] >= 0 and held["coverage"] is not None  # its own intervals were scored out of fold


def test_toy_format_through_load_dataset(toys, tmp_path):
    from metaeval.io import detect_format

    f = tmp_path / "runs.toyanswers"
    f.write_text("runA\tq1\tParis is the capital of France.\nrunB\tq1\tLyon.\n", encoding="utf-8")
    assert detect_format(f) == "toy_answers"
    ds = metaeval.load_dataset(f)
    assert [(a.run_id, a.qid, a.text) for a in ds.answers] == [("runA", "q1", "Paris is the capital of France."),
                                                                ("runB", "q1", "Lyon.")]
    f.write_text("runA\tq1\n", encoding="utf-8")
    with pytest.raises(metaeval.errors.FormatError, match=r"runs\.toyanswers:1: expected run_id"):  # file and line
        metaeval.load_dataset(f)
