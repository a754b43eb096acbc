"""Issue 32 item 1: ``-m prompt=v1,v2_json grid=single judge=X strategy=Y`` is one grid of two cells.

``grid=single`` has no ``optional_judges`` key; ``-m`` used to add ``grid.optional_judges=[]`` as a plain
override, which Hydra refused ("grid.optional_judges is not a setting"), a key the user never typed.
"""

from __future__ import annotations

import shutil

from metaeval.workflow.compose import compose_sweep, multirun_overrides
from metaeval.judges.catalog import PACKAGE_CONF


def test_multirun_over_prompts_with_grid_single_is_two_cells():
    ovs = multirun_overrides(["prompt=v1,v2_json", "grid=single", "judge=testserver", "strategy=human_auto"])
    _, cells = compose_sweep(ovs)
    assert sorted(c.id for c in cells) == ["testserver__v1__human_auto", "testserver__v2_json__human_auto"]


def test_multirun_with_grid_single_and_a_users_own_judge(tmp_path):
    (tmp_path / "judge").mkdir()
    shutil.copy(PACKAGE_CONF / "judge" / "testserver.yaml", tmp_path / "judge" / "myjudge.yaml")
    text = (tmp_path / "judge" / "myjudge.yaml").read_text().replace("name: testserver\ndeployment", "name: myjudge\ndeployment")
    (tmp_path / "judge" / "myjudge.yaml").write_text(text)
    ovs = multirun_overrides(["prompt=v1,v2_json", "grid=single", "judge=myjudge", "strategy=human_auto"])
    _, cells = compose_sweep(ovs, config_dir=tmp_path)
    assert sorted(c.id for c in cells) == ["myjudge__v1__human_auto", "myjudge__v2_json__human_auto"]
    # a grid that lists optional judges still gets exactly the product asked for
    _, cells = compose_sweep(multirun_overrides(["judge=lexical", "strategy=human_auto", "grid=demo_offline"]))
    assert [c.id for c in cells] == ["lexical__human_auto"]


def test_multirun_over_prompts_keeps_judge_overrides_for_the_judge():
    # judge=X becomes grid.judges=[X]; composing each prompt of the grid must not apply judge.* to the default judge
    ovs = multirun_overrides(["prompt=v1,v2_json", "grid=single", "judge=testserver", "strategy=human_auto",
                              "judge.deployment.base_url=http://127.0.0.1:9/v1"])
    _, cells = compose_sweep(ovs)
    assert sorted(c.id for c in cells) == ["testserver__v1__human_auto", "testserver__v2_json__human_auto"]
    assert {c.judge.config["deployment"].base_url for c in cells} == {"http://127.0.0.1:9/v1"}
