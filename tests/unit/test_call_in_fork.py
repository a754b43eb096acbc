"""``metaeval.forked.call_in_fork``: a function computed in a forked child while the caller prepares something else,
with the plain call's result and errors whatever happens to the child; and the sweep command composing that way."""

from __future__ import annotations

import os
import sys

import pytest

from metaeval import forked
from metaeval.errors import ConfigError

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is Linux-only here")


@LINUX
def test_the_result_comes_from_the_child_while_the_caller_does_its_own_work():
    parent, seen = os.getpid(), []
    pid, during = forked.call_in_fork(lambda: (os.getpid(), [1, 2.5, "x"]), meanwhile=lambda: seen.append(os.getpid()))
    assert pid != parent  # computed in the child
    assert during == [1, 2.5, "x"]
    assert seen == [parent]  # meanwhile ran here


@LINUX
def test_a_metaeval_error_is_raised_here_with_its_message():
    def bad():
        raise ConfigError("dataset=nope: no such dataset")

    with pytest.raises(ConfigError, match=r"^dataset=nope: no such dataset$"):
        forked.call_in_fork(bad)


@LINUX
def test_any_other_failure_is_computed_again_here(tmp_path):
    """Another exception, a child that dies without answering, an answer that does not pickle: the function runs
    again in this process, so the caller sees exactly what a plain call gives (a bug's traceback is this
    process's own)."""
    calls = tmp_path / "calls"

    def count() -> int:
        with calls.open("a") as f:
            f.write(f"{os.getpid()}\n")
        return len(calls.read_text().split())

    def fails_in_the_child_only():
        n = count()
        if n == 1:
            raise KeyError("only the first call fails")
        return n

    assert forked.call_in_fork(fails_in_the_child_only) == 2
    pids = calls.read_text().split()
    assert pids[0] != str(os.getpid()) and pids[1] == str(os.getpid())

    calls.unlink()

    def dies():
        if count() == 1:
            os._exit(3)  # no answer at all
        return "here"

    assert forked.call_in_fork(dies) == "here"

    calls.unlink()

    def unpicklable():
        count()
        return lambda: None  # a result that cannot be sent back

    assert callable(forked.call_in_fork(unpicklable))
    assert len(calls.read_text().split()) == 2

    def raises_in_both():
        raise KeyError("a bug")

    with pytest.raises(KeyError, match="a bug"):
        forked.call_in_fork(raises_in_both)


@LINUX
def test_an_error_that_does_not_pickle_to_itself_is_computed_again_here():
    class Odd(ConfigError):
        def __init__(self, what: str, where: int):
            super().__init__(f"{what} at {where}")

    with pytest.raises(Odd, match="x at 3"):
        forked.call_in_fork(lambda: (_ for _ in ()).throw(Odd("x", 3)))


def test_meanwhile_is_best_effort_and_without_fork_it_is_the_plain_call(monkeypatch):
    def broken():
        raise ImportError("no such module")

    assert forked.call_in_fork(lambda: 41 + 1, meanwhile=broken) == 42
    monkeypatch.setattr(forked, "can_fork", lambda: False)
    order = []
    assert forked.call_in_fork(lambda: order.append("fn") or os.getpid(), meanwhile=lambda: order.append("first")) \
        == os.getpid()
    assert order == ["first", "fn"]


@LINUX
def test_the_sweep_command_composes_in_a_child_with_the_plain_calls_settings_and_errors(monkeypatch, tmp_path):
    """As the ``metaeval`` command, ``sweep`` composes in a forked child (``commands.sweep._composed``) while it
    imports what comes next; the settings are the in-process composition's, and a bad override is the same one-line
    error."""
    import argparse

    from metaeval.commands import sweep as cmd
    from metaeval.workflow.compose import compose_sweep

    ov = [f"results_dir={tmp_path}", "dataset=demo", "grid=single"]
    args = argparse.Namespace(config_dir=None, command_process=True)
    forks = []
    real = forked.call_in_fork
    monkeypatch.setattr(forked, "call_in_fork", lambda fn, meanwhile=None: forks.append(1) or real(fn, meanwhile))
    settings, cells = cmd._composed(ov, args)
    plain_settings, plain_cells = compose_sweep(ov)
    assert forks == [1]
    assert settings.document == plain_settings.document
    assert [c.id for c in cells] == [c.id for c in plain_cells]
    with pytest.raises(ConfigError) as forked_error:
        cmd._composed(["dataset=no_such_dataset"], args)
    with pytest.raises(ConfigError) as plain_error:
        compose_sweep(["dataset=no_such_dataset"])
    assert str(forked_error.value) == str(plain_error.value)
    args.command_process = False  # main() called from another program: the plain call, no fork
    cmd._composed(ov, args)
    assert forks == [1, 1]
