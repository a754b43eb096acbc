"""The sweep table's calibration column says what the leaderboard shows (one decision: its point method and its
interval method) and the held-out error against raw's; never "none recommended" beside a shown leaderboard."""

from metaeval.study.summary import _best_calibration
from tests.helpers import results as R


def _sel(**kw):
    """A cell's calibration block (``summary.json``) with this selection (a MAE's SE left out is undefined)."""
    base = {"method": "ppi_pp", "held_out_mae": {"mean": 0.104}, "raw_mae": {"mean": 0.087}, "intervals_by": "ppi_pp",
            "splits": 20, "verdict": "correction beats the baseline"}
    sel = {**base, **kw}
    for k in ("held_out_mae", "raw_mae"):
        sel[k] = {"se": None, **sel[k]}
    return R.calibration_doc({"selection": sel})


def _rec(**kw):
    """The same as the record the summary holds."""
    return R.calibration(_sel(**kw))


def test_cannot_decide_says_what_is_shown_and_why():
    got = _best_calibration(_rec(method="composite", verdict="cannot decide", splits=0,
                                 why="too few human-labelled topics to evaluate a correction (8 < min_topics 10)"),
                            "v_strict")
    assert got == ("leaderboard by composite, intervals by ppi_pp (too few human-labelled topics to evaluate a "
                   "correction (8 < min_topics 10))")
    assert "none" not in got


def test_a_method_that_beats_raw_is_shown_with_its_error():
    got = _best_calibration(_rec(method="ppi", beats_raw=True, held_out_mae={"mean": 0.066},
                                 raw_mae={"mean": 0.116}), "v_strict")
    assert got == "leaderboard by ppi, intervals by ppi_pp: held-out MAE raw 0.116 -> ppi 0.066"


def test_raw_kept():
    got = _best_calibration(_rec(method="raw", held_out_mae={"mean": 0.087}), "v_strict")
    assert got == "leaderboard by raw, intervals by ppi_pp: held-out MAE raw 0.087 -> raw 0.087"


def test_the_column_says_the_errors_are_held_out_run_maes():
    from metaeval.study.summary import SUMMARY_COLUMNS, summary_markdown

    assert SUMMARY_COLUMNS[-1] == "calibration (held-out run MAE)"
    md = summary_markdown(R.summary([{"cell": "c", "stats": {}, "calibration": _sel(method="raw",
                                                                                   held_out_mae={"mean": 0.087})}]))
    assert "| calibration (held-out run MAE) |" in md
    assert "| leaderboard by raw, intervals by ppi_pp: held-out MAE raw 0.087 -> raw 0.087 |" in md


def test_sweep_result_row_says_whether_the_method_is_recommended():
    from metaeval.api_results import _cell_row

    cell = {"cell": "c", "calibration": _sel(method="composite", verdict="cannot decide", beats_raw=False)}
    assert _cell_row(R.cell(cell), "v_strict")["calibration_recommended"] is False
    cell = {"cell": "c", "calibration": _sel(method="ppi", beats_raw=True)}
    assert _cell_row(R.cell(cell), "v_strict")["calibration_recommended"] is True
    assert _cell_row(R.cell({"cell": "c", "calibration": _sel(method="raw")}), "v_strict")["calibration_recommended"] is False
