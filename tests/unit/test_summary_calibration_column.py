"""The sweep table's calibration column names a method only when it is recommended (beats raw out of sample)."""

from metaeval.study.summary import _best_calibration


def _sel(**kw):
    base = {"method": "ppi_pp", "held_out_mae": {"mean": 0.104}, "raw_mae": {"mean": 0.087}, "intervals_by": "ppi_pp"}
    return {"selection": {**base, **kw}}


def test_unstable_or_too_few_topics_is_not_shown_as_a_recommendation():
    got = _best_calibration(_sel(verdict="unstable: methods within noise", beats_raw=False), "v_strict")
    # the errors are called MAEs (not "intervals"); the interval method is named as that, apart from them
    assert got == "raw kept (unstable: methods within noise); MAE raw 0.087, ppi_pp 0.104; intervals by ppi_pp"


def test_a_method_that_beats_raw_is_shown_with_its_error():
    got = _best_calibration(_sel(method="ppi", verdict="use ppi", beats_raw=True, held_out_mae={"mean": 0.066},
                                 raw_mae={"mean": 0.116}), "v_strict")
    assert got == "ppi recommended; MAE raw 0.116 -> 0.066"


def test_raw_kept():
    assert _best_calibration(_sel(method="none"), "v_strict") == "raw kept; MAE raw 0.087"


def test_the_column_says_the_errors_are_held_out_run_maes():
    from metaeval.study.summary import SUMMARY_COLUMNS, summary_markdown

    assert SUMMARY_COLUMNS[-1] == "calibration (held-out run MAE)"
    md = summary_markdown({"cells": [{"cell": "c", "stats": {}, "calibration": _sel(method="none")}]})
    assert "| calibration (held-out run MAE) |" in md and "| raw kept; MAE raw 0.087 |" in md


def test_sweep_result_row_says_whether_the_method_is_recommended():
    from metaeval.api_results import _cell_row

    cell = {"cell": "c", "calibration": _sel(verdict="unstable: methods within noise", beats_raw=False)}
    assert _cell_row(cell, "v_strict")["calibration_recommended"] is False
    cell = {"cell": "c", "calibration": _sel(method="ppi", verdict="use ppi", beats_raw=True)}
    assert _cell_row(cell, "v_strict")["calibration_recommended"] is True
    assert _cell_row({"cell": "c", "calibration": _sel(method="none")}, "v_strict")["calibration_recommended"] is False
