"""scripts/quickstart.sh picks its installer: uv when it is on PATH or pip can install it, pip otherwise, on failure
or when METAEVAL_INSTALLER=pip - always the same requirement, ``-e ".[test]"``, then ``metaeval sweep``.

Runs the real script in a copy of ``scripts/`` against stub executables that record their arguments (nothing is
installed, nothing is downloaded)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

STUB = """#!/bin/sh
echo "{name} $*" >> "{log}"
{body}
"""


#: the step after the install that compiles metaeval's own (editable) sources to bytecode
COMPILE = "python -m compileall -q -j 0 metaeval"


def _stub(path: Path, name: str, log: Path, body: str = "exit 0") -> None:
    path.write_text(STUB.format(name=name, log=log, body=body), encoding="utf-8")
    path.chmod(0o755)


@pytest.fixture
def repo(tmp_path: Path):
    """A copy of scripts/quickstart.sh with a stub .venv (python, metaeval) and a PATH holding only ``dirname`` and ``cp``."""
    work = tmp_path / "repo"
    (work / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "quickstart.sh", work / "scripts" / "quickstart.sh")
    bin_ = work / ".venv" / "bin"
    bin_.mkdir(parents=True)
    log = tmp_path / "calls.log"
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("dirname", "cp"):  # the script needs dirname; the python stub cp
        (tools / tool).symlink_to(shutil.which(tool))

    def run(*, uv_on_path: bool = False, uv_rc: int = 0, pip_gets_uv: bool = True, installer: str | None = None):
        uv_body = f"exit {uv_rc}"
        # `python -m pip install -q uv` puts a uv into .venv/bin (when pip_gets_uv), as pip would
        _stub(tmp_path / "venv-uv", "venv-uv", log, uv_body)
        get_uv = f'cp "{tmp_path / "venv-uv"}" "{bin_ / "uv"}"' if pip_gets_uv else "exit 1"
        py_body = f'if [ "$*" = "-m pip install -q uv" ]; then {get_uv}; fi; exit 0'
        _stub(bin_ / "python", "python", log, py_body)
        _stub(bin_ / "metaeval", "metaeval", log)
        path = [str(tools)]
        if uv_on_path:
            on_path = tmp_path / "uvbin"
            on_path.mkdir(exist_ok=True)
            _stub(on_path / "uv", "path-uv", log, uv_body)
            path.insert(0, str(on_path))
        env = {"PATH": os.pathsep.join(path), "HOME": str(tmp_path)}
        if installer:
            env["METAEVAL_INSTALLER"] = installer
        proc = subprocess.run([shutil.which("bash"), "scripts/quickstart.sh"], cwd=work, env=env, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return log.read_text(encoding="utf-8").splitlines(), proc.stderr

    return run


def test_uv_on_path_installs_the_test_extra(repo):
    calls, _ = repo(uv_on_path=True)
    assert calls == ["path-uv pip install -q --compile-bytecode --python .venv/bin/python -e .[test]", COMPILE, "metaeval sweep"]


def test_without_uv_on_path_pip_installs_uv_into_the_venv_and_uv_installs(repo):
    calls, _ = repo()
    assert calls == ["python -m pip install -q uv", "venv-uv pip install -q --compile-bytecode --python .venv/bin/python -e .[test]",
                     COMPILE, "metaeval sweep"]


def test_a_failing_uv_install_falls_back_to_pip_and_says_so(repo):
    calls, err = repo(uv_rc=1)
    assert calls[-4:] == ["python -m pip install -q --upgrade pip", "python -m pip install -q -e .[test]",
                          COMPILE, "metaeval sweep"]
    assert "installing with pip" in err


def test_no_uv_anywhere_installs_with_pip(repo):
    calls, err = repo(pip_gets_uv=False)
    assert calls == ["python -m pip install -q uv", "python -m pip install -q --upgrade pip",
                     "python -m pip install -q -e .[test]", COMPILE, "metaeval sweep"]
    assert "installing with pip" not in err  # nothing failed: pip was the installer from the start


def test_metaeval_installer_pip_skips_uv(repo):
    calls, _ = repo(uv_on_path=True, installer="pip")
    assert calls == ["python -m pip install -q --upgrade pip", "python -m pip install -q -e .[test]", COMPILE, "metaeval sweep"]


def test_the_test_extra_pulls_no_optional_extra():
    """``[test]`` (what the quickstart installs) names nothing another extra exists for (torch, sentence-transformers,
    nuggetizer, ppi-python, ray[client], llama-cpp-python, mkdocs) and does not pull an extra of metaeval itself."""
    import re
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    name = lambda req: re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower().replace("_", "-")  # noqa: E731
    test = {name(r) for r in extras["test"]}
    optional = {name(r) for extra, reqs in extras.items() if extra != "test" for r in reqs}
    assert test and not test & optional, test & optional
    assert "metaeval" not in test
