"""Every Hydra config file composes; the grid expands as documented."""

from __future__ import annotations


import pytest

from metaeval.errors import ConfigError
from metaeval.pipeline.config import compose_sweep, config_dir

CONF = config_dir()
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
    assert config["runtime"]["executor"] == "ray" and config["dataset"]["name"] == "demo"
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
