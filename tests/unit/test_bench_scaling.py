"""benchmarks.bench_scaling's growth exponent: the slope of log y on log x (hand-computed cases)."""

import math

import pytest


def test_growth_exponent_of_power_laws():
    from benchmarks.bench_scaling import growth_exponent

    assert growth_exponent([1, 2, 4, 8], [3, 6, 12, 24]) == pytest.approx(1.0)
    assert growth_exponent([1, 2, 4], [1, 4, 16]) == pytest.approx(2.0)
    assert growth_exponent([1, 4, 16, 64], [5, 5, 5, 5]) == pytest.approx(0.0, abs=1e-12)
    # least squares through (0, 0), (log 2, log 3), (log 4, log 3): slope = sum(x y~) / sum(x~^2) by hand
    x = [0.0, math.log(2), math.log(4)]
    y = [0.0, math.log(3), math.log(3)]
    mx, my = sum(x) / 3, sum(y) / 3
    slope = sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum((a - mx) ** 2 for a in x)
    assert growth_exponent([1, 2, 4], [1, 3, 3]) == pytest.approx(slope)


def test_growth_exponent_needs_two_positive_points():
    from benchmarks.bench_scaling import growth_exponent

    assert growth_exponent([1], [2.0]) is None
    assert growth_exponent([1, 2], [0.0, 3.0]) is None


def test_bench_grid_runs_end_to_end_on_a_tiny_track(tmp_path, capsys):
    """bench_grid reads the typed summary at its end (it crashed there twice after the results records changed)."""
    import json

    from benchmarks.bench_grid import main

    out = tmp_path / "grid.json"
    assert main(["--cells", "2", "--topics", "12", "--runs", "4", "--nuggets", "3", "--labelled", "10",
                 "--bootstrap", "20", "--workers", "1", "--json", str(out)]) == 0
    fig = json.loads(out.read_text())
    assert fig["cells"] == 2 and fig["labels"] == 12 * 4 * 3 and set(fig["recommendations"]) == {
        "j0__v1__human_auto", "j0__v1__auto_auto"}
    assert fig["study_cpu_s"] > 0 and [s["step"] for s in fig["steps"]][0] == "cell files"
