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


#: the parts below the workflow that do a command's work: a command reaches them only through ``metaeval.workflow``
WORK = ("study", "analysis", "pipeline", "calibration", "planning", "judges", "prompts", "security", "data", "assess",
        "scoring", "simulation", "layout", "io")
#: what a command may still import from those parts, and why (printing or checking its options, no work):
ALLOWED = {
    # the options' output paths vetted before any work (one line naming the option); the error class it raises
    "metaeval.io.outputs", "metaeval.io.outputs.check_output", "metaeval.io.outputs.check_not_input",
    "metaeval.io.outputs.OutputError",
    # text formatters of what the workflow returned: the sweep's typed summary as Markdown, the probe's table
    "metaeval.study.summary", "metaeval.study.summary.summary_markdown",
    "metaeval.security.injection", "metaeval.security.injection.format_table",
}


def work_imports(path: Path) -> list[str]:
    """The modules and names of :data:`WORK` that the command module ``path`` imports, less :data:`ALLOWED`."""
    return sorted(n for n in _imported(path)
                  if n.split(".")[:2][-1] in WORK and n.startswith("metaeval.") and n not in ALLOWED)


@pytest.mark.parametrize("module", sorted(f.stem for f in (PKG / "commands").glob("*.py") if f.stem != "__init__"))
def test_every_command_reaches_the_work_only_through_the_workflow(module):
    """Issue 31 item 5: the commands parse, map errors to exit statuses and print; loading inputs, the study, the
    analysis, the pipeline, the judges and writing outputs are the workflow's (``metaeval/workflow/``), which the
    Python API calls too.  (On the code before: analyze, assess, assign, calibrate, create, data, judge, plan,
    probe, score, simulate and sweep imported these parts themselves, compare the scoring's metric list; bench,
    report, helptext and rankset_text passed already.)"""
    assert not work_imports(PKG / "commands" / f"{module}.py")


def test_the_command_rule_sees_a_planted_import(tmp_path):
    """The scan catches a lazy import of the study in a command and lets the allowed formatters through."""
    f = tmp_path / "cmd.py"
    f.write_text("from metaeval.study.summary import summary_markdown\nfrom metaeval.workflow.plan import plan\n"
                 "def run(args):\n    from metaeval.study.assessor_plan import plan_study\n"
                 "    from metaeval.io import load_labels\n    import metaeval.pipeline.health\n", encoding="utf-8")
    assert work_imports(f) == ["metaeval.io", "metaeval.io.load_labels", "metaeval.pipeline.health",
                               "metaeval.study.assessor_plan", "metaeval.study.assessor_plan.plan_study"]


class _Called(Exception):
    pass


def _spy(monkeypatch, module, name, seen):
    """Replace ``module.name`` by a recorder that stops the call (raises :class:`_Called`)."""
    import importlib

    mod = importlib.import_module(module)
    real = getattr(mod, name)  # AttributeError on code without this workflow function

    def spy(*args, **kwargs):
        seen.append((name, args, kwargs))
        raise _Called

    monkeypatch.setattr(mod, name, spy)
    return real


DEMO = PKG / "data" / "demo" / "assignments.jsonl"


def test_api_calibrate_and_the_command_run_the_workflows_calibration_study(monkeypatch, tmp_path):
    """``metaeval.calibrate()`` and ``metaeval calibrate`` call the one workflow function
    (``metaeval.workflow.calibrate.calibration_study``), not the study directly."""
    import metaeval
    from metaeval.cli import main

    seen: list = []
    _spy(monkeypatch, "metaeval.workflow.calibrate", "calibration_study", seen)
    with pytest.raises(_Called):
        metaeval.calibrate(str(DEMO), str(DEMO), metrics=["a_strict"], repeats=3)
    with pytest.raises(_Called):
        main(["calibrate", "--human", str(DEMO), "--judge", str(DEMO), "--metrics", "a_strict", "--repeats", "3",
              "--out", str(tmp_path / "o")])
    assert len(seen) == 2
    (_, api_args, api_kw), (_, cli_args, cli_kw) = seen
    assert api_args[2]["metrics"] == cli_args[2]["metrics"] == ["a_strict"]
    assert api_args[2]["repeats"] == cli_args[2]["repeats"] == 3 and api_kw["seed"] == 0


def test_api_analyze_and_the_command_run_the_workflows_analyze(monkeypatch, tmp_path):
    import metaeval
    from metaeval.cli import main

    seen: list = []
    _spy(monkeypatch, "metaeval.workflow.analyze", "analyze", seen)
    with pytest.raises(_Called):
        metaeval.analyze(str(DEMO), str(DEMO), n_boot=0)
    with pytest.raises(_Called):
        main(["analyze", "--reference", str(DEMO), "--candidate", str(DEMO), "--bootstrap", "0",
              "--out", str(tmp_path / "o")])
    assert [kw["n_boot"] for _, _, kw in seen] == [0, 0]
    assert [kw["names"] for _, _, kw in seen] == [["assignments"], ["assignments"]]


def test_api_score_and_the_command_score_through_the_workflow(monkeypatch, tmp_path):
    import metaeval
    from metaeval.cli import main

    seen: list = []
    _spy(monkeypatch, "metaeval.workflow.score", "score_labels", seen)
    with pytest.raises(_Called):
        metaeval.score(str(DEMO))
    with pytest.raises(_Called):
        main(["score", str(DEMO)])
    assert len(seen) == 2 and seen[0][1][1] == seen[1][1][1]  # the same default scoring policy


def test_the_api_runs_the_workflow_not_a_command():
    names = _imported(PKG / "api.py")
    assert not [n for n in names if n.startswith("metaeval.commands")]
    assert {"metaeval.workflow.compose", "metaeval.workflow.sweep", "metaeval.workflow.compare",
            "metaeval.workflow.analyze", "metaeval.workflow.score", "metaeval.workflow.calibrate"} <= names
    # the study and the scoring are reached through the workflow only (one implementation for the CLI and the API)
    assert not [n for n in names if n.startswith(("metaeval.study.calibration_workflow", "metaeval.scoring.score_"))]
    assert "metaeval.analysis.meta_evaluation.analyze" not in names


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
