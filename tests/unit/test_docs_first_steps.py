"""What a new user reads first (README.md, docs/getting-started.md) holds after the quickstart: how to reach the
``metaeval`` command, what the default test tier runs, where the assessor plan goes, and no bare time figure (a time
is quoted with the machine and its load, or not at all)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = {name: (ROOT / name).read_text(encoding="utf-8") for name in ("README.md", "docs/getting-started.md")}


def _paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]


def test_both_pages_say_how_to_reach_the_command_after_the_quickstart():
    for name, text in PAGES.items():
        assert "source .venv/bin/activate" in text and ".venv/bin/metaeval" in text, name


def test_the_pages_agree_that_the_default_tier_has_no_ray_cluster_test():
    for name, text in PAGES.items():
        for para in _paragraphs(text):
            if "two-node" in para:  # named only as part of the heavy tier
                assert "-m heavy" in para and not re.search(r"includes a two-node", para), (name, para)


def test_every_time_figure_comes_with_machine_and_load():
    figure = re.compile(r"~?\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)? ?(?:s|min|minutes|seconds)\b(?! per)")
    for name, text in PAGES.items():
        for para in _paragraphs(text):
            if figure.search(para) and not re.search(r"\d+ s \(|labels? per|seconds-per-label|--", para):
                assert "load" in para and "core" in para, (name, para[:300])


def test_the_readme_recipe_writes_the_plan_where_the_report_finds_it():
    recipe = PAGES["README.md"]
    cmd = recipe[recipe.index("metaeval plan --reference $NIST"):]
    cmd = cmd[:cmd.index("\n", cmd.index("--total-topics"))]
    assert "--results results/nist_lexical" in cmd and "--out" not in cmd
