"""SIGTERM handling in-process (``metaeval.pipeline.signals``), for the timing a subprocess test hits only by chance:
the signal arriving while a task is running (not while the loop waits in ``select``)."""

from __future__ import annotations

import asyncio
import signal

import pytest

from metaeval.pipeline import signals


@pytest.fixture
def sigint_ignored_sigterm_installed():
    old_int, old_term, old_state = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), dict(signals._state)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as under nohup or a script's '&'
    assert signals.install_sigterm()
    yield
    signal.signal(signal.SIGINT, old_int)
    signal.signal(signal.SIGTERM, old_term)
    signals._state.update(old_state)


def test_sigterm_inside_a_task_step_with_sigint_ignored_cancels_tasks_instead_of_killing_one(
        sigint_ignored_sigterm_installed):
    seen: dict[str, asyncio.Task] = {}
    errors: list[dict] = []

    async def victim():
        signal.raise_signal(signal.SIGTERM)  # the handler runs here, inside this task's step
        await asyncio.sleep(30)

    async def main():
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: errors.append(ctx))
        seen["victim"] = asyncio.create_task(victim())
        seen["other"] = asyncio.create_task(asyncio.sleep(30))
        await asyncio.gather(seen["victim"], seen["other"])

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(main())
    assert signals.terminated()
    assert seen["victim"].cancelled() and seen["other"].cancelled()  # not finished with KeyboardInterrupt
    assert errors == []


def test_sigterm_outside_a_loop_with_sigint_ignored_raises_keyboardinterrupt(sigint_ignored_sigterm_installed):
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGTERM)
        for _ in range(1000):  # the handler runs at the next bytecode boundary
            pass
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN and signals.terminated()


def test_a_forked_child_terminated_before_resetting_the_handler_dies_of_sigterm_quietly():
    """The race of ``Pool.terminate`` right after a fork: the child still has the parent's handler.  It must end as
    SIGTERM's default does (killed by signal 15, nothing on stderr), not raise KeyboardInterrupt with a traceback."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import os, signal, time
        from metaeval.pipeline import signals
        assert signals.install_sigterm()
        pid = os.fork()
        if pid == 0:
            os.kill(os.getpid(), signal.SIGTERM)  # the inherited handler runs here, in the child
            for _ in range(100):
                time.sleep(0.05)
            os._exit(0)  # not reached when SIGTERM ends the child
        _, status = os.waitpid(pid, 0)
        print(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, signals.terminated())
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "False"]  # the child killed by SIGTERM; the parent not marked terminated
    assert "Traceback" not in res.stderr and "KeyboardInterrupt" not in res.stderr, res.stderr
