"""Issue 11/13 through the real CLI: judges resolved and checked in the driver (nothing written on error), configs
from a user's ./conf, Hydra sweep syntax as one grid, --cfg job, one-line errors for bad settings, and the dry
run's call counts against the calls a sweep really makes on the wire test server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from metaeval.testing.server import ChatTestServer


def cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metaeval", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout)


def one_error_line(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 2, (res.stdout[-2000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr + res.stdout
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, res.stderr
    return lines[0]


@pytest.mark.parametrize("runtime", [None, "ray_local", "serial", "ray_cluster"])
def test_missing_key_exits_2_naming_the_variable_and_writes_nothing(tmp_path, runtime):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    rt = [f"runtime={runtime}"] if runtime else []  # None: the default runtime (auto)
    if runtime == "ray_cluster":  # no cluster is contacted: the check comes first
        rt.append("runtime.address=127.0.0.1:1")
    res = cli("sweep", "grid=single", "judge=gpt-4o", "strategy=human_auto", "name=nokey", *rt,
              f"results_dir={tmp_path / 'results'}", "--no-progress", env=env, timeout=120)
    line = one_error_line(res)
    assert "OPENAI_API_KEY" in line and "gpt-4o" in line
    assert not (tmp_path / "results").exists()  # no jobs stored, no results folder


def test_missing_key_in_a_grid_is_found_before_any_cell_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    res = cli("sweep", "-m", "judge=lexical,gpt-4o", "strategy=human_auto", "runtime=serial",
              f"results_dir={tmp_path}", "--no-progress", env=env, timeout=120)
    assert "OPENAI_API_KEY" in one_error_line(res)
    assert list(tmp_path.iterdir()) == []


def test_unknown_judge_and_impossible_stage_are_one_line(tmp_path):
    line = one_error_line(cli("sweep", "grid=single", "judge=nope", f"results_dir={tmp_path}"))
    assert "judge/nope" in line and "lexical" in line
    line = one_error_line(cli("sweep", "grid=single", "judge=simulated_fig6", "strategy=auto_auto",
                              f"results_dir={tmp_path}"))
    assert "simulated_fig6" in line and "create" in line
    assert list(tmp_path.iterdir()) == []


def test_a_users_conf_folder_outside_the_clone(tmp_path):
    (tmp_path / "conf" / "judge").mkdir(parents=True)
    (tmp_path / "conf" / "judge" / "myjudge.yaml").write_text(
        "judge: lexical\nname: myjudge\nsupport_threshold: 0.5\n", encoding="utf-8")
    (tmp_path / "conf" / "judge" / "lexical.yaml").write_text(  # same name as a shipped file: the user's wins
        "judge: lexical\nname: lexical\nsupport_threshold: 0.95\n", encoding="utf-8")
    res = cli("sweep", "grid=single", "judge=myjudge", "--dry-run", cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    row = next(x for x in res.stdout.splitlines() if x.startswith("myjudge__human_auto"))
    assert row.split()[1] == "64"  # 64 demo answers x ceil(<=10 human nuggets / 10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conf"]  # a dry run writes nothing
    cfg = yaml.safe_load(cli("sweep", "--cfg", "job", "grid=single", cwd=tmp_path).stdout)
    assert cfg["judge"]["support_threshold"] == 0.95
    listed = cli("judge", "list", cwd=tmp_path)
    assert listed.returncode == 0 and re.search(r"^\s+myjudge\s+lexical", listed.stdout, re.M)
    check = cli("judge", "check", "myjudge", cwd=tmp_path)
    assert check.returncode == 0 and "(myjudge)" in check.stdout, check.stderr
    # --config-dir overlays the same way, from anywhere
    other = tmp_path / "elsewhere"
    other.mkdir()
    res = cli("sweep", "grid=single", "judge=myjudge", "--dry-run", "--config-dir", str(tmp_path / "conf"), cwd=other)
    assert res.returncode == 0 and "myjudge__human_auto" in res.stdout


def test_multirun_syntax_plans_one_grid_of_four_cells(tmp_path):
    res = cli("sweep", "--dry-run", "-m", "judge=lexical,lexical_strict", "strategy=human_auto,auto_auto",
              f"results_dir={tmp_path}")
    assert res.returncode == 0, res.stderr[-2000:]
    rows = [x.split()[0] for x in res.stdout.splitlines() if "__" in x.split(" ")[0]]
    assert sorted(rows) == ["lexical__auto_auto", "lexical__human_auto", "lexical_strict__auto_auto",
                            "lexical_strict__human_auto"]
    assert "skipped" not in res.stdout
    line = one_error_line(cli("sweep", "-m", "sweep.assign_batch=5,10", "--dry-run"))
    assert "only judge, prompt, strategy can be swept" in line


def test_cfg_job_prints_the_composed_yaml():
    res = cli("sweep", "--cfg", "job", "sweep.assign_batch=5")
    assert res.returncode == 0, res.stderr
    cfg = yaml.safe_load(res.stdout)
    assert cfg["sweep"]["assign_batch"] == 5 and cfg["name"] == "demo" and cfg["judge"]["judge"] == "lexical"
    assert cfg["grid"]["judges"] == ["lexical", "lexical_strict", "simulated_fig6"]
    assert not any(k.startswith("_") for k in cfg)
    single = yaml.safe_load(cli("sweep", "--cfg", "grid=single", "judge=gpt-4o").stdout)  # --cfg before overrides
    assert single["grid"]["judges"] is None and single["judge"]["deployment"]["model"] == "gpt-4o"
    info = cli("sweep", "--info")
    assert info.returncode == 0 and "config search path" in info.stdout and "judge:" in info.stdout


@pytest.mark.parametrize("override, key", [
    ("sweep.assign_batch=0", "sweep.assign_batch must be an integer >= 1"),
    ("sweep.assign_batch=abc", "sweep.assign_batch must be an integer"),
    ("sweep.assign_batch=-3", "sweep.assign_batch must be an integer"),
    ("sweep.budget_usd=abc", "sweep.budget_usd must be a number >= 0"),
    ("sweep.budget_usd=-3", "sweep.budget_usd must be a number >= 0"),
    ("name=../x", "name"),
    ("name=''", "name must be a non-empty string"),
    ("grid=single judge.name=../../x", "not a valid name"),  # the single judge's name names its cell
])
def test_bad_settings_exit_2_with_one_line(tmp_path, override, key):
    line = one_error_line(cli("sweep", *override.split(), "runtime=serial", f"results_dir={tmp_path}", "--no-progress"))
    assert key in line
    assert list(tmp_path.iterdir()) == []


def test_results_name_comes_from_the_dataset_and_mixing_is_refused(tmp_path):
    (tmp_path / "r").mkdir()
    res = cli("sweep", "grid=single", "strategy=human_human", "runtime=serial", f"results_dir={tmp_path / 'r'}",
              "--no-progress", "analysis.bootstrap=0", "calibration.enabled=false")
    assert res.returncode == 0, res.stderr[-2000:]
    assert [p.name for p in (tmp_path / "r").iterdir() if not p.name.startswith(".")] == ["demo-lexical-human_human"]
    folder = tmp_path / "r" / "demo-lexical-human_human"
    assert yaml.safe_load((folder / "overrides.yaml").read_text(encoding="utf-8"))[0] == "grid=single"
    assert yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))["strategy"]["name"] == "human_human"
    # another grid into the same folder is refused with one line suggesting name=
    line = one_error_line(cli("sweep", "grid=single", "strategy=human_auto", "name=demo-lexical-human_human",
                              "runtime=serial", f"results_dir={tmp_path / 'r'}"))
    assert "name=" in line


def _dry_calls(out: str, cell: str) -> tuple[int, bool]:
    row = next(x for x in out.splitlines() if x.startswith(cell + " "))
    calls = row.split()[1]
    return int(calls.lstrip("<=")), calls.startswith("<=")


@pytest.mark.parametrize("strategy, relevance", [("human_auto", "qrels"), ("human_judge_importance", "qrels"),
                                                 ("auto_auto", "qrels"), ("auto_auto", "judge")])
def test_dry_run_counts_match_the_calls_made(tmp_path, strategy, relevance):
    """The estimate equals the judge calls made when every list is known in advance (human nuggets) and is a
    marked upper bound >= the calls made when the judge creates the nuggets; checked stage by stage."""
    with ChatTestServer() as srv:
        common = ["grid=single", "judge=testserver", f"strategy={strategy}", f"sweep.relevance={relevance}",
                  f"judge.deployment.base_url={srv.openai_base_url}", "runtime=serial", "cache=off", "name=dry",
                  f"results_dir={tmp_path}", "calibration.enabled=false", "analysis.bootstrap=0", "--no-progress"]
        dry = cli("sweep", "--dry-run", *common)
        assert dry.returncode == 0, dry.stderr[-2000:]
        assert srv.counts["requests"] == 0
        real = cli("sweep", *common)
        assert real.returncode == 0, real.stderr[-2000:]
        again = cli("sweep", "--dry-run", *common)  # stored jobs are not counted again
        assert again.returncode == 0 and _dry_calls(again.stdout, "testserver__v1__" + strategy)[0] == 0
    cell = "testserver__v1__" + strategy
    est, bound = _dry_calls(dry.stdout, cell)
    jobs = [json.loads(x) for x in (tmp_path / "dry" / "jobs.jsonl").read_text(encoding="utf-8").splitlines()]
    made: dict[str, int] = {}
    for j in jobs:
        made[j["spec"]["stage"]] = made.get(j["spec"]["stage"], 0) + j["stats"]["judge_calls"]
    row = next(x for x in dry.stdout.splitlines() if x.startswith(cell + " "))
    per_stage = dict((k, int(v)) for k, v in re.findall(r"(relevance|create|importance|assign) (\d+)", row))
    assert set(per_stage) == set(made)
    if strategy == "auto_auto":
        assert bound and est >= sum(made.values())
        exact = "relevance" if relevance == "judge" else "create"  # its inputs are known before the run
        assert per_stage[exact] == made[exact]
        for stage in set(made) - {exact}:  # relevance=judge: creation over every candidate document (a bound)
            assert per_stage[stage] >= made[stage], stage
    else:
        assert not bound and per_stage == made and est == sum(made.values())


@pytest.mark.parametrize("args", [("judge", "check", "gpt-4o"), ("probe", "--judge", "gpt-4o", "--answers", "2")])
def test_judge_check_and_probe_resolve_like_the_sweep(args, tmp_path):
    """`judge check NAME` and `probe --judge NAME` go through the same catalog: a config name resolves, and the
    missing key is the same one line before anything is built or sent."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    line = one_error_line(cli(*args, env=env, cwd=tmp_path))
    assert "environment variable OPENAI_API_KEY is not set" in line and "gpt-4o" in line
    assert list(tmp_path.iterdir()) == []
