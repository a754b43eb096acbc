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
