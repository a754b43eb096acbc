"""Tests written for issue 13's mutation audit: each fails when its one-line bug is planted (the audit found no
test that did).  (b) and (c) live beside their modules' other tests: ``test_store_integrity.py`` (the store
keeping the first record per key) and ``test_cache_integrity.py`` (the HTTP-date Retry-After sign).

(a) ``topic_avg`` counting topics whose tau is undefined as 0;
(d) a figure's ``alt`` escaped with ``quote=False`` (attribute injection in report.html);
(e) held-out topics leaking into fitting once ``check_disjoint`` is removed (calibration cross-fitting).
"""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau


# ------------------------------------------------------------------ (a) topic_avg skips undefined topics
def _matrices():
    """4 topics x 6 runs; topic 1's reference scores are all equal (tau-b undefined), topic 3 misses two cells."""
    rng = np.random.default_rng(13)
    x = rng.random((4, 6)).round(2)
    y = (x + rng.normal(0, 0.2, x.shape)).round(2)
    x[1, :] = 0.5
    x[3, [0, 4]] = np.nan
    return x, y


def _scipy_topic_avg(x, y) -> tuple[float, int]:
    taus = []
    for t in range(x.shape[0]):
        ok = ~(np.isnan(x[t]) | np.isnan(y[t]))
        tau = kendalltau(x[t, ok], y[t, ok]).statistic  # tau-b; NaN when one side is constant
        if np.isfinite(tau):
            taus.append(tau)
    return float(np.mean(taus)), len(taus)


def test_topic_avg_is_the_mean_over_topics_where_tau_is_defined():
    from metaeval.analysis.levels import LevelEngine, levels_matrix

    x, y = _matrices()
    want, n_defined = _scipy_topic_avg(x, y)
    assert n_defined == 3  # the constant topic is undefined, the others are not
    got = levels_matrix(x, y)
    assert got["n_topics_used"] == 3
    assert got["topic_avg"] == pytest.approx(want, abs=1e-12)
    eng = LevelEngine(x, y)
    assert eng.levels(np.ones((1, 4)))["topic_avg"][0] == pytest.approx(want, abs=1e-12)
    # counting the undefined topic as 0 would give 3/4 of the value: make sure the two differ here
    assert abs(want * 3 / 4 - want) > 0.01


def test_tau_levels_topic_avg_through_the_public_api():
    from metaeval.analysis.levels import tau_levels

    x, y = _matrices()
    rows = []
    for t in range(4):
        for r in range(6):
            for src, m in (("ref", x), ("cand", y)):
                if np.isfinite(m[t, r]):
                    rows.append((src, f"run{r}", f"q{t}", "v_strict", float(m[t, r])))
    df = pd.DataFrame(rows, columns=["src", "run_id", "qid", "metric", "value"])
    ref = df[df.src == "ref"].drop(columns="src")
    cand = df[df.src == "cand"].drop(columns="src")
    res = tau_levels(ref, cand, metric="v_strict")
    want, _ = _scipy_topic_avg(x, y)
    assert res.topic_avg == pytest.approx(want, abs=1e-12)


# ------------------------------------------------------------------ (d) no attribute injection through alt
class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_a_figure_title_cannot_inject_attributes_into_the_img_tag():
    from metaeval.report.model import Figure
    from metaeval.report.render_html import _block

    title = 'tau "x" onerror="alert(1)" \'y\' <b>'
    html = _block(Figure(name="fig1", title=title, png=b"\x89PNG\r\n", caption="c"))
    p = _Tags()
    p.feed(html)
    (img,) = [a for t, a in p.tags if t == "img"]
    assert set(img) == {"alt", "src"} and img["alt"] == title  # the whole title stays inside alt
    assert "onerror" not in {k for _, a in p.tags for k in a}
    assert html.count("<b>") == 1 and "&lt;b&gt;" in html  # only the caption's own bold tag


# ------------------------------------------------------------------ (e) no held-out topic reaches a fit
def test_crossfit_never_fits_on_a_topic_it_evaluates_on():
    """Spy candidates record the topics every fit saw and every apply was evaluated on, for the procedure's splits
    and the nested re-runs inside each split's fit topics; with ``check_disjoint`` removed and a split's fit part
    leaking its held-out topics, or the nested procedure drawing its splits from every labelled topic, this fails
    (the library's own assertion is not what is being tested)."""
    from types import SimpleNamespace

    from metaeval.calibration.crossfit import Candidate, Prediction
    from metaeval.study.calibration_workflow.procedure import nested, run_procedure
    from metaeval.study.calibration_workflow.defaults import resolve_settings

    R, T = 5, 12
    log: list[tuple[frozenset, frozenset]] = []

    def fit(train):
        return frozenset(np.asarray(train).tolist())

    def apply(model, held, want_ci):
        log.append((model, frozenset(np.asarray(held).tolist())))
        z = np.full(R, 0.5)
        return {"v_strict": Prediction(est=z, lo=z - 0.1, hi=z + 0.1, se=z)}

    rng = np.random.default_rng(0)
    data = SimpleNamespace(H={"v_strict": rng.random((T, R))}, J={"v_strict": rng.random((T, R))}, runs=list("abcde"))
    cands = [Candidate(n, "score", fit, apply, uses_labels=n != "raw") for n in ("raw", "composite", "ppi_pp", "spy")]
    s = resolve_settings({"metrics": ["v_strict"], "repeats": 4, "nested_splits": 2, "min_topics": 5, "workers": 1})
    top = run_procedure(cands, data, np.arange(T), 0, s, 0, want_ci=True)
    n_top = len(log)
    assert n_top == 4 * len(cands)
    assert all(not (fitted & held) for fitted, held in log), "a calibration was evaluated on a topic it was fitted on"
    for (A, B), (fitted, held) in zip(top.evaluation.splits, log[::len(cands)]):
        assert fitted == frozenset(A.tolist()) and held == frozenset(B.tolist())
    nested(cands, data, top, s, 0)
    inner = log[n_top:]
    assert inner and all(not (f & h) for f, h in inner)
    per = len(inner) // 2
    for o in range(2):  # the nested procedure of split o fits and scores only inside that split's fit topics
        A = frozenset(top.evaluation.splits[o][0].tolist())
        assert all((f | h) <= A for f, h in inner[o * per:(o + 1) * per])
