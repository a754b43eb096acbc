"""Grid judges are composed once, not once per judge (issue 25 item 21: a 1,000-judge dry run in under 30 s).

``metaeval.workflow.grid_judges.JudgeNodes`` reads every grid judge after the first from its file (the first on
the config search path) into the first one's composition.  These tests count Hydra compositions (no wall-clock bound) and check that the
result, and every error, is the same as composing each judge in full (``_load`` forced to None: the old path).
"""

from __future__ import annotations

import pytest

from benchmarks.bench_many_judges import write_grid
from metaeval.workflow import compose as C
from metaeval.workflow import grid_judges as G
from metaeval.workflow import hydra_config as H
from metaeval.errors import ConfigError


@pytest.fixture
def count_compositions(monkeypatch):
    calls: list[list[str]] = []
    real = H.Composer.compose

    def counted(self, overrides, hydra=False):
        calls.append(list(overrides))
        return real(self, overrides, hydra=hydra)

    monkeypatch.setattr(H.Composer, "compose", counted)
    return calls


def _full_per_judge(monkeypatch):
    monkeypatch.setattr(G.JudgeNodes, "_load", lambda self, name: None)


def _sweep(overrides, config_dir=None):
    settings, cells = C.compose_sweep(overrides, config_dir)
    return settings.document, [c.id for c in cells]


@pytest.mark.parametrize("n", [3, 40])
def test_compositions_do_not_grow_with_the_number_of_judges(tmp_path, count_compositions, n):
    write_grid(tmp_path / "conf", n)
    doc, cells = _sweep(["grid=many"], tmp_path / "conf")
    assert len(doc["judges"]) == n and len(cells) == 2 * n
    # the sweep config, the first judge in full, the config without the judge group, the prompt v1
    assert len(count_compositions) == 4, count_compositions


OVERRIDE_CASES = [
    ["grid.judges=[lexical,lexical_strict,simulated_fig6]", "grid.strategies=[human_auto]"],
    ["grid.judges=[lexical,lexical_strict]", "grid.optional_judges=[]", "judge.support_threshold=0.9",
     "judge.concurrency=2"],
    ["grid.judges=[lexical_strict,lexical]", "grid.optional_judges=[]", "~judge.partial_threshold"],
    ["grid.judges=[lexical,lexical_strict]", "++judge.concurrency=3"],
    ["grid=demo_offline"],
    ["+experiment=strictness_study"],
]


@pytest.mark.parametrize("overrides", OVERRIDE_CASES, ids=[" ".join(o) for o in OVERRIDE_CASES])
def test_loaded_judges_equal_judges_composed_in_full(monkeypatch, overrides):
    fast = _sweep(overrides)
    _full_per_judge(monkeypatch)
    assert _sweep(overrides) == fast


def test_many_judge_grid_equals_composition_in_full(tmp_path, monkeypatch):
    write_grid(tmp_path / "conf", 12)
    overrides = ["grid=many", "judge.partial_threshold=0.25"]
    fast = _sweep(overrides, tmp_path / "conf")
    assert {j["partial_threshold"] for j in fast[0]["judges"].values()} == {0.25}
    _full_per_judge(monkeypatch)
    assert _sweep(overrides, tmp_path / "conf") == fast


ERROR_CASES = [
    # a key the second judge lacks (Hydra's override error, named by judge)
    ["grid.judges=[lexical,simulated_fig6]", "judge.support_threshold=0.9"],
    ["grid.judges=[lexical,lexical_strict]", "grid.optional_judges=[]", "~judge.support_threshold=0.6"],
    ["grid.judges=[lexical,simulated_fig6]", "~judge.support_threshold"],
    # a judge that does not exist
    ["grid.judges=[lexical,no_such_judge]"],
]


@pytest.mark.parametrize("overrides", ERROR_CASES, ids=[" ".join(o) for o in ERROR_CASES])
def test_errors_are_word_for_word_those_of_a_full_composition(monkeypatch, overrides):
    with pytest.raises(ConfigError) as fast:
        _sweep(overrides)
    _full_per_judge(monkeypatch)
    with pytest.raises(ConfigError) as full:
        _sweep(overrides)
    assert str(fast.value) == str(full.value)
    assert "of the grid" in str(fast.value)


def test_a_broken_user_judge_file_is_hydras_error(tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    write_grid(conf, 3)
    (conf / "judge" / "j0001.yaml").write_text("judge: lexical\nsupport_threshold: [1,\n", encoding="utf-8")
    with pytest.raises(ConfigError) as fast:
        _sweep(["grid=many"], conf)
    _full_per_judge(monkeypatch)
    with pytest.raises(ConfigError) as full:
        _sweep(["grid=many"], conf)
    assert str(fast.value) == str(full.value) and "j0001" in str(fast.value)


def test_a_config_writing_into_judge_composes_each_judge_in_full(tmp_path, count_compositions):
    """An experiment (``@package _global_``) that sets a judge key shapes every grid judge's node: each is then
    composed in full, so the key reaches all of them."""
    conf = tmp_path / "conf"
    write_grid(conf, 3)
    (conf / "experiment").mkdir()
    (conf / "experiment" / "conc.yaml").write_text("# @package _global_\njudge:\n  concurrency: 7\n", encoding="utf-8")
    doc, _ = _sweep(["grid=many", "+experiment=conc"], conf)
    assert {j["concurrency"] for j in doc["judges"].values()} == {7}
    assert sum(any(o.startswith("judge=j") for o in call) for call in count_compositions) == 3
