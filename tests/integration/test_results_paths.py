"""``metaeval sweep`` refuses names and cell names that would leave ``results_dir`` (issue 13 item 4): exit 2, one
line naming the bad value, nothing written anywhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("override, shown", [
    ("name=../../x", "name='../../x'"),
    ("name={abs}", "name="),
    ("name=", "name"),
    ("judge.name=../../../../x", "cell='../../../../x__human_auto'"),
    ("name=a/b", "name='a/b'"),
])
def test_escaping_names_are_refused_and_nothing_is_written(tmp_path, override, shown):
    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    override = override.replace("{abs}", str(tmp_path / "abs"))
    before = sorted(p for p in tmp_path.rglob("*"))
    res = subprocess.run([sys.executable, "-m", "metaeval", "sweep", "--no-progress", "runtime=serial", "grid=single",
                          "judge=lexical", "results_dir=results", override], cwd=work, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    err = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and shown in err[0] and "Traceback" not in res.stderr, res.stderr
    assert sorted(p for p in tmp_path.rglob("*")) == before  # not even results/ was created
