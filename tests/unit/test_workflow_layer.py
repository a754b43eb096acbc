"""The workflow layer (issue 31, build item 5): the commands parse and print, the workflow does the work for the
command line and the API alike, and the configuration is composed with Hydra's public API only.

The import order itself (workflow below commands/cli/api, above report; the API never importing a command) is
checked by ``tests/unit/test_layering.py``; here: what an import scan does not see.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "metaeval"


def _imported(path: Path) -> set[str]:
    """Every module name imported in ``path`` (module level and inside functions)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_no_module_of_the_package_uses_hydra_internals():
    """``hydra._internal`` (ConfigRepository, ConfigLoaderImpl) and ``GlobalHydra`` change between Hydra releases
    without notice: composition uses ``hydra.initialize_config_dir`` / ``hydra.compose``, ``hydra.searchpath``,
    the ConfigStore and the override parser only."""
    bad = []
    for f in sorted(PKG.rglob("*.py")):
        text = f.read_text(encoding="utf-8")
        names = _imported(f)
        if "hydra._internal" in text or any(n.startswith("hydra._internal") or n.endswith("GlobalHydra") or
                                            n.startswith("hydra.core.global_hydra") for n in names):
            bad.append(str(f.relative_to(PKG.parent)))
    assert not bad, bad


@pytest.mark.parametrize("folder", ["workflow", "commands"])
def test_modules_of_the_workflow_and_the_commands_stay_under_the_house_limit(folder):
    long = {str(f.relative_to(PKG.parent)): n for f in sorted((PKG / folder).glob("*.py"))
            if (n := len(f.read_text(encoding="utf-8").splitlines())) >= 500}
    assert not long, long


@pytest.mark.parametrize("command", ["sweep", "report", "compare"])
def test_these_commands_reach_the_pipeline_and_the_study_only_through_the_workflow(command):
    """``metaeval sweep``, ``report`` and ``compare`` parse and print: no pipeline, study or report writer of their
    own (the API runs the same workflow).  Formatting what the workflow returned is theirs: the summary's text
    (``metaeval.study.summary.summary_markdown``) may be imported."""
    names = _imported(PKG / "commands" / f"{command}.py")
    reach = sorted(n for n in names if n.startswith(("metaeval.pipeline.sweep", "metaeval.study",
                                                    "metaeval.report.write", "metaeval.report.build", "hydra"))
                   and not n.startswith("metaeval.study.summary"))
    assert not reach, reach


def test_the_api_runs_the_workflow_not_a_command():
    names = _imported(PKG / "api.py")
    assert not [n for n in names if n.startswith("metaeval.commands")]
    assert {"metaeval.workflow.compose", "metaeval.workflow.sweep", "metaeval.workflow.compare"} <= names


def test_an_overlay_file_with_a_shipped_name_wins_whatever_the_folder_is_called(tmp_path):
    """The overlays reach Hydra as ``hydra.searchpath`` (quoted: a comma, a space, a quote or a bracket in the
    folder's name) after a primary folder holding only ``config.yaml``: the user's ``judge/lexical.yaml`` replaces
    the shipped one, for the top-level judge and for a grid's judges alike."""
    from metaeval.workflow.compose import compose_config, compose_sweep

    conf = tmp_path / "my conf, it's [x]"
    (conf / "judge").mkdir(parents=True)
    (conf / "judge" / "lexical.yaml").write_text("judge: lexical\nname: lexical\nsupport_threshold: 0.77\n"
                                                 "partial_threshold: 0.3\nconcurrency: 4\n", encoding="utf-8")
    assert compose_config(["grid=single", "judge=lexical"])["judge"]["support_threshold"] == 0.6  # shipped
    assert compose_config(["grid=single", "judge=lexical"], conf)["judge"]["support_threshold"] == 0.77
    settings, _ = compose_sweep(["grid.judges=[lexical_strict,lexical]", "grid.optional_judges=[]"], conf)
    assert settings.document["judges"]["lexical"]["support_threshold"] == 0.77
    assert settings.document["judges"]["lexical_strict"]["support_threshold"] != 0.77
