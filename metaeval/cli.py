"""The ``metaeval`` command: parse arguments and hand over to one command module; nothing else.

Each subcommand lives in ``metaeval/commands/<name>.py`` and exposes ``add_parser(subparsers)`` (building its
parser with argparse only, so ``metaeval --help`` stays fast) and ``run(args) -> int``.  Heavy libraries are
imported inside ``run``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import sys

#: subcommand name -> module.  A module that is not present is simply not offered.
COMMANDS: dict[str, str] = {
    "score": "metaeval.commands.score",
    "analyze": "metaeval.commands.analyze",
    "compare": "metaeval.commands.compare",
    "calibrate": "metaeval.commands.calibrate",
    "simulate": "metaeval.commands.simulate",
    "judge": "metaeval.commands.judge",
    "sweep": "metaeval.commands.sweep",
    "assess": "metaeval.commands.assess",
    "report": "metaeval.commands.report",
    "data": "metaeval.commands.data",
    "bench": "metaeval.commands.bench",
    "probe": "metaeval.commands.probe",
    "plan": "metaeval.commands.plan",
    "create": "metaeval.commands.create",
    "assign": "metaeval.commands.assign",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="metaeval",
        description="How far can you trust an LLM nugget judge? Score, meta-evaluate, calibrate and report.",
    )
    from metaeval.version import __version__

    parser.add_argument("--version", action="version", version=f"metaeval {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    parser.add_argument("-q", "--quiet", action="store_true", help="only errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in COMMANDS.items():
        if importlib.util.find_spec(module) is None:
            continue
        importlib.import_module(module).add_parser(sub)
    for cmd in sub.choices.values():  # -v / -q work after the command too (metaeval score -q ...)
        _add_log_flags(cmd)
    return parser


def _add_log_flags(p: argparse.ArgumentParser) -> None:
    known = {o for a in p._actions for o in a.option_strings}
    if "-v" not in known and "--verbose" not in known:
        p.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help="more logging (-vv for debug)")
    if "-q" not in known and "--quiet" not in known:
        p.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="only errors (no progress lines)")
    sub = getattr(p, "_subparsers", None)
    for action in (sub._group_actions if sub is not None else []):
        for child in getattr(action, "choices", {}).values():
            _add_log_flags(child)


def main(argv: list[str] | None = None, command_process: bool = False) -> int:
    """Run one ``metaeval`` command (``argv``: its arguments; None: ``sys.argv[1:]``); returns its exit status.
    ``command_process``: this process is the ``metaeval`` command itself (:func:`entry`), whose main module is
    safe for worker processes to import, so a command may start helper processes that import it (the sweep's
    drawing server); a program calling ``main`` in its own process leaves it False."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "accepts_overrides", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.overrides = extra
    args.command_process = command_process
    level = logging.ERROR if args.quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from metaeval.errors import MetaevalError
    from metaeval.pipeline.signals import EXIT_TERMINATED, install_sigterm, terminated

    install_sigterm()  # SIGTERM stops a run like Ctrl-C: finished jobs kept, one line, exit 143
    from metaeval.workflow import progress

    quiet_before, progress.QUIET = progress.QUIET, bool(args.quiet)  # -q: no progress bars or stage lines either,
    # for this call only (restored below: main() may run again in this process, from tests or a notebook)
    try:
        return int(args.func(args) or 0)
    except MetaevalError as exc:
        print(f"metaeval {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if terminated():  # SIGTERM, routed through the Ctrl-C path (metaeval.pipeline.signals)
            print(f"metaeval {args.command}: terminated (SIGTERM); finished jobs are kept, a rerun resumes", file=sys.stderr)
            return EXIT_TERMINATED
        print(f"metaeval {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `metaeval score ... | head`: the reader left; no traceback, nothing more to print
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout at exit: point it somewhere harmless
        return 141  # 128 + SIGPIPE, as a shell reports a reader that went away
    except OSError as exc:  # disk full, a read-only folder, a name too long...: one line naming path and cause
        from metaeval.io.outputs import os_error_line

        print(f"metaeval {args.command}: error: {os_error_line(exc)}", file=sys.stderr)
        return 2
    finally:
        progress.QUIET = quiet_before


def entry() -> None:
    """The ``metaeval`` console command: :func:`main`, then :func:`metaeval.quick_exit.exit_quickly` (the process
    ends without freeing its objects one by one; atexit handlers, logging and open files are seen to first), with
    what the command's own process sets for itself (:mod:`metaeval.process_policy`: the garbage collector, numpy's
    huge pages)."""
    from metaeval.process_policy import for_command

    for_command()
    rc = main(command_process=True)
    from metaeval.quick_exit import exit_quickly

    exit_quickly(rc)


if __name__ == "__main__":  # pragma: no cover
    entry()
