"""Every ``--help`` page reads as plain text: no RST markup, no doubled percent signs, real paths."""

import argparse
import re
from pathlib import Path

from metaeval.cli import build_parser
from metaeval.commands.helptext import description, plain


def _pages(parser: argparse.ArgumentParser, prog: str = "metaeval"):
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _pages(child, f"{prog} {name}")


def test_no_rst_markup_or_doubled_percent_in_any_help_page():
    pages = dict(_pages(build_parser()))
    assert {"metaeval simulate", "metaeval create", "metaeval data info", "metaeval report"} <= set(pages)
    for prog, p in pages.items():
        text = p.format_help()
        assert "``" not in text, (prog, text[text.index("``") - 60:text.index("``") + 60])
        assert "%%" not in text, prog
        assert not re.search(r":(func|mod|class|meth):`", text), prog
    assert "75% of the topics" in " ".join(pages["metaeval simulate"].format_help().split())  # wrapped at any width


def test_report_help_names_the_thresholds_file_that_exists(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # argparse wraps to the terminal: a narrow one splits the long path
    text = dict(_pages(build_parser()))["metaeval report"].format_help()
    path = re.search(r"(\S+thresholds\.yaml)", " ".join(text.split())).group(1)
    assert Path(path).is_file() and "max_failure_rate" in Path(path).read_text()


def test_description_is_the_docstring_made_plain():
    doc = """``metaeval x``: does :func:`metaeval.y` things.

    A long paragraph with ``literals`` that is wrapped to the width given and keeps its words in order here.

        metaeval x --keep   this   indented   block
    """
    got = description(doc, width=40)
    assert got.splitlines()[0] == "metaeval x: does metaeval.y things."
    assert all(len(line) <= 40 for line in got.split("\n\n")[1].splitlines())
    assert "    metaeval x --keep   this   indented   block" in got and "``" not in got
    assert plain("see::") == "see:"
