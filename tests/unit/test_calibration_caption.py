"""The report's calibration table says what its held-out tau is (issue 32 item 3, review walk).

The procedure's run-level held-out tau is Kendall's tau of each split's *whole-track* run scores with the human
run scores over every labelled topic (``procedure.evaluate``: ``truth`` over both parts), so on NIST, where every
topic is human-labelled, raw's is the headline run-level tau exactly (0.787 = 0.787).  The caption said it was on
"each split's held-out topics ... (lower than the headline tau over all 21 topics)": untrue for the run column.
"""

from __future__ import annotations

from metaeval.report.calibration_section import candidates_table
from tests.helpers import results as R

RAW = {"level": "score", "status": "ok", "reason": None,
       "held_out": {"mae": {"mean": 0.0770, "se": 0.0}, "bias": -0.0770, "diff_vs_raw": {"mean": 0.0, "se": 0.0},
                    "tau": {"run": 0.7867, "topic_avg": 0.5242, "pooled": 0.4269}, "wins": 0, "splits": 20,
                    "fit_topics": 17, "held_out_topics": 4, "coverage": 0.98, "coverage_worst_run": 0.9,
                    "mean_ci_width": 0.135}}
CAL = {"metric": "v_strict", "settings": {"level": 0.95, "repeats": 20},
       "topics": {"human_labelled": [f"t{i}" for i in range(21)], "judge_only": []},
       "candidates": {"raw": RAW}, "selection": {"method": "raw", "intervals_by": "ppi_pp"}}


def test_the_caption_says_the_run_tau_is_on_whole_track_scores_over_every_topic():
    cap = " ".join(candidates_table(R.calibration(CAL)).caption.split())  # the record the summary holds
    assert "lower than the headline" not in cap
    assert "run = Kendall's tau of the whole-track run scores with the human ones over all 21 topics" in cap
    assert "topic/pooled on the held-out topics of the first three splits" in cap
