"""The calibration's shared and skipped work moves no number: the matrix correction's run scores without its
per-answer scores, the label candidates' point apply, raw and composite's one apply per topic set, the per-split
topic selection, the t-quantile memo, and the whole procedure with all of them against the same procedure
without them (every per-split figure bit-identical)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest


@pytest.fixture(scope="module")
def cell(nist_labels):
    from metaeval.study.calibration_workflow.data import CalibrationData, label_candidate, score_candidate
    from metaeval.study.calibration_workflow.defaults import SCORE_LEVEL, resolve_settings
    from metaeval.testing.relabel import judge_like

    judge = judge_like(nist_labels, name="jl")
    s = resolve_settings({"workers": 1, "metrics": ["v_strict", "a"]})
    data = CalibrationData(nist_labels, judge, s["metrics"])
    cands = [score_candidate(n, data, s["metrics"], s["level"], 0, 199) if n in SCORE_LEVEL
             else label_candidate(n, data, s["metrics"], s["level"], {}, 0) for n in s["methods"]]
    return data, cands, s


def test_matrix_run_scores_without_the_answers_are_the_same(nist_labels):
    from metaeval.calibration.methods import get_method
    from metaeval.calibration.pairing import pair_by_text
    from metaeval.testing.relabel import judge_like

    pairing = pair_by_text(nist_labels, judge_like(nist_labels, name="jl"))
    jp, human = pairing.judge, pairing.human
    for name in ("matrix", "matrix_unconstrained"):
        m = get_method(name)
        assert m.answers_optional
        model = m.fit_pairs(jp.select_topics(range(12)), human[np.isin(jp.ans_topic[jp.ans], range(12))])
        sub = jp.select_topics(range(12, len(jp.qids)))
        for point_only in (True, False):
            full = m.apply_pairs(model, sub, rng=np.random.default_rng(0), point_only=point_only)
            runs = m.apply_pairs(model, sub, rng=np.random.default_rng(0), point_only=point_only, answers=False)
            assert not runs.answers and full.answers
            for part in ("run", "se", "lo", "hi"):
                a, b = getattr(full, part), getattr(runs, part)
                assert a.keys() == b.keys()
                for k in a:
                    assert np.array_equal(a[k], b[k], equal_nan=True), (name, part, k)


def test_label_point_apply_and_topic_selection_equal_the_plain_ones(cell):
    data, cands, s = cell
    jp, human = data.pairing.judge, data.pairing.human
    rng = np.random.default_rng(3)
    for _ in range(3):  # more topic sets than the selection memo keeps
        topics = np.sort(rng.choice(data.labelled, 8, replace=False))
        sub, h = data.topic_pairs(topics, with_human=True)
        plain = jp.select_topics(topics)
        keep = np.isin(jp.ans_topic[jp.ans], topics)
        for f in dataclasses.fields(plain):
            a, b = getattr(sub, f.name), getattr(plain, f.name)
            assert (a == b) if isinstance(a, tuple) else np.array_equal(a, b), f.name
        assert np.array_equal(h, human[keep])
    A, B = np.sort(data.labelled[:14]), np.sort(data.labelled[14:])
    for c in cands:
        if c.level != "label":
            continue
        assert (c.apply_point is not None) == (c.name in ("matrix", "matrix_unconstrained"))
        if c.apply_point is None:
            continue
        model = (c.fit_point or c.fit)(A)
        full, point = c.apply(model, B, False), c.apply_point(model, B, False)
        for m in s["metrics"]:
            assert point[m].answers is None and full[m].answers is not None
            for part in ("est", "lo", "hi", "se"):
                assert np.array_equal(getattr(full[m], part), getattr(point[m], part), equal_nan=True), (c.name, m)


def test_raw_and_composite_share_one_apply_per_topic_set_and_never_a_stale_one(cell):
    from metaeval.calibration.scorelevel import apply_score_method

    data, cands, s = cell
    raw, comp = (next(c for c in cands if c.name == n) for n in ("raw", "composite"))
    B1, B2 = np.sort(data.labelled[:5]), np.sort(data.labelled[5:12])
    r1 = raw.apply(raw.fit(B2), B1, False)
    assert comp.apply(comp.fit(B2), B1, False) is r1  # the same topics: computed once
    c2 = comp.apply(comp.fit(B1), B2, False)          # other topics: computed anew
    for m in s["metrics"]:
        want = apply_score_method({"method": "none"}, data.J[m][B2], s["level"])
        for part in ("est", "lo", "hi", "se", "answers"):
            assert np.array_equal(getattr(c2[m], part), getattr(want, part), equal_nan=True), (m, part)


def test_t_quantiles_memo_returns_fresh_equal_arrays():
    from scipy.special import stdtrit

    from metaeval.calibration.scorelevel import _t

    df = np.array([3.0, 0.0, np.nan, 14.0])
    a = _t(0.95, df)
    a[:] = -1.0  # a caller writing into its quantiles must not change the next caller's
    for level in (0.95, 0.9):
        assert np.array_equal(_t(level, df), stdtrit(np.maximum(df, 1.0), 0.5 + level / 2), equal_nan=True)


def test_the_procedure_with_every_shortcut_equals_the_procedure_without(cell, monkeypatch):
    """Every per-split figure of the evaluation (with intervals and per-topic taus) and of a sequential nested run,
    with the shortcuts and with them turned off (no point apply, no shared raw apply, no selection memo):
    bit-identical."""
    import metaeval.study.calibration_workflow.procedure as proc
    from metaeval.calibration.crossfit import applied_splits
    from metaeval.random_streams import stream
    from metaeval.study.calibration_workflow import data as data_mod

    data, cands, s = cell
    splits = applied_splits(data.labelled, 15, 8, stream(0, "calibration.splits"))

    def run(cs):
        ev = proc.evaluate(cs, data, s["metrics"], splits, 15, 6, want_ci=True, workers=1, n_levels=3)
        top = proc.run_procedure(cs, data, data.labelled, 0, s, 0, want_ci=False, sequential=False)
        return ev, proc.nested(cs, data, top, {**s, "nested_splits": 2}, 0, 1, sequential=True)

    fast = run(cands)

    plain_cands = []
    for c in cands:
        c = dataclasses.replace(c, apply_point=None)
        if c.name in ("raw", "composite"):
            apply = c.apply

            def apply_once(model, test, want_ci, _apply=apply):
                data.__dict__.pop("_none_applied", None)
                return _apply(model, test, want_ci)

            c = dataclasses.replace(c, apply=apply_once)
        plain_cands.append(c)
    monkeypatch.setattr(data_mod.CalibrationData, "topic_pairs", _plain_topic_pairs)
    plain = run(plain_cands)
    for a, b in zip(fast, plain):
        _same(a, b)


def _plain_topic_pairs(self, topics, with_human=False):
    jp = self.pairing.judge
    keep = np.zeros(len(jp.qids), dtype=bool)
    keep[np.asarray(topics)] = True
    return jp.select_topics(topics), (self.pairing.human[keep[jp.ans_topic[jp.ans]]] if with_human else None)


def _same(a, b, path="") -> None:
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _same(a[k], b[k], f"{path}[{k}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert np.array_equal(a, b, equal_nan=True), path
    else:
        assert a == b or (a != a and b != b), (path, a, b)
