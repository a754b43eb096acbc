"""The measure registry (``metaeval.measures``): aliases, nuggetizer's field names against the real file, the
per-answer formulas against hand-computed values and against ``score_answers``, the one primary-metric setting,
and the layers that read metric names from it (verdict thresholds, summary table, missing figures)."""

from __future__ import annotations

import json
import math

import pytest

from metaeval import measures as M
from metaeval.errors import ConfigError, FormatError
from metaeval.study.records import Summary
from tests.helpers import results as R


def test_every_alias_in_any_case_names_the_same_measure():
    assert M.METRICS == ("v_strict", "a_strict", "v", "a", "w_strict", "w")
    seen: set[str] = set()
    for m in M.REGISTRY:
        own = {alias.lower() for alias in m.aliases}
        assert not own & seen  # no alias names two measures
        seen |= own
        assert len(m.aliases) == 3
        for alias in m.aliases:
            for spelling in (alias, alias.upper(), alias.lower(), f"  {alias} "):
                assert M.measure(spelling) is m
                assert M.normalize_metric(spelling) == m.name
                assert M.display_name(spelling) == m.display
        assert M.measure(m) is m and M.find_measure(m.name) is m
        assert m.higher_is_better
    assert [M.measure(n).display for n in ("strict_vital_score", "strict_all_score", "vital_score", "all_score",
                                          "strict_weighted_score", "weighted_score")] == \
        ["V_strict", "A_strict", "V", "A", "W_strict", "W"]
    # names that are no nugget measure: kept (lower-cased) by the lenient helpers, refused by measure()
    assert M.normalize_metric(" NDCG_cut_10 ") == "ndcg_cut_10" and M.display_name("ndcg_cut_10") == "ndcg_cut_10"
    assert M.find_measure("ndcg") is None


def test_unknown_name_is_one_line_naming_the_nearest_measure():
    with pytest.raises(ConfigError) as e:
        M.measure("a_strct", "--metric")
    msg = str(e.value)
    assert msg.startswith("--metric 'a_strct': not a nugget measure; did you mean A_strict?") and "\n" not in msg
    assert "V_strict, A_strict, V, A, W_strict, W" in msg
    with pytest.raises(ConfigError, match="did you mean V_strict"):
        M.measure("strict_vital")
    with pytest.raises(ConfigError) as e:
        M.measure("ndcg")
    assert "did you mean" not in str(e.value)  # nothing close: no guess, the valid names


def test_nuggetizer_field_names_are_the_real_metrics_file_keys(nuggetizer_dir):
    from metaeval.io.metrics import NUGGETIZER_FIELDS

    path = nuggetizer_dir / "metrics_baseline_rag24.test_gpt_4o_top20.jsonl"
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    keys = [k for k in first if k != "qid"]
    assert sorted(keys) == sorted(m.nuggetizer for m in M.REGISTRY)
    assert list(NUGGETIZER_FIELDS) == keys  # written in the file's own order
    assert all(M.measure(k).name == col for k, col in NUGGETIZER_FIELDS.items())


def test_formulas_against_hand_values():
    # vital: support, partial, not, FAILED (no credit, in the denominator); okay: support, partial; one FAILED importance
    sup = ["support", "partial_support", "not_support", "FAILED", "support", "partial_support", "support"]
    imp = ["vital", "vital", "vital", "vital", "okay", "okay", "FAILED"]
    hand = {
        "v_strict": 1 / 4,                                  # 1 supported of 4 vital
        "v": (1 + 0.5) / 4,
        "a_strict": 3 / 7,                                  # 3 supported of all 7 (FAILED importance counts in A)
        "a": (3 + 2 * 0.5) / 7,
        "w_strict": (1 + 0.5 * 1) / (4 * 1 + 2 * 0.5),      # weights 1 vital, 0.5 okay, 0 FAILED importance
        "w": (1 + 0.5 + 0.5 * (1 + 0.5)) / (4 + 1),
    }
    for name, want in hand.items():
        m = M.measure(name)
        assert m.score(sup, imp) == pytest.approx(want, abs=1e-15), name
        assert m.formula.__doc__ and m.display.split("_")[0] in m.description  # the docstring gives the formula
    assert M.measure("v_strict").score(["support"], ["okay"]) == 0.0  # no vital nugget: 0, as nuggetizer
    assert M.measure("a").score([], []) == 0.0
    with pytest.raises(ConfigError):
        M.answer_score(["support"], [], "all", True)
    with pytest.raises(ConfigError, match="nugget family"):
        M.family_weight("some", True, False)


def test_per_answer_formulas_equal_score_answers_on_real_labels(nuggetizer_dir):
    """The registry's reference definition and the vectorised scoring agree on every answer of a real file."""
    from metaeval.io import load_labels
    from metaeval.scoring import score_answers

    labels = load_labels(nuggetizer_dir / "assignments_baseline_rag24.test_gpt4o_top20.jsonl")
    per = score_answers(labels).set_index(["run_id", "qid"])
    lab = labels.labels.astype({"support": object, "importance": object})
    n = 0
    for (run_id, qid), g in lab.groupby(["run_id", "qid"], sort=False):
        row = per.loc[(run_id, qid)]
        for m in M.REGISTRY:
            got = m.score(list(g["support"]), list(g["importance"]))
            assert math.isclose(got, float(row[m.name]), rel_tol=0, abs_tol=1e-12), (run_id, qid, m.name)
        n += 1
    assert n == len(per) > 100


def test_one_primary_metric_setting():
    from metaeval.study.settings import AnalysisSettings, build_study_settings

    assert M.DEFAULT_PRIMARY == M.METRICS[0] == AnalysisSettings().primary_metric == "v_strict"
    s = build_study_settings(analysis={"metrics": ["strict_all_score", "V"]})
    assert s.analysis.metrics == ["a_strict", "v"] and s.analysis.primary_metric == "a_strict"
    with pytest.raises(ConfigError, match="did you mean A_strict"):
        build_study_settings(analysis={"metrics": ["a_strct"]})


def test_thresholds_metric_any_alias_default_the_study_primary(tmp_path):
    from metaeval.report import verdict as V

    assert V.DEFAULTS["metric"] is None  # the study's primary metric, filled in by build_report
    y = tmp_path / "t.yaml"
    y.write_text("metric: strict_all_score\n", encoding="utf-8")
    assert V.load_thresholds(y)["metric"] == "a_strict"
    y.write_text("metric: a_strct\n", encoding="utf-8")
    with pytest.raises(FormatError) as e:
        V.load_thresholds(y)
    assert e.value.field == "metric" and "did you mean A_strict" in str(e.value)
    cell = {"cell": "c", "failure_rate": 0.0,
            "analysis": {"metrics": {"a_strict": {"run": {"tau": 0.9, "ci": [0.85, 0.95]}}}}}
    v = V.evaluate(R.cells(cell), {**V.DEFAULTS, "metric": "A_strict"})
    assert v["passed"] and v["thresholds"]["metric"] == "a_strict"
    assert V.headline(v) == "Verdict: PASS - all 1 judged cell(s) meet the thresholds on A_strict."


def _summary(primary: str | None, metrics: dict, analysed: bool = True):
    """A summary read through the results schema (``primary`` None: a file without ``primary_metric``)."""
    j1 = {"cell": "j1", "stats": {}, "analysis": {"metrics": metrics}} if analysed else {"cell": "j1", "stats": {}}
    doc = R.summary_doc([j1, {"cell": "j2", "skipped": "cannot run"}], experiment="x", dataset={"name": "d"})
    if primary:
        doc["primary_metric"] = primary
    else:
        doc.pop("primary_metric")
    return Summary.from_json(doc, "x/summary.json")


def test_summary_table_reports_the_recorded_primary_metric():
    from metaeval.study.summary import missing_figures, summary_markdown

    block = {lv: {"tau": 0.5, "ci": [0.4, 0.6]} for lv in ("run", "topic_avg", "pooled")}
    md = summary_markdown(_summary("a_strict", {"a_strict": block}))
    assert "Kendall's tau (tau-b) on A_strict with" in md
    assert "| j1 | 0 | 0 | 0 | 0 (0.0%) | 0.0000 | 0.500 [0.40, 0.60] | 0.500 [0.40, 0.60] | 0.500 [0.40, 0.60] | - |" in md
    assert missing_figures(_summary("a_strict", {"a_strict": block})) == []
    # a summary without the primary metric it reports on does not read: the schema names the field
    with pytest.raises(FormatError, match="x/summary.json: field 'primary_metric': missing"):
        _summary(None, {"v_strict": block})
    # asked for figures the analysis does not have: one line per judged cell (skipped cells ask for none)
    assert missing_figures(_summary("a_strict", {"v_strict": block})) == [
        "j1: no A_strict tau (its analysis has no such metric)"]
    no_ref = _summary("a_strict", {}, analysed=False)
    assert missing_figures(no_ref) == []  # no reference, no analysis at all: no figure was asked for
