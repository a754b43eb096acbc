"""The study reads each cell's ``transcripts.jsonl`` once (issue 34): the judge's replies beside the disagreements
and the transcript viewer both come from that one read (it was read and parsed twice per cell)."""

from __future__ import annotations

import json
from collections import Counter


def test_each_cells_transcripts_are_read_once_and_feed_both(tmp_path, monkeypatch):
    from metaeval import cli
    from metaeval.io import transcripts

    reads: Counter = Counter()
    real = transcripts.read_transcripts

    def counted(path):
        reads[str(path)] += 1
        return real(path)

    monkeypatch.setattr(transcripts, "read_transcripts", counted)
    rc = cli.main(["sweep", "--no-progress", f"results_dir={tmp_path}", "name=t", "grid=single", "judge=lexical",
                   "strategy=human_auto", "calibration.enabled=false", "analysis.bootstrap=0", "runtime=serial", "++report.enabled=false"])  # the study's reads only
    assert rc in (0, 1), rc  # 1: the verdict may fail the demo's thresholds; everything is written
    folder = tmp_path / "t" / "cells"
    cells = [p.name for p in folder.iterdir() if (p / "transcripts.jsonl").exists()]
    assert cells, list(folder.iterdir())
    assert {k.split("/cells/")[1].split("/")[0]: v for k, v in reads.items()} == {c: 1 for c in cells}
    doc = json.loads((tmp_path / "t" / "study" / "study.json").read_text(encoding="utf-8"))
    for c in cells:
        assert doc["cells"][c]["transcript_view"] == f"cells/{c}/transcript_view.json"
        assert (folder / c / "transcript_view.json").exists()
