"""``analysis.seed`` moves every interval of ``analyze`` (tau levels, top-heavy taus, clustered label agreement,
the paired test) and nothing else; the same seed reproduces them."""

from __future__ import annotations

import json
import re

import pytest

from metaeval.analysis.meta_evaluation import analyze
from metaeval.data.dataset import load_dataset
from metaeval.simulation import simulate_judge


@pytest.fixture(scope="module")
def runs():
    human = load_dataset("demo").labels
    cands = [simulate_judge(human, seed=1, name="j1"), simulate_judge(human, seed=2, name="j2")]
    out = {s: analyze(human, cands, metrics=["v_strict"], n_boot=200, seed=s, flip_test="permutation").json
           for s in (0, 7)}
    out["again"] = analyze(human, cands, metrics=["v_strict"], n_boot=200, seed=0, flip_test="permutation").json
    return out


def _leaves(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, x


def test_seed_moves_every_interval_and_only_random_figures(runs):
    a, b = dict(_leaves(runs[0])), dict(_leaves(runs[7]))
    assert json.dumps(runs[0], sort_keys=True) == json.dumps(runs["again"], sort_keys=True)  # reproducible
    random_field = re.compile(r"(_ci(_topic)?\b|\.ci\b|boot_mean|ci_low|ci_high|p_value|p_holm|\.better\b)")  # p_holm, better: from p_value
    moved = {p for p in a if a[p] != b.get(p) and not p.endswith(".seed")}
    assert moved <= {p for p in a if random_field.search(p)}, sorted(moved)[:5]  # point estimates do not move
    for kind in ("run.ci", "topic_avg.ci", "pooled.ci", "kendall@k.ci", "tau_ap_b.ci", "cohen_kappa_ci_topic",
                 "strictness_ci_topic", "ci_low"):
        paths = [p for p in a if kind in p and isinstance(a[p], float)]
        assert paths and any(p in moved for p in paths), kind  # every kind of interval moves with the seed
