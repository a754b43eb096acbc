"""The judge catalog: one resolution path (file > config name > registry name), typed specs, capabilities declared
on the judge classes, driver-side checks with one-line errors, and specs that travel to workers."""

from __future__ import annotations

import pickle

import pytest

from metaeval.errors import ConfigError
from metaeval.judges import JUDGES
from metaeval.judges.catalog import (PACKAGE_CONF, JudgeSpec, build_judge, check_available, judge_names,
                                     resolve_judge)
from metaeval.judges.registry import judge_class


def test_config_names_registry_names_and_files_resolve_the_same_way(tmp_path):
    gpt = resolve_judge("gpt-4o")
    assert gpt.kind == "llm" and gpt.name == "gpt-4o" and gpt.key_env == "OPENAI_API_KEY"
    assert gpt.deployment.model == "gpt-4o" and gpt.prices.input_per_1m == 2.5 and gpt.limits.concurrency == 32
    assert gpt.concurrency == 32 and gpt.source.endswith("judge/gpt-4o.yaml")
    assert resolve_judge(str(PACKAGE_CONF / "judge" / "gpt-4o.yaml")).deployment == gpt.deployment
    assert "replay" not in judge_names()
    reg = resolve_judge("replay")
    assert reg.source == "registry"
    # a user's config folder comes first: same name -> the user's file
    (tmp_path / "judge").mkdir()
    (tmp_path / "judge" / "lexical.yaml").write_text("judge: lexical\nsupport_threshold: 0.9\n", encoding="utf-8")
    mine = resolve_judge("lexical", config_dirs=[tmp_path, PACKAGE_CONF])
    assert mine.config["support_threshold"] == 0.9 and mine.name == "lexical"
    assert resolve_judge("lexical").config["support_threshold"] == 0.6


def test_bare_deployment_file_is_an_llm_judge(tmp_path):
    f = tmp_path / "dep.yaml"
    f.write_text("backend: anthropic\nmodel: claude-x\napi_key_env: MY_KEY\nprices: {input_per_1m: 3}\n", encoding="utf-8")
    spec = resolve_judge(str(f))
    assert spec.kind == "llm" and spec.deployment.backend == "anthropic" and spec.key_env == "MY_KEY"
    assert spec.prices.cost(1_000_000, 0) == pytest.approx(3.0)


@pytest.mark.parametrize("bad, message", [
    ("gpt-5", "unknown judge 'gpt-5'"),
    ({"judge": "oracle"}, "unknown judge 'oracle'"),
    ({"name": "x"}, "needs a 'judge' field"),
    ({"judge": "llm"}, "needs a 'deployment'"),
    ({"judge": "llm", "deployment": {"backend": "openai"}}, "'model' is required"),
    ({"judge": "llm", "deployment": {"backend": "openai", "model": "m", "api_key": "sk-x"}}, "environment variable"),
    ({"judge": "lexical", "concurrency": 0}, "concurrency must be an integer >= 1, got 0"),
    ({"judge": "lexical", "requires": "torch"}, "'requires' must be a list"),
    ({"judge": "lexical", "support_treshold": 0.6}, "support_treshold is not an option; did you mean support_threshold?"),
    ({"judge": "simulated", "reference": "dataset", "sed": 1}, "sed is not an option; did you mean seed?"),
    ({"judge": "llm", "deployment": {"backend": "openai", "model": "m", "prices": {"input_per_1m": -2.5}}},
     "deployment.prices.input_per_1m must be >= 0, got -2.5"),
    ({"judge": "llm", "deployment": {"backend": "openai", "model": "m", "prices": {"batch_output_per_1m": -1}}},
     "deployment.prices.batch_output_per_1m must be >= 0, got -1"),
    ({"judge": "llm", "deployment": {"backend": "openai", "model": "m", "mode": "batch", "batch": {"max_requests": 0}}},
     "deployment.batch.max_requests must be 1..50000 for openai, got 0"),
])
def test_bad_judges_are_one_line(bad, message):
    with pytest.raises(ConfigError, match=message) as exc:
        resolve_judge(bad)
    assert "\n" not in str(exc.value)


def test_capabilities_are_declared_on_the_judge_classes():
    for kind in JUDGES:
        assert resolve_judge({"judge": kind, "deployment": {"backend": "openai", "model": "m"}} if kind == "llm"
                             else {"judge": kind}).capabilities == judge_class(kind).STAGES
    assert judge_class("simulated").STAGES == ("assign",)
    assert judge_class("replay").STAGES == ("importance", "assign")
    assert "relevance" not in judge_class("embedding").STAGES
    assert judge_class("lexical").STAGES == ("relevance", "create", "importance", "assign")


def test_check_available_stage_key_extra_and_prompts(monkeypatch):
    sim = resolve_judge("simulated_fig6")
    check_available(sim, ("assign",))
    with pytest.raises(ConfigError, match=r"'simulated_fig6' \(simulated\) cannot perform stage\(s\) create"):
        check_available(sim, ("create", "assign"), strategy="auto_auto")
    gpt = resolve_judge("gpt-4o")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="environment variable OPENAI_API_KEY is not set"):
        check_available(gpt, ("assign",))
    check_available(gpt, ("assign",), need_key=False)  # a dry run needs no key
    monkeypatch.setenv("OPENAI_API_KEY", "  ")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        check_available(gpt, ("assign",))
    ghost = resolve_judge({"judge": "lexical", "requires": ["no_such_module_xyz"]})
    with pytest.raises(ConfigError, match="missing no_such_module_xyz"):
        check_available(ghost, ("assign",))
    bad_prompt = resolve_judge("testserver").with_options(prompts={"assign": "assign@v9"})
    with pytest.raises(ConfigError, match="prompts.assign: unknown prompt template 'assign@v9'"):
        check_available(bad_prompt, ("assign",))


def test_specs_are_frozen_picklable_and_build_the_judge():
    spec = resolve_judge("lexical_strict")
    with pytest.raises(Exception):
        spec.name = "other"  # frozen
    again = pickle.loads(pickle.dumps(spec))  # Ray ships specs to actors
    assert isinstance(again, JudgeSpec) and again == spec and again.config == spec.config
    judge = build_judge(again)
    assert judge.kind == "lexical" and judge.t_support == 0.8
    assert resolve_judge(spec) is spec
    changed = spec.with_options(support_threshold=0.7)
    assert changed.config["support_threshold"] == 0.7 and spec.config["support_threshold"] == 0.8


def test_public_dict_never_holds_objects_or_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-1234567890")
    pub = resolve_judge("gpt-4o").public_dict()
    assert "sk-secret" not in str(pub) and pub["deployment"]["api_key_env"] == "OPENAI_API_KEY"
    sim = resolve_judge("simulated_fig6").with_options(reference=object())
    assert "reference" not in sim.public_dict()


@pytest.mark.parametrize("options, message", [
    ({"support_threshold": "abc"}, "support_threshold must be float, got 'abc'"),
    ({"max_words": 2.5}, "max_words must be int, got 2.5"),
    ({"partial_threshold": 0.9, "support_threshold": 0.5}, "need 0 <= partial_threshold <= support_threshold"),
    ({"name": 3}, "name must be str or None, got 3"),
])
def test_judge_options_are_typed_by_the_judge_class(options, message):
    with pytest.raises(ConfigError, match=message) as exc:
        resolve_judge({"judge": "lexical", **options})
    assert str(exc.value).startswith("judge ") and "\n" not in str(exc.value)
    resolve_judge({"judge": "lexical", "support_threshold": 1, "max_words": 25})  # an int is a fine float


def test_llm_options_are_typed_too():
    dep = {"backend": "openai", "model": "m"}
    with pytest.raises(ConfigError, match="max_reasks must be int"):
        resolve_judge({"judge": "llm", "deployment": dep, "max_reasks": "two"})


def test_install_hint_names_the_extra_from_the_package_metadata():
    from metaeval.judges.catalog import install_hint

    assert install_hint(["torch", "sentence_transformers"]) == "install it with: pip install 'metaeval[embed]'"
    assert install_hint(["llama_cpp"]) == "install it with: pip install 'metaeval[local]'"
    assert install_hint(["no_such_module_xyz"]) == "install it with: pip install no_such_module_xyz"


def test_prune_grid_names_a_missing_extra_once_and_keeps_an_all_impossible_grid():
    from metaeval.judges.catalog import resolve_judge
    from metaeval.pipeline.grid import expand_grid, prune_grid

    missing = resolve_judge({"judge": "lexical", "name": "needs_extra", "requires": ["no_such_module_xyz"]})
    sim = resolve_judge("simulated_fig6")
    cells = expand_grid([resolve_judge("lexical"), missing, sim], {"v1": {"name": "v1"}}, ["auto_auto", "human_auto"])
    kept, notes = prune_grid(cells)
    assert [c.id for c in kept] == ["lexical__auto_auto", "lexical__human_auto", "simulated_fig6__human_auto"]
    assert notes == ["judge needs_extra is not in this run: its extra is not installed (missing no_such_module_xyz); "
                     "install it with: pip install no_such_module_xyz",
                     "judge simulated_fig6 joins only human_auto: cannot perform stage(s) create, importance needed "
                     "by auto_auto"]
    only_impossible = expand_grid([sim], {"v1": {"name": "v1"}}, ["auto_auto"])
    assert prune_grid(only_impossible) == (only_impossible, [])
