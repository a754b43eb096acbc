"""Every Hydra config file composes; the grid expands as documented."""

from __future__ import annotations


import pytest

from metaeval.errors import ConfigError
from metaeval.workflow.compose import compose_sweep, multirun_overrides
from metaeval.judges.catalog import PACKAGE_CONF

CONF = PACKAGE_CONF
#: every option of every Hydra group (`metaeval report --thresholds`'s sample file lives with the verdict,
#: metaeval/report/thresholds.yaml, not in the group tree)
GROUP_FILES = sorted((g.name, f.stem) for g in CONF.iterdir() if g.is_dir()
                     for f in g.glob("*.yaml"))


@pytest.mark.parametrize("group, option", GROUP_FILES, ids=[f"{g}={o}" for g, o in GROUP_FILES])
def test_every_config_file_composes(group, option):
    extra = ["runtime.address=ray://127.0.0.1:10001"] if (group, option) == ("runtime", "ray_cluster") else []
    in_defaults = {"dataset", "judge", "prompt", "strategy", "runtime", "cache", "analysis", "calibration", "grid"}
    override = f"{group}={option}" if group in in_defaults else f"+{group}={option}"
    if group in ("judge", "prompt", "strategy"):  # the default grid lists every axis: a top-level choice is refused
        with pytest.raises(ConfigError, match=f"{override} has no effect: grid demo_offline sweeps grid"):
            compose_sweep([override, *extra])
        settings, cells = compose_sweep(["grid=single", override, *extra])
        assert len(cells) == 1
        return
    settings, cells = compose_sweep([override, *extra])
    assert settings.pipeline.dataset.name and cells


def test_default_grid_is_offline_judges_by_two_strategies():
    settings, cells = compose_sweep([])
    ids = {c.id for c in cells}
    assert {"lexical__auto_auto", "lexical__human_auto", "lexical_strict__human_auto", "simulated_fig6__human_auto"} <= ids
    assert settings.pipeline.runtime.executor == "auto" and settings.pipeline.dataset.name == "demo"
    from metaeval.pipeline.choose_executor import resolve_executor

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
    _, cells = compose_sweep(ovs)
    assert sorted(c.id for c in cells) == ["lexical__auto_auto", "lexical__human_auto", "lexical_strict__auto_auto",
                                          "lexical_strict__human_auto"]
    with pytest.raises(ConfigError, match="only judge, prompt, strategy"):
        multirun_overrides(["sweep.assign_batch=5,10"])
    # single values are axes of one (as meant), not the default grid; -m without any axis is refused
    _, (cell,) = compose_sweep(multirun_overrides(["judge=lexical", "strategy=human_auto"]))
    assert cell.id == "lexical__human_auto"
    with pytest.raises(ConfigError, match="-m: nothing to sweep"):
        multirun_overrides(["sweep.budget_usd=1"])


@pytest.mark.parametrize("override, message", [
    ("sweep.assign_batch=0", "sweep.assign_batch must be an integer >= 1 and <= 10, got 0"),
    ("sweep.assign_batch=abc", "sweep.assign_batch must be an integer >= 1 and <= 10, got 'abc'"),
    ("sweep.assign_batch=-3", "sweep.assign_batch must be an integer >= 1 and <= 10, got -3"),
    ("sweep.budget_usd=abc", "sweep.budget_usd must be a number >= 0 or null, got 'abc'"),
    ("sweep.budget_usd=-3", "sweep.budget_usd must be a number >= 0 or null, got -3"),
    ("sweep.relevance=bm25", "sweep.relevance must be one of qrels, judge, got 'bm25'"),
    ("analysis.bootstrap=-1", "analysis.bootstrap must be an integer >= 0 and <= 100000, got -1"),
    ("analysis.bootstrap=100000000", "analysis.bootstrap must be an integer >= 0 and <= 100000, got 100000000"),
    ("analysis.seed=-1", "analysis.seed must be an integer >= 0, got -1"),
    ("analysis.metrics=[nope]", "analysis.metrics 'nope': not a nugget measure (expected one of V_strict, A_strict, V, A, W_strict, W"),
    ("analysis.metrics=[a_strct]", "analysis.metrics 'a_strct': not a nugget measure; did you mean A_strict?"),
    ("analysis.metrics=[v_strict,v_strict]", "analysis.metrics must be a list of v_strict, a_strict, v, a, w_strict, w (each at most once)"),
    ("analysis.metrics=[]", "analysis.metrics must name at least one of v_strict"),
    ("calibration.folds=1", "calibration.folds must be an integer >= 2 and <= 100, got 1"),
    ("calibration.folds=1000", "calibration.folds must be an integer >= 2 and <= 100, got 1000"),
    ("calibration.seed=-2", "calibration.seed must be an integer >= 0, got -2"),
    ("calibration.methods=[ppi,nope]", "calibration.methods: unknown nope; expected raw, composite, ppi"),
    ("sweep.samples=51", "sweep.samples must be an integer >= 1 and <= 50, got 51"),
    ("grid.judges=[lexical,lexical]", "grid.judges must be a list (each at most once) or null"),
    ("+sweep.budjet_usd=1", "sweep.budjet_usd is not a setting; did you mean budget_usd?"),
    ("+analysis.metric=[v]", "analysis.metric is not a setting; did you mean metrics?"),
    ("+report.enabeld=false", "report.enabeld is not a setting; did you mean enabled?"),
    ("+reslts_dir=x", "reslts_dir is not a setting; did you mean results_dir?"),
    ("judge=gpt-4o", "judge=gpt-4o has no effect: grid demo_offline sweeps grid.judges=[lexical, lexical_strict, simulated_fig6]"),
    ("+judge.support_treshold=0.6", "judge lexical (config judge/lexical): support_treshold is not an option; did you mean support_threshold?"),
    ("grid=single judge=gpt-4o judge.deployment.prices.input_per_1m=-2.5", "judge gpt-4o (config judge/gpt-4o): deployment.prices.input_per_1m must be >= 0, got -2.5"),
    ("runtime.num_cpus=0", "runtime.num_cpus must be an integer >= 1 or null, got 0"),
    ("cache.enabled=maybe", "cache.enabled must be true or false, got 'maybe'"),
    ("+sweep.sede=1", "sweep.sede is not a setting"),
    # without the +, Hydra's own "Could not override ... use +" would send the user round once more
    ("sweep.budjet_usd=1", "sweep.budjet_usd is not a setting; did you mean budget_usd?"),
    ("analysis.bootstap=3", "analysis.bootstap is not a setting; did you mean bootstrap?"),
])
def test_bad_settings_are_one_line_naming_the_key(override, message):
    with pytest.raises(ConfigError) as exc:
        compose_sweep(override.split())
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)


def test_default_names():
    assert compose_sweep([])[0].name == "demo"
    assert compose_sweep(["+experiment=strictness_study"])[0].name == "strictness_study"
    cfg, _ = compose_sweep(["grid=single", "judge=lexical", "dataset=trec-rag-2024"])
    assert cfg.name == f"{cfg.pipeline.dataset.name}-lexical-human_auto" and cfg.name.startswith("trec-rag-2024")
    # a grid typed on the command line is named by its axes (readable; the same cells give the same name)
    assert compose_sweep(["grid.optional_judges=[]"])[0].name == \
        "demo-lexical.lexical_strict.simulated_fig6-auto_auto.human_auto"
    assert compose_sweep(multirun_overrides(["judge=lexical,lexical_strict", "strategy=human_auto"]))[0].name == \
        "demo-lexical.lexical_strict-human_auto"
    assert compose_sweep(multirun_overrides(["judge=gpt-4o,lexical", "prompt=v1,v2_json"]))[0].name == \
        "demo-gpt-4o.lexical-v1.v2_json-human_auto"
    many = [f"grid.judges=[{','.join(['lexical', 'lexical_strict', 'simulated_fig6'] * 1)}]",
            "grid.strategies=[human_auto,human_judge_importance,human_human,auto_auto]", "grid.prompts=[v1,v2_json]"]
    long_name = compose_sweep(many)[0].name  # over 80 characters: the grid's name and a short hash of its cells
    assert long_name.startswith("demo-demo_offline-") and len(long_name) == len("demo-demo_offline-") + 8
    assert compose_sweep(["grid=api_judges"])[0].name == "demo-api_judges"
    assert compose_sweep(["grid=demo_local_llm", "dataset=trec-rag-2024"])[0].name == "trec-rag-2024-demo_local_llm"


def test_per_judge_override_in_a_mixed_grid_is_one_step():
    url = "http://127.0.0.1:8001/v1"
    _, cells = compose_sweep(multirun_overrides(["judge=lexical,vllm", "strategy=human_auto",
                                                 f"judge.vllm.deployment.base_url={url}"]))
    by = {c.judge_name: c for c in cells}
    assert by["vllm"].judge.deployment.base_url == url and by["vllm"].judge_config["deployment"]["base_url"] == url
    assert "deployment" not in by["lexical"].judge.config
    # the same for the single top-level judge
    _, (cell,) = compose_sweep(["grid=single", "judge=vllm", f"judge.vllm.deployment.base_url={url}"])
    assert cell.judge.deployment.base_url == url
    # an override for every judge that one of them lacks says how to aim it at one judge
    for ov in ("judge.deployment.base_url=" + url, "+judge.deployment.base_url=" + url):
        with pytest.raises(ConfigError) as exc:
            compose_sweep(multirun_overrides(["judge=lexical,vllm", "strategy=human_auto", ov]))
        assert "to override one judge" in str(exc.value) and "judge.<NAME>." in str(exc.value), str(exc.value)
    # a judge that is not in the grid: one line naming the grid's judges
    with pytest.raises(ConfigError, match=r"judge.gpt-4o.\*: gpt-4o is not a judge of this grid \(judges: lexical, "
                                          r"vllm\)"):
        compose_sweep(multirun_overrides(["judge=lexical,vllm", "strategy=human_auto",
                                          "judge.gpt-4o.deployment.model=x"]))
