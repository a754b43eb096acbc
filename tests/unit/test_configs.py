"""Every Hydra config file composes; the grid expands as documented."""

from __future__ import annotations


import pytest

from metaeval.errors import ConfigError
from metaeval.commands.compose import compose_sweep, multirun_overrides
from metaeval.judges.catalog import PACKAGE_CONF

CONF = PACKAGE_CONF
GROUP_FILES = sorted((g.name, f.stem) for g in CONF.iterdir() if g.is_dir() for f in g.glob("*.yaml"))


@pytest.mark.parametrize("group, option", GROUP_FILES, ids=[f"{g}={o}" for g, o in GROUP_FILES])
def test_every_config_file_composes(group, option):
    extra = ["runtime.address=ray://127.0.0.1:10001"] if (group, option) == ("runtime", "ray_cluster") else []
    in_defaults = {"dataset", "judge", "prompt", "strategy", "runtime", "cache", "analysis", "calibration", "grid"}
    override = f"{group}={option}" if group in in_defaults else f"+{group}={option}"
    config, cells = compose_sweep([override, *extra])
    assert config["dataset"]["name"] and cells
    if group in ("judge", "prompt", "strategy"):
        config, cells = compose_sweep(["grid=single", override, *extra])
        assert len(cells) == 1


def test_default_grid_is_offline_judges_by_two_strategies():
    config, cells = compose_sweep([])
    ids = {c.id for c in cells}
    assert {"lexical__auto_auto", "lexical__human_auto", "lexical_strict__human_auto", "simulated_fig6__human_auto"} <= ids
    assert config["runtime"]["executor"] == "auto" and config["dataset"]["name"] == "demo"
    from metaeval.pipeline.sweep import resolve_executor

    assert resolve_executor("auto", [c.judge for c in cells]) == "serial"  # offline judges: no Ray start-up
    _, api = compose_sweep(["grid=single", "judge=gpt-4o"])
    assert resolve_executor("auto", [c.judge for c in api]) == "serial"  # one deployment: no second process needed
    _, two = compose_sweep(["grid=api_judges"])
    assert len({c.judge.deployment.name for c in two if c.judge.deployment}) >= 2
    assert resolve_executor("auto", [c.judge for c in two]) == "ray"  # several deployments: one actor each
    _, rep = compose_sweep(["grid=single", "judge=vllm", "+judge.deployment.replicas=2"])
    assert resolve_executor("auto", [c.judge for c in rep]) == "ray"  # replicas (and resources) only Ray gives
    assert resolve_executor("ray", [c.judge for c in cells]) == "ray"
    for c in cells:
        assert "deployment" not in c.judge_config  # no API judge in the default job


def test_overrides_reach_the_single_cell_and_prompt_ids_differ():
    _, (a,) = compose_sweep(["grid=single", "judge=gpt-4o", "prompt=v1", "judge.deployment.params.temperature=0.3"])
    _, (b,) = compose_sweep(["grid=single", "judge=gpt-4o", "prompt=v2_json"])
    assert a.judge_config["deployment"]["params"]["temperature"] == 0.3
    assert a.judge_config["prompts"]["assign"] == "assign@v1" and b.judge_config["prompts"]["assign"] == "assign@v2-json"
    assert a.prompt_id != b.prompt_id and a.judge_id != b.judge_id
    assert "api_key':" not in str(a.describe()) and a.describe()["judge_config"]["deployment"]["api_key_env"] == "OPENAI_API_KEY"


def test_bad_override_is_a_clear_error():
    with pytest.raises(ConfigError, match="judge"):
        compose_sweep(["judge=nope"])


def test_experiment_files_name_their_command():
    for f in (CONF / "experiment").glob("*.yaml"):
        head = f.read_text(encoding="utf-8").splitlines()[:6]
        assert any("metaeval sweep" in line for line in head), f


def test_conf_ships_inside_the_package():
    import metaeval

    assert (CONF / "config.yaml").is_file() and CONF.parent == __import__("pathlib").Path(metaeval.__file__).parent
    text = (CONF.parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert '"conf/**/*"' in text  # package data: a wheel carries the configs


def test_judge_overrides_reach_every_judge_of_a_grid():
    _, cells = compose_sweep(["grid.judges=[lexical,lexical_strict]", "grid.optional_judges=[]",
                              "grid.strategies=[human_auto]", "judge.support_threshold=0.9"])
    assert sorted(c.judge_name for c in cells) == ["lexical", "lexical_strict"]
    assert all(c.judge.config["support_threshold"] == 0.9 for c in cells)
    # a key one judge of the grid lacks is an error naming that judge (not silently dropped)
    with pytest.raises(ConfigError, match="judge 'simulated_fig6' of the grid"):
        compose_sweep(["grid.judges=[lexical,simulated_fig6]", "judge.support_threshold=0.9"])


def test_multirun_syntax_is_one_grid():
    ovs = multirun_overrides(["judge=lexical,lexical_strict", "strategy=human_auto,auto_auto", "runtime=serial"])
    assert "grid.judges=[lexical,lexical_strict]" in ovs and "grid.strategies=[human_auto,auto_auto]" in ovs
    assert "grid.prompts=null" in ovs and "runtime=serial" in ovs
    config, cells = compose_sweep(ovs)
    assert sorted(c.id for c in cells) == ["lexical__auto_auto", "lexical__human_auto", "lexical_strict__auto_auto",
                                          "lexical_strict__human_auto"]
    with pytest.raises(ConfigError, match="only judge, prompt, strategy"):
        multirun_overrides(["sweep.assign_batch=5,10"])


@pytest.mark.parametrize("override, message", [
    ("sweep.assign_batch=0", "sweep.assign_batch must be an integer >= 1 and <= 10, got 0"),
    ("sweep.assign_batch=abc", "sweep.assign_batch must be an integer >= 1 and <= 10, got 'abc'"),
    ("sweep.assign_batch=-3", "sweep.assign_batch must be an integer >= 1 and <= 10, got -3"),
    ("sweep.budget_usd=abc", "sweep.budget_usd must be a number >= 0 or null, got 'abc'"),
    ("sweep.budget_usd=-3", "sweep.budget_usd must be a number >= 0 or null, got -3"),
    ("sweep.relevance=bm25", "sweep.relevance must be one of qrels, judge, got 'bm25'"),
    ("analysis.bootstrap=-1", "analysis.bootstrap must be an integer >= 0, got -1"),
    ("calibration.folds=1", "calibration.folds must be an integer >= 2, got 1"),
    ("runtime.num_cpus=0", "runtime.num_cpus must be an integer >= 1 or null, got 0"),
    ("cache.enabled=maybe", "cache.enabled must be true or false, got 'maybe'"),
    ("+sweep.sede=1", "sweep.sede is not a setting"),
])
def test_bad_settings_are_one_line_naming_the_key(override, message):
    with pytest.raises(ConfigError) as exc:
        compose_sweep([override])
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)


def test_default_names():
    assert compose_sweep([])[0]["name"] == "demo"
    assert compose_sweep(["+experiment=strictness_study"])[0]["name"] == "strictness_study"
    cfg, _ = compose_sweep(["grid=single", "judge=lexical", "dataset=trec-rag-2024"])
    assert cfg["name"] == f"{cfg['dataset']['name']}-lexical-human_auto" and cfg["name"].startswith("trec-rag-2024")
    assert compose_sweep(["grid.optional_judges=[]"])[0]["name"].startswith("demo-demo_offline-")
    assert compose_sweep(["grid=api_judges"])[0]["name"] == "demo-api_judges"
    assert compose_sweep(["grid=demo_local_llm", "dataset=trec-rag-2024"])[0]["name"] == "trec-rag-2024-demo_local_llm"
