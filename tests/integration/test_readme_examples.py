"""Every ```python block of README.md runs as written (in order, each in a fresh namespace).

The working directory is a temporary folder placed like the repository (``../shared/data`` resolves to the
shared data), so relative paths in the README work and a sweep's ``results/`` stays out of the checkout.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    return [(text[: m.start()].count("\n") + 1, m.group(1)) for m in BLOCK.finditer(text)]


def test_readme_has_python_examples():
    blocks = python_blocks()
    assert len(blocks) >= 3 and all("import metaeval" in code for _, code in blocks)


@pytest.mark.parametrize("line,code", python_blocks(), ids=lambda v: f"line{v}" if isinstance(v, int) else "")
def test_readme_python_block_runs(line, code, shared_data, tmp_path, monkeypatch, capsys):
    work = tmp_path / "repo"
    work.mkdir()
    (tmp_path / "shared").symlink_to(shared_data.parent, target_is_directory=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path / "cache"))
    exec(compile(code, f"README.md:{line}", "exec"), {"__name__": f"readme_line_{line}"})
    out = capsys.readouterr().out
    assert out.strip(), "every README example prints what it shows"
    if "analyze(" in code:
        assert "pooled" in out and "\\begin{tabular}" in out
    if "sweep(" in code:
        assert "overlap__human_auto" in out and (work / "results" / "python-api-demo" / "summary.json").is_file()
    if "leaderboard(" in code and "sweep(" not in code:
        assert "ldilab_gpt_4o" in out.splitlines()[1] and "0.66659" in out  # the check value 0.6666
