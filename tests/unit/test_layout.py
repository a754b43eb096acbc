"""metaeval.layout: slugs, containment, atomic writers, the jobs reader, summaries and the fingerprint check."""

from __future__ import annotations

import json
import os

import pytest

from metaeval.errors import ConfigError, FormatError
from metaeval.layout import ResultsLayout, check_slug, slugify


@pytest.mark.parametrize("name", ["demo", "a", "trec-rag-2024_lexical.v1", "A9", "x" * 100, "lexical__human_auto"])
def test_valid_slugs(tmp_path, name):
    lay = ResultsLayout(tmp_path, name)
    assert lay.root == tmp_path / name and lay.cell_dir(name) == tmp_path / name / "cells" / name


@pytest.mark.parametrize("name", ["../../x", "/abs/path", "", "..", ".", ".hidden", "-x", "_x", "a/b", "a\\b", "a..b",
                                  "x" * 101, "a b", "a\x00b", "caf\u00e9", None, "name\n"])
def test_invalid_names_are_one_line_config_errors(tmp_path, name):
    with pytest.raises(ConfigError) as e:
        ResultsLayout(tmp_path, name)
    msg = str(e.value)
    assert msg.startswith("name=") and "\n" not in msg
    with pytest.raises(ConfigError) as e:
        ResultsLayout(tmp_path, "ok").cell_dir(name)
    assert str(e.value).startswith("cell=")
    assert list(tmp_path.iterdir()) == []  # nothing was created


def test_check_slug_and_slugify():
    assert check_slug("a-b", "cell") == "a-b"
    for raw in ("../../x", "/abs/path", "judge: gpt-4o (temp 0)", "", "..", "\u00e9\u00e9"):
        s = slugify(raw)
        assert check_slug(s) == s and "/" not in s


def test_a_symlink_out_of_results_dir_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    results = tmp_path / "results"
    results.mkdir()
    (results / "evil").symlink_to(outside)
    with pytest.raises(ConfigError, match="outside"):
        ResultsLayout(results, "evil")
    lay = ResultsLayout(results, "good")
    lay.ensure()
    (lay.cells_dir).mkdir()
    (lay.cells_dir / "c").symlink_to(outside)
    with pytest.raises(ConfigError, match="outside"):
        lay.cell_dir("c")
    with pytest.raises(ConfigError, match="outside"):
        lay.write_text(outside / "x.txt", "no")
    assert list(outside.iterdir()) == []


def test_paths_are_the_documented_names(tmp_path):
    lay = ResultsLayout(tmp_path, "n")
    r = tmp_path / "n"
    assert (lay.jobs, lay.quarantine, lay.lock, lay.fingerprint) == (r / "jobs.jsonl", r / "jobs.quarantine.jsonl", r / ".lock",
                                                                     r / "fingerprint.json")
    assert (lay.config_yaml, lay.overrides_yaml, lay.summary_json, lay.summary_md) == (
        r / "config.yaml", r / "overrides.yaml", r / "summary.json", r / "summary.md")
    assert (lay.study_dir, lay.report_html, lay.study_json) == (r / "study", r / "report.html", r / "study" / "study.json")
    c = r / "cells" / "c1"
    assert [lay.labels("c1"), lay.scores("c1"), lay.runs("c1"), lay.calibration("c1"), lay.calibration_model("c1"),
            lay.transcripts("c1")] == [c / "labels.jsonl", c / "scores.csv", c / "runs.csv", c / "calibration.json",
                                       c / "calibration-model.json", c / "transcripts.jsonl"]
    r.mkdir()
    assert ResultsLayout.open(r).root == r and ResultsLayout.open(r).name == "n"
    with pytest.raises(ConfigError, match="not a folder"):
        ResultsLayout.open(tmp_path / "missing")


def test_atomic_writes_leave_no_temporary_files(tmp_path):
    lay = ResultsLayout(tmp_path, "n")
    lay.write_json(lay.summary_json, {"cells": [], "x": float("nan")})
    assert json.loads(lay.summary_json.read_text(encoding="utf-8")) == {"cells": [], "x": None}
    lay.write_text(lay.summary_json, "{}\n")  # replaced, not appended
    assert lay.summary_json.read_text(encoding="utf-8") == "{}\n"
    assert sorted(p.name for p in lay.root.iterdir()) == ["summary.json"]


def test_iter_jobs_skips_blank_and_unreadable_lines_and_the_last_record_wins(tmp_path, caplog):
    lay = ResultsLayout(tmp_path, "n")
    lay.ensure()
    recs = [{"key": "a", "spec": {"stage": "assign"}, "status": "failed"}, {"key": "b", "spec": {}, "status": "done"},
            {"key": "a", "spec": {"stage": "assign"}, "status": "done"}]
    lines = [json.dumps(recs[0]), "", "{not json", json.dumps({"no": "key"}), json.dumps(recs[1]), "[1, 2]", json.dumps(recs[2])]
    lay.jobs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = lay.jobs.read_bytes()
    assert list(lay.iter_jobs()) == recs
    assert lay.job_records() == {"a": recs[2], "b": recs[1]}
    assert lay.jobs.read_bytes() == before  # a reader never rewrites the store
    assert "jobs.jsonl:3" in caplog.text and "3 line(s)" in caplog.text


def test_read_summary_errors(tmp_path):
    """``summary.json`` read through the results schema (``metaeval.study.records.read_summary``)."""
    from metaeval.study.records import Summary, read_summary
    from tests.helpers import results as R

    lay = ResultsLayout(tmp_path, "n")
    lay.ensure()
    with pytest.raises(ConfigError, match="no summary.json; run `metaeval sweep` first"):
        read_summary(lay)
    lay.summary_json.write_text("{bad", encoding="utf-8")
    with pytest.raises(FormatError, match="summary.json:1"):
        read_summary(lay)
    lay.write_summary({**R.summary_doc([]), "cells": {}})
    with pytest.raises(FormatError, match="field 'cells': expected a list"):
        read_summary(lay)
    lay.write_summary({"dry_run": True, "cells": []})
    with pytest.raises(ConfigError, match="dry run"):
        read_summary(lay)
    lay.write_summary(R.summary_doc([{"cell": "c"}]), "# md\n")
    got = read_summary(lay)
    assert isinstance(got, Summary) and [c.cell for c in got.cells] == ["c"]
    assert lay.summary_md.read_text(encoding="utf-8") == "# md\n"
    # a parent folder: the hint names the results folders inside it
    with pytest.raises(ConfigError, match="did you mean"):
        read_summary(ResultsLayout.open(tmp_path))


def test_fingerprint_refuses_another_dataset_or_grid(tmp_path):
    lay = ResultsLayout(tmp_path, "demo")
    lay.check_fingerprint("ds1", "grid1")  # first sweep: recorded
    assert json.loads(lay.fingerprint.read_text(encoding="utf-8"))["dataset"] == "ds1"
    lay.check_fingerprint("ds1", "grid1")  # same: fine
    lay.jobs.write_text('{"key": "k"}\n', encoding="utf-8")  # the folder now holds results: another dataset is refused
    for ds, grid, what in (("ds2", "grid1", "dataset"), ("ds1", "grid2", "grid")):
        with pytest.raises(ConfigError) as e:
            lay.check_fingerprint(ds, grid)
        msg = str(e.value)
        assert f"another {what}" in msg and "name=" in msg and "\n" not in msg
    empty = ResultsLayout(tmp_path, "failed-run")  # a folder a failed run left without results never blocks a retry
    empty.check_fingerprint("ds1", "grid1")
    empty.check_fingerprint("ds2", "grid1")
    assert json.loads(empty.fingerprint.read_text(encoding="utf-8"))["dataset"] == "ds2"
    lay.check_fingerprint(None, "grid1")  # None: that part is not compared
    assert json.loads(lay.fingerprint.read_text(encoding="utf-8"))["dataset"] == "ds1"
    # a folder from before fingerprints existed is adopted
    old = ResultsLayout(tmp_path, "old")
    old.ensure()
    old.jobs.write_text("", encoding="utf-8")
    old.check_fingerprint("dsX", "gX")
    assert json.loads(old.fingerprint.read_text(encoding="utf-8"))["grid"] == "gX"
    # write=False checks only
    fresh = ResultsLayout(tmp_path, "fresh")
    fresh.check_fingerprint("a", "b", write=False)
    assert not fresh.fingerprint.exists() and not os.path.exists(fresh.root)


def test_write_labels_streams_the_nist_assignment_file_unchanged(tmp_path, nist_labels):
    """``write_labels`` writes record by record (never the whole file as one string); the file is the NIST
    assignment JSONL of the label set, byte for byte what joining the records gives, and reads back to the same
    labels."""
    from metaeval.io.assignments import assignment_records, read_assignments

    lay = ResultsLayout(tmp_path, "x")
    path = lay.write_labels("cell", nist_labels)
    expected = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in assignment_records(nist_labels))
    assert path.read_text(encoding="utf-8") == expected
    back = read_assignments(path, name="back")
    assert len(back.labels) == len(nist_labels.labels)
    assert sorted(p.name for p in path.parent.iterdir()) == ["labels.jsonl"]  # no temporary file left behind


def test_write_lines_is_atomic_when_the_lines_fail(tmp_path):
    """A generator that raises half way leaves no partial file (and no temporary one)."""
    lay = ResultsLayout(tmp_path, "x")
    target = lay.root / "out.jsonl"
    lay.root.mkdir(parents=True)

    def lines():
        yield "a\n"
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        lay.write_lines(target, lines())
    assert list(lay.root.iterdir()) == []
