"""The Python API: lazy top-level names, judges as Python objects, compare(), to_latex(), progress output."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval.errors import ConfigError, FormatError
from metaeval.judges.base import AssignResult, Judge, status_of
from metaeval.types import Answer, Support, Topic


def test_import_is_light_and_names_resolve():
    code = "import sys, metaeval; print(sorted(m for m in ('pandas', 'numpy', 'scipy', 'ray') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr
    for name in ("load", "load_dataset", "score", "leaderboard", "analyze", "compare", "calibrate", "sweep",
                 "register_judge", "to_latex", "AnalysisResult", "CalibrationResult", "SweepResult"):
        assert callable(getattr(metaeval, name)) and name in dir(metaeval)
    assert not {"Any", "annotations", "TYPE_CHECKING"} & set(dir(metaeval))  # no typing helpers leak
    import types

    others = {n for n in dir(metaeval) if not n.startswith("__")} - set(metaeval.__all__)
    assert all(isinstance(getattr(metaeval, n), types.ModuleType) for n in others), others  # only subpackages
    with pytest.raises(AttributeError):
        metaeval.no_such_function  # noqa: B018
    assert metaeval.__version__


class _Half(Judge):
    kind = "half"
    STAGES = ("assign",)

    async def create_nuggets(self, *a, **k):
        raise NotImplementedError

    async def label_importance(self, *a, **k):
        raise NotImplementedError

    async def assign(self, topic, answer, nuggets):
        labels = tuple(Support.SUPPORT if i % 2 == 0 else Support.NOT_SUPPORT for i in range(len(nuggets)))
        return AssignResult(status=status_of(labels), judge=self.name, labels=labels)


def test_register_judge_instance_and_class_through_the_catalog():
    from metaeval.judges import build_judge, resolve_judge
    from metaeval.judges.plugins import unregister_judge

    inst = _Half()
    try:
        metaeval.register_judge("py-half", inst)
        spec = resolve_judge("py-half")
        assert spec.kind == "py-half" and spec.capabilities == ("assign",)
        assert build_judge(spec) is inst
        res = asyncio.run(build_judge(spec).assign(Topic("q", "t"), Answer("r", "q", "x"), ["a", "b", "c"]))
        assert [x.value for x in res.labels] == ["support", "not_support", "support"]
        metaeval.register_judge("py-half-cls", _Half)  # a class without from_config: built with no arguments
        assert isinstance(build_judge("py-half-cls"), _Half)
        with pytest.raises(ConfigError, match="built-in judge"):
            metaeval.register_judge("lexical", inst)
        with pytest.raises(ConfigError, match="Judge subclass or instance"):
            metaeval.register_judge("bad", object())
    finally:
        unregister_judge("py-half")
        unregister_judge("py-half-cls")
    with pytest.raises(ConfigError, match="unknown judge"):
        resolve_judge("py-half")


def test_run_pairs_gives_run_pairs(nist_file):
    nist = metaeval.load(nist_file)
    runs = nist.run_ids[:4]
    small = nist.subset(run_ids=runs)
    pairs = metaeval.run_pairs(small, small, metrics="V_strict")  # the keyword analyze() takes
    assert len(pairs) == 6 and not pairs["flip"].any()  # identical sides never flip
    assert set(pairs.columns) >= {"run_a", "run_b", "ref_diff", "cand_diff", "p_ref", "ref_significant", "flip"}
    assert (pairs["ref_diff"] == pairs["cand_diff"]).all()
    with pytest.warns(DeprecationWarning) as caught:
        old = metaeval.run_pairs(small, small, metric="V_strict", test="t")
    assert sorted(str(w.message).split(";")[0] for w in caught) == ["run_pairs(metric=) is deprecated",
                                                                     "run_pairs(test=) is deprecated"]
    pd.testing.assert_frame_equal(old, pairs)
    with pytest.raises(TypeError, match="both metrics= and its old name metric="):
        metaeval.run_pairs(small, small, metrics="a", metric="v")
    # compare() with one candidate: the run pairs of earlier versions, with a DeprecationWarning naming run_pairs
    with pytest.warns(DeprecationWarning, match="use run_pairs"):
        pd.testing.assert_frame_equal(metaeval.compare(small, small, metrics="V_strict"), pairs)


def test_compare_of_candidates_returns_the_paired_table(nist_file):
    from metaeval.testing.relabel import judge_like

    nist = metaeval.load(nist_file)
    small = nist.subset(qids=nist.qids[:8], run_ids=nist.run_ids[:10])
    judge = judge_like(small, "judge")
    df = metaeval.compare(small, [judge, small], metrics="v_strict", n_boot=200)
    assert set(df["statistic"]) == {"tau", "cohen_kappa", "weighted_kappa", "exact_agreement"}
    assert (df["candidate_a"] == "judge").all() and (df["better"] == small.name).all()
    assert len(df.attrs["lines"]) == 1 and "agrees better with the reference" in df.attrs["lines"][0]
    with pytest.raises(TypeError, match="unexpected keyword argument 'flip_test'"):
        metaeval.compare(small, [judge, small], flip_test="t")


def test_to_latex_escapes_and_marks_undefined():
    df = pd.DataFrame({"run_id": ["a_b", "c&d"], "tau": [0.12345, float("nan")], "n": [3, 4], "ok": [True, False]})
    tex = metaeval.to_latex(df, caption="50% of runs", label="tab:x", digits=2)
    assert "a\\_b & 0.12 & 3 & yes \\\\" in tex and "c\\&d & n/a & 4 & no \\\\" in tex
    assert "\\begin{tabular}{lrrl}" in tex and "\\caption{50\\% of runs}" in tex and "\\label{tab:x}" in tex
    assert tex.count("\\toprule") == 1 and tex.rstrip().endswith("\\end{table}")


def test_progress_is_one_line_per_stage_off_a_terminal():
    from metaeval.workflow import progress

    buf = io.StringIO()
    bar = progress.stage_progress("assign", 3, stream=buf)
    assert isinstance(bar, progress.LineProgress)
    for _ in range(3):
        bar.update(1, cache_hits=1, failures=0, retries=0, cost_usd=0.5)
    bar.close()
    text = buf.getvalue()
    assert "\r" not in text and text.count("\n") == 1
    assert text.startswith("assign: 3/3 jobs in ") and "cache hits 1" in text and "$0.5000" in text


def test_load_metrics_file_with_run_map_and_calibrate_on_the_demo(nuggetizer_dir, tmp_path):
    long = metaeval.load(nuggetizer_dir / "metrics_baseline_rag24.test_gpt_4o_top20.jsonl",
                         run_map=["metrics_baseline_rag24.test_gpt_4o_top20=gpt4o"])
    assert set(long["run_id"]) == {"gpt4o"} and set(long.columns) == {"run_id", "qid", "metric", "value"}
    ref = metaeval.load_dataset("demo").labels
    judge = ref.with_labels(ref.labels["support"].replace({"partial_support": "support"}), name="lenient")
    cal = metaeval.calibrate(ref, judge, seed=0, folds=4, n_boot=50, metrics=["V_strict", "a_strict"])
    assert isinstance(cal, metaeval.CalibrationResult) and cal.metric == "v_strict"
    # the demo's 8 human-labelled topics are below min_topics (10): nothing is evaluated or fitted, the leaderboard is
    # composite (human labels where they exist, the raw judge elsewhere) with PPI++ intervals, and it says why
    assert cal.recommendation.startswith("V_strict: leaderboard by composite (human labels where they exist, the raw "
                                         "judge elsewhere); intervals by PPI++")
    assert cal.recommendation.endswith("too few human-labelled topics to evaluate a correction (8 < min_topics 10): "
                                       "nothing evaluated, nothing fitted is shown")
    sel = cal.selection.set_index("metric")
    assert set(sel["method"]) == {"composite"} and set(sel["verdict"]) == {"cannot decide"}
    assert not sel["beats_raw"].any() and set(sel["n_topics"]) == {8} and sel["held_out_mae"].isna().all()
    assert set(cal.candidates["status"]) == {"not evaluated"}
    assert set(cal.json["by_metric"]) == {"v_strict", "a_strict"} and "model" not in cal.json and cal.json["pairing"]
    assert cal.model["format"] == "metaeval-calibration-model"
    assert {"raw", "composite", "ppi_pp"} <= set(cal.candidates["method"]) and set(cal.selection["metric"]) == {"v_strict",
                                                                                                 "a_strict"}
    lb = cal.leaderboard[cal.leaderboard["metric"] == "v_strict"]
    assert len(lb) == len(ref.run_ids) and {"judge_score", "human_estimate", "judge_score_lo"} <= set(lb.columns)
    # every topic is human-labelled: the estimate is the human run score itself (no interval); judge_score the judge's
    from metaeval.scoring import run_scores, score_answers

    human = run_scores(score_answers(ref)).set_index("run_id")["v_strict"]
    own = run_scores(score_answers(judge)).set_index("run_id")["v_strict"]
    b = lb.set_index("run_id")
    assert np.allclose(b["human_estimate"], human.loc[b.index]) and np.allclose(b["human_labelled"], human.loc[b.index])
    assert np.allclose(b["judge_score"], own.loc[b.index]) and (b["n_judge_only"] == 0).all()
    assert b["human_estimate_lo"].isna().all()
    tex = cal.to_latex()
    assert "\\begin{tabular}" in tex and "human\\_estimate" in tex and "v\\_strict" in tex
    with pytest.warns(DeprecationWarning, match="CalibrationResult"):
        assert cal["recommendation"] == cal.recommendation  # the old dict access still works, with a warning
    with pytest.warns(DeprecationWarning, match=r"calibrate\(metric=\) is deprecated"):
        assert metaeval.calibrate(ref, judge, seed=0, folds=4, n_boot=50, metric="a_strict").metric == "a_strict"
    paths = cal.write(tmp_path)
    assert [p.name for p in paths] == ["calibration.json", "calibration-model.json"]


def test_label_set_len_and_errors_that_speak_python(tmp_path):
    ref = metaeval.load_dataset("demo").labels
    assert len(ref) == len(ref.labels) == 496 and bool(ref.subset(qids=[]))  # empty is still a label set
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"foo": 1}\n')
    with pytest.raises(FormatError) as exc:
        metaeval.load(odd)
    assert "format=" in str(exc.value) and "--format" not in str(exc.value)
    with pytest.raises(ConfigError) as exc:
        metaeval.load(ref, run_map=["no-equals-sign"])
    assert "run_map=" in str(exc.value) and "--run-map" not in str(exc.value)


def test_load_a_track_folder_as_published(shared_data):
    labels = metaeval.load(shared_data / "trec-rag-2024")  # NIST's export inside, under its own name
    assert len(labels.labels) == 13158 and len(labels.run_ids) == 45


def test_an_unknown_keyword_is_a_type_error_naming_the_nearest():
    ref = metaeval.load_dataset("demo").labels
    with pytest.raises(TypeError, match="calibrate\\(\\) got an unexpected keyword argument 'fold'; did you mean 'folds'"):
        metaeval.calibrate(ref, ref, fold=3)
    with pytest.raises(TypeError, match="analyze\\(\\) got an unexpected keyword argument 'n_bot'; did you mean 'n_boot'"):
        metaeval.analyze(ref, ref, n_bot=3)
    with pytest.raises(TypeError, match="score\\(\\) got an unexpected keyword argument 'no_vitl'; did you mean 'no_vital'"):
        metaeval.score(ref, no_vitl="zero")


def test_a_python_judge_is_a_grid_judge_without_a_config_file(tmp_path):
    """``metaeval.sweep(judges=...)`` registers the judge in the catalog; Hydra composes it from the catalog (no
    temporary YAML), and ``judge=NAME`` / ``grid.judges=[NAME]`` name it like a shipped judge."""
    from metaeval.workflow.compose import compose_sweep
    from metaeval.judges.plugins import unregister_judge

    try:
        metaeval.register_judge("py-half-grid", _Half())
        _, (cell,) = compose_sweep(["grid=single", "judge=py-half-grid", "strategy=human_auto"])
        assert cell.judge.kind == "py-half-grid" and cell.judge_name == "py-half-grid"
        _, cells = compose_sweep(["grid.judges=[lexical,py-half-grid]", "grid.strategies=[human_auto]",
                                  "grid.optional_judges=[]"])
        assert sorted(c.judge_name for c in cells) == ["lexical", "py-half-grid"]
        res = metaeval.sweep(["grid=single", "judge=py-half-grid", "strategy=human_auto", "runtime=serial",
                              f"results_dir={tmp_path}", "name=py", "calibration.enabled=false",
                              "analysis.bootstrap=20", "sweep.progress=false"])
        assert isinstance(res, metaeval.SweepResult) and not res.dry_run and res.path == tmp_path / "py"
        (row,) = res.cells.to_dict("records")
        assert row["cell"] == "py-half-grid__human_auto" and row["labels"] > 0 and row["status"] == "ok"
        assert row["tau_run"] == res.json["cells"][0]["analysis"]["metrics"]["v_strict"]["run"]["tau"]
        ci = res.json["cells"][0]["analysis"]["metrics"]["v_strict"]["run"].get("ci") or [None, None]
        assert [row["tau_run_lo"], row["tau_run_hi"]] == list(ci)
        assert "py-half-grid\\_\\_human\\_auto" in res.to_latex() and res.report == tmp_path / "py" / "report.html"
        back = metaeval.SweepResult.read(res.path)  # a results folder read back through the results schema
        assert back.summary == res.summary and back.cells.equals(res.cells) and back.json == res.json
        assert res.summary.cells[0].tau("v_strict", "run").tau == row["tau_run"]
        dry = metaeval.sweep(["grid=single", "judge=py-half-grid", "strategy=human_auto", "runtime=serial",
                              f"results_dir={tmp_path}", "name=py2", "sweep.dry_run=true"])
        assert dry.dry_run and dry.json is None and list(dry.estimates["cell"]) == ["py-half-grid__human_auto"]
        assert int(dry.estimates["input_tokens"].iloc[0]) == 0  # a Python judge prompts no model
        with pytest.raises(TypeError, match="list of overrides"):
            metaeval.sweep("grid=single")
    finally:
        unregister_judge("py-half-grid")
    with pytest.raises(ConfigError, match="py-half-grid"):
        compose_sweep(["grid=single", "judge=py-half-grid"])
