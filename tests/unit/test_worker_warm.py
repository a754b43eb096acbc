"""``JudgeWorker.warm`` (called by a Ray actor while it is constructed): a model-server judge imports its SDK there,
not in its first request, so the actor reports ready when it can take work (issue 15: the ~1 s import sat inside
the first requests of every fresh actor); an offline judge's warm loads nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import sys
from metaeval.pipeline.stages import make_worker
from metaeval.judges.catalog import resolve_judge
spec = resolve_judge({spec!r})
w = make_worker(spec)
before = {mods!r}[0] in sys.modules
w.warm()
print(before, all(m in sys.modules for m in {mods!r}))
"""


@pytest.mark.parametrize("spec,mods,want", [
    ("testserver", ("openai", "openai.types.chat"), "False True"),
    ("claude", ("anthropic",), "False True"),
    ("lexical", ("openai",), "False False"),
])
def test_warm_imports_the_judge_sdk_only(spec, mods, want, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-warm")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-warm")
    monkeypatch.setenv("METAEVAL_TEST_SERVER_KEY", "test-warm")
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(spec=spec, mods=mods)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == want
