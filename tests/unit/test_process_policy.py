"""``metaeval.process_policy``: what the ``metaeval`` command's own process sets for itself (the collector's
thresholds and freezes, numpy's huge-page advice), and nothing anywhere else.  Each case runs in a fresh
interpreter: the settings are process-wide."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from metaeval.process_policy import huge_pages_stall


def _run(code: str, **env: str) -> list[str]:
    import os

    full = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"} | env
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


def test_the_library_keeps_the_interpreters_settings():
    out = _run("""
        import gc
        from metaeval import process_policy
        before = gc.get_threshold()
        process_policy.settle()  # not the command's process: nothing
        print(gc.get_freeze_count(), gc.get_threshold() == before, process_policy.enabled())
    """)
    assert out == ["0", "True", "False"]


def test_the_commands_process_raises_the_young_threshold_and_freezes_at_each_phase():
    out = _run("""
        import gc
        from metaeval import process_policy
        process_policy.for_command()
        print(*gc.get_threshold())
        keep = [[i] for i in range(1000)]
        process_policy.settle()
        print(gc.get_freeze_count() >= 1000, process_policy.enabled())
    """)
    import gc

    assert out[0] == str(10_000) and out[1:3] == [str(t) for t in gc.get_threshold()[1:]]
    assert out[3:] == ["True", "True"]


def test_numpys_huge_page_advice_is_switched_off_only_where_it_stalls_and_a_users_choice_stands():
    code = """
        import os, sys
        from metaeval import process_policy
        process_policy.for_command()
        import numpy
        print(os.environ.get("NUMPY_MADVISE_HUGEPAGE", "unset"), process_policy.huge_pages_stall())
    """
    out = _run(code)
    assert out == (["0", "True"] if huge_pages_stall() else ["unset", "False"])
    assert _run(code, NUMPY_MADVISE_HUGEPAGE="1")[0] == "1"  # set by the user: kept


def test_the_metaeval_command_applies_it_before_main_runs():
    out = _run("""
        import gc, os, sys
        import metaeval.cli as cli
        def fake_main(command_process=False):
            print(gc.get_threshold()[0], command_process, "numpy" in sys.modules)
            return 0
        cli.main = fake_main
        cli.entry()
    """)
    assert out == ["10000", "True", "False"]  # and numpy not imported yet, so its switch is read


@pytest.mark.parametrize("text, stalls", [
    ("always defer defer+madvise [madvise] never\n", True),
    ("[always] defer defer+madvise madvise never\n", True),
    ("always defer [defer+madvise] madvise never\n", True),
    ("always [defer] defer+madvise madvise never\n", False),
    ("always defer defer+madvise madvise [never]\n", False),
    ("no brackets here\n", False),
    ("", False),
])
def test_the_kernels_defrag_setting_is_read_from_its_bracketed_word(tmp_path, text, stalls):
    p = tmp_path / "defrag"
    p.write_text(text, encoding="ascii")
    assert huge_pages_stall(str(p)) is stalls


def test_an_unreadable_defrag_setting_changes_nothing(tmp_path):
    assert huge_pages_stall(str(tmp_path / "absent")) is False
    (tmp_path / "bin").write_bytes(b"\xff\xfe[")
    assert huge_pages_stall(str(tmp_path / "bin")) is False


def test_a_sweep_settles_as_judging_starts_and_again_as_the_study_starts(tmp_path, monkeypatch):
    from metaeval import cli, process_policy

    calls: list[str] = []
    monkeypatch.setattr(process_policy, "settle", lambda: calls.append(sys._getframe(1).f_code.co_name))
    rc = cli.main(["sweep", "--no-progress", f"results_dir={tmp_path}", "name=t", "grid=single", "judge=lexical",
                   "strategy=human_auto", "calibration.enabled=false", "analysis.bootstrap=0", "runtime=serial",
                   "++report.enabled=false"])
    assert rc in (0, 1), rc  # 1: the verdict may fail the demo's thresholds
    assert calls == ["_run_stages", "run_study"]
