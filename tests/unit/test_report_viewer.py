"""The transcript viewer's data (the study's join with the human labels) and page, the report's links to it, the
auto_auto disagreement lists, collapsed refusal notes and the terminal's closing lines."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pandas as pd

from metaeval.report.model import Report, Section, Table
from metaeval.report.render_html import CSS, render_html
from metaeval.report.render_md import render_md
from metaeval.report.viewer import unit_link, viewer_html
from metaeval.study.transcript_view import transcript_view



def _reference():
    """Stands in for a LabelSet: the join reads only its ``labels`` frame."""
    df = pd.DataFrame({"qid": ["q1", "q1", "q1"], "run_id": ["r1", "r1", "r2"], "nugget_id": [0, 1, 0],
                       "nugget": ["Cats purr", "Dogs bark", "Cats purr"], "importance": ["vital", "okay", "vital"],
                       "support": ["support", "not_support", "partial_support"]})
    return SimpleNamespace(labels=df)


RECORDS = [
    {"stage": "create", "qid": "q1", "run_id": None, "items": ["doc1", "doc2"], "labels": ["Cats purr", "Cats nap", "x"],
     "status": "ok", "calls": []},
    {"stage": "assign", "qid": "q1", "run_id": "r1", "items": ["Cats purr", "Dogs bark"],
     "labels": ["support", "support"], "status": "ok", "reasks": 1,
     "calls": [{"prompt_id": "assign", "prompt_version": "v1", "reask": 0, "messages": [{"role": "user", "content": "p"}],
                "raw_reply": "garbled", "api_key": "never shown"},
               {"prompt_id": "assign", "prompt_version": "v1", "reask": 1, "messages": [], "raw_reply": "[...]"}]},
    {"stage": "assign", "qid": "q1", "run_id": "r2", "items": ["Cats purr"], "labels": ["partial_support"],
     "status": "ok", "calls": []},
    {"stage": "assign", "qid": "q1", "run_id": "r3", "items": ["A judge's own nugget"], "labels": ["support"],
     "status": "ok", "calls": []},
]


def test_transcript_view_joins_human_labels_by_text_never_by_position():
    view = transcript_view(RECORDS, _reference(), "c", queries={"q1": "why cats purr"})
    create, r1, r2, r3 = view["units"]
    # creation: documents in, nuggets out - not paired row by row
    assert [r["item"] for r in create["rows"]] == ["doc1", "doc2"] and create["outputs"] == ["Cats purr", "Cats nap", "x"]
    assert all(r["judge"] is None and r["human"] is None for r in create["rows"]) and not create["disagree"]
    assert [(r["judge"], r["human"], r["importance"]) for r in r1["rows"]] == [("support", "support", "vital"),
                                                                               ("support", "not_support", "okay")]
    assert r1["disagree"] and r1["query"] == "why cats purr" and len(r1["calls"]) == 2
    assert "api_key" not in r1["calls"][0] and r1["calls"][1]["raw_reply"] == "[...]"
    assert r2["rows"][0]["human"] == "partial_support" and not r2["disagree"]  # the run's own human label
    assert r3["rows"][0]["human"] is None and not r3["disagree"]  # no human nugget with that text
    assert view["n_units"] == 4 and view["n_disagree"] == 1 and view["has_reference"]
    assert not transcript_view(RECORDS, None, "c")["has_reference"]


def test_viewer_page_is_self_contained_and_cannot_be_injected():
    evil = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"
    view = transcript_view([{**RECORDS[1], "items": [evil, "Dogs bark"]}], _reference(), "c")
    page = viewer_html(view, f"Transcripts of {evil}")
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the data block and the script, nothing else
    assert evil not in page and "\\u003c/script>" in page
    data = re.search(r'<script type="application/json" id="view-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(data)["units"][0]["rows"][0]["item"] == evil  # the text survives, as data
    assert ".innerHTML" not in page and "textContent" in page
    assert not re.search(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', page)
    for sel in ("f-qid", "f-run", "f-stage", "f-label", "f-human", "f-disagree", "f-text"):
        assert f'id="{sel}"' in page
    assert unit_link("cells/c/transcripts.html", "q 1", "run/a", disagree=True) == \
        "cells/c/transcripts.html#qid=q%201&run=run%2Fa&disagree=1"


def test_table_links_render_in_html_and_markdown_only_on_their_rows():
    t = Table(["run", "transcript"], [["r1", "open"], ["r2", "-"]], "c", links=["cells/x/transcripts.html#qid=q&run=r1", ""])
    rep = Report("T", [Section("s", "S", [t])], {}, {})
    html = render_html(rep)
    assert '<td><a href="cells/x/transcripts.html#qid=q&amp;run=r1">open</a></td>' in html and "<td>-</td>" in html
    assert "| r1 | [open](cells/x/transcripts.html#qid=q&run=r1) |" in render_md(rep)
    # labels never break mid-word ("not_sup port"): a word breaks only when it alone is wider than its cell
    assert "anywhere" not in CSS and "overflow-wrap:break-word" in CSS


def test_auto_auto_nugget_lists_are_two_lists_not_rows_that_match():
    from metaeval.report.disagreement_section import nugget_lists as _nugget_lists

    nl = {"run_id": "r1", "answer_excerpt": "Cats purr.",
          "human": [{"nugget": "Cats purr", "importance": "vital", "label": "support"},
                    {"nugget": "Dogs bark", "importance": "okay", "label": "not_support"}],
          "judge": [{"nugget": "Purring is a sound", "importance": "vital", "label": "support"}]}
    text, human, judge, link = _nugget_lists(nl, "cells/c/transcripts.html#qid=q1&run=r1")
    assert "not aligned row by row" in text.text
    assert human.columns == judge.columns == ["nugget", "importance", "label"]
    assert [r[0] for r in human.rows] == ["Cats purr", "Dogs bark"] and [r[0] for r in judge.rows] == ["Purring is a sound"]
    assert human.caption.endswith("2 nuggets, 1 supported") and judge.caption.endswith("1 nuggets, 1 supported")
    assert link.links == ["cells/c/transcripts.html#qid=q1&run=r1"]


def test_identical_refusals_collapse_into_one_note():
    from metaeval.report.calibration_section import cell_blocks
    from metaeval.report.model import Text

    reason = "label-level methods refused: 0 of 872 label pairs match by nugget text"
    held = {"mae": {"mean": 0.1, "se": 0.01}, "diff_vs_raw": {"mean": 0.0, "se": 0.0}, "bias": 0.0, "coverage": 0.9,
            "coverage_worst_run": 0.8, "mean_ci_width": 0.3, "tau": {}}
    from tests.helpers import results as R

    cal = R.calibration({
           "metric": "v_strict", "recommendation": "keep raw", "pairing": {"key": "k", "matched": 0, "judge_pairs": 872,
           "reference_pairs": 496, "coverage": 0.0}, "settings": {"folds_used": 5, "level": 0.95},
           "topics": {"human_labelled": ["q"], "judge_only": []}, "selection": {"method": "none"},
           "candidates": {"none": {"status": "ok", "level": "score", "held_out": held},
                          **{m: {"status": "refused", "level": "label", "reason": reason}
                             for m in ("posterior", "matrix", "matrix_unconstrained", "ordinal")}},
           "leaderboard": {"rows": [], "estimated_by": "ppi_pp", "human_labelled_topics": 1, "judge_only_topics": 0,
                           "intervals_why": "PPI++ is the fallback"}})
    notes = [b.text for b in cell_blocks(cal) if isinstance(b, Text) and reason in b.text]
    assert notes == [f"posterior, matrix, matrix_unconstrained, ordinal: {reason}"]


def test_closing_lines_name_synthetic_data_the_verdict_and_the_page():
    from metaeval.workflow.report import closing_lines

    lines = closing_lines({"synthetic": True, "summary": {"verdict": "Verdict: FAIL - 1 of 2 judged cell(s) ..."}},
                          "results/demo/report.html")
    assert lines[0].startswith("note: synthetic data") and lines[1].startswith("Verdict: FAIL")
    assert lines[-1] == "report: results/demo/report.html"
    assert closing_lines({"summary": {"verdict": "Verdict: PASS - all"}}, "r.html") == ["Verdict: PASS - all", "report: r.html"]


def test_viewer_shows_the_answer_and_says_a_unit_is_one_batch_of_nuggets():
    """Offline judges send no prompt: the answer text must be in the viewer to judge a disagreement there, and an
    answer whose nuggets took two batches is two units (said, not left to look like a duplicate)."""
    from metaeval.study.transcript_view import answer_index

    answers = SimpleNamespace(answers=pd.DataFrame({"qid": ["q1", "q1"], "run_id": ["r1", "r2"],
                                                    "answer_text": ["Cats purr when content.", "Dogs bark."]}))
    second = {**RECORDS[2], "items": ["Dogs bark"], "labels": ["support"]}  # r2's second batch
    view = transcript_view(RECORDS + [second], _reference(), "c", answers=answer_index(None, answers))
    create, r1, r2, r3, r2b = view["units"]
    assert r1["answer"] == "Cats purr when content." and r2["answer"] == r2b["answer"] == "Dogs bark."
    assert create["answer"] is None and r3["answer"] is None  # creation units have no answer; r3 has none on file
    assert (r2["batch"], r2["batches"], r2b["batch"], r2b["batches"]) == (1, 2, 2, 2) and r1["batches"] == 1
    assert view["batch_size"] == 2
    page = viewer_html(view, "t")
    assert "a unit is one batch of up to 2 nuggets, so a topic and run with more nuggets appear once per batch" in page
    assert "'Answer'" in page and "the answer it labelled is above" in page and "(batch ' + u.batch" in page


def _page_data(page: str):
    return json.loads(re.search(r'<script type="application/json" id="view-data">(.*?)</script>', page, re.S).group(1))


def test_the_study_writes_the_view_html_safe_and_the_page_embeds_the_files_text(tmp_path):
    """transcript_view.json is written with every '<' as \\u003c (the same JSON value), and the report's page embeds
    the file's text instead of encoding the parsed view again; a file an older study wrote ('<' as it is) is escaped
    on the way in, so neither can close the data's script element."""
    from metaeval.layout import ResultsLayout
    from metaeval.study.transcript_view import view_json

    evil = "</script><script>alert(1)</script> \u201cquoted\u201d"
    view = transcript_view([{**RECORDS[1], "items": [evil, "Dogs bark"], "calls": [{"latency_s": float("nan")}]}],
                           _reference(), "c")
    text = view_json(view)
    assert "<" not in text and json.loads(text)["units"][0]["rows"][0]["item"] == evil
    assert json.loads(text)["units"][0]["calls"][0]["latency_s"] is None  # NaN is null, as write_json writes it
    for body in (text, json.dumps(json.loads(text))):  # this study's file, and an older one with '<' unescaped
        path = tmp_path / "transcript_view.json"
        path.write_text(body + "\n", encoding="utf-8")
        parsed, raw = ResultsLayout.read_json_text(path)
        page = viewer_html(parsed, "t", text=raw)
        assert page.count("</script>") == 2 and evil not in page
        assert raw.strip().replace("<", "\\u003c") in page  # the file's text itself, not a second encoding
        assert _page_data(page) == parsed == json.loads(text)
        assert _page_data(viewer_html(parsed, "t")) == parsed  # the same data as the page encoded from the view


def test_read_json_text_names_the_file_and_line_of_bad_json(tmp_path):
    import pytest

    from metaeval.errors import FormatError
    from metaeval.layout import ResultsLayout

    bad = tmp_path / "transcript_view.json"
    bad.write_text('{"units": [\n1,,\n]}', encoding="utf-8")
    with pytest.raises(FormatError) as e:
        ResultsLayout.read_json_text(bad)
    assert str(bad) in str(e.value) and e.value.line == 2 and "not valid JSON" in str(e.value)
    with pytest.raises(FormatError, match="no such file"):
        ResultsLayout.read_json_text(tmp_path / "missing.json")
