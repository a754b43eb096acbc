"""fork_map: forked workers give the serial loop's results, in order; errors surface; bad worker counts are one line."""

from __future__ import annotations

import os

import numpy as np
import pytest

from metaeval.errors import ConfigError
from metaeval.forked import can_fork, fork_map, resolve_workers


def test_results_in_item_order_and_from_other_processes():
    seen = fork_map(lambda x: (x * x, os.getpid()), range(7), workers=2)
    assert [v for v, _ in seen] == [x * x for x in range(7)]
    if can_fork():
        assert {pid for _, pid in seen} - {os.getpid()}, "no item ran in a worker process"


def test_closures_and_numpy_results_come_back_equal():
    data = np.random.default_rng(3).random((50, 4))
    fn = lambda i: data[i::5].sum(axis=0)  # noqa: E731  (a closure: nothing is pickled on the way in)
    assert all(np.array_equal(a, b) for a, b in zip(fork_map(fn, range(5), 2), [fn(i) for i in range(5)]))


def test_an_error_in_a_worker_is_raised_in_the_caller():
    def boom(x):
        if x == 3:
            raise ConfigError("item 3 is bad")
        return x

    with pytest.raises(ConfigError, match="item 3 is bad"):
        fork_map(boom, range(5), workers=2)


def test_nested_maps_run_serially_inside_a_worker():
    inner = fork_map(lambda x: fork_map(lambda y: (y, os.getpid()), range(3), 2), range(2), 2)
    for row in inner:
        assert len({pid for _, pid in row}) == 1  # a daemonic worker may not fork: its map ran in-process


@pytest.mark.parametrize("bad", [0, -1, "two", 1.5, True, None])
def test_worker_counts(bad):
    assert resolve_workers("auto", 100) >= 1 and resolve_workers(8, 3) == 3 and resolve_workers(1, 10) == 1
    assert resolve_workers("2", 10) == 2  # as the command line gives it
    if bad is None:
        assert resolve_workers(None, 1) == 1
        return
    with pytest.raises(ConfigError, match="workers="):
        resolve_workers(bad, 4)


def test_calibration_workers_setting():
    from metaeval.study.settings import build_study_settings

    assert build_study_settings(calibration={}).calibration.workers == "auto"
    two = build_study_settings(calibration={"workers": 2})
    assert two.calibration.workers == 2
    # a change of workers moves no number, so it does not make the study's reuse key differ
    assert two.key_parts() == build_study_settings(calibration={"workers": 1}).key_parts()
    for bad in (0, "many", 1.5):
        with pytest.raises(ConfigError, match=r"calibration\.workers must be auto or an integer >= 1"):
            build_study_settings(calibration={"workers": bad})


def test_workers_end_quietly_under_a_parent_sigterm_handler(tmp_path):
    """A sweep installs a SIGTERM handler that raises KeyboardInterrupt; the forked workers must not inherit it
    (each would print a traceback when the pool ends): stderr stays empty."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent("""
        import signal
        from metaeval.forked import fork_map

        def on_term(*_):
            raise KeyboardInterrupt
        signal.signal(signal.SIGTERM, on_term)
        print(sum(fork_map(lambda x: x * x, range(6), 2)))
    """), encoding="utf-8")
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "55"
    assert res.stderr == ""
