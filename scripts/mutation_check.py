#!/usr/bin/env python
"""Mutation check: plant one small bug at a time in the statistics, calibration-decision, job-key and verdict
modules, run that module's own tests, and list every mutant the tests let through ("survivors").

A mutant is killed when its tests fail (or error, or hang past ``--timeout``), and survives when they pass.  The
operators are the bugs a reviewer misses: a comparison moved by one (``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==``
<-> ``!=``), an arithmetic sign or operator swapped (``+`` <-> ``-``, ``*`` <-> ``/``), a number changed (an int
``n`` -> ``n + 1``, a float ``x`` -> ``2x`` or ``0.5`` for 0), ``and`` <-> ``or``, a ``not`` dropped, a unary
minus dropped, and one element dropped from a list or set literal of two or more items (a field missed from a
key: ``content_hash([...])``, the ``ignored`` fields of ``judge_identity``).  Docstrings, log and error text, ``__all__``
and type annotations are not mutated.

Each module names the functions mutated (empty: the whole module) and the tests run for it (``-n 0 -x``: one
process, stop at the first failure).  Mutants are enumerated in source order; with more than ``--max-per-module``
a seeded sample is taken, so a run is bounded and repeatable (same seed, same mutants).  The module is rewritten
in place (``ast.unparse`` of the mutated tree, bytecode off) and restored after every mutant, also on Ctrl-C.
Each mutant's tests run in a forked child of this process, which has numpy/pandas/scipy/pytest imported but not
metaeval (so the child imports the mutated module afresh): the interpreter start-up is paid once, not per mutant.

    .venv/bin/python scripts/mutation_check.py                       # every module, <= 15 mutants each (seed 35)
    .venv/bin/python scripts/mutation_check.py --module verdict --max-per-module 0   # one module, every mutant
    .venv/bin/python scripts/mutation_check.py --list                # the mutants only, nothing run

Not part of either test tier: it runs the targeted tests once per mutant (minutes per module on two cores).
Survivors of the last run, each explained, are in docs/development.md ("Mutation check").
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    name: str
    path: str
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()  # empty: every function of the module


TARGETS: tuple[Target, ...] = (
    Target("kendall", "metaeval/analysis/kendall.py",
           ("tests/unit/test_analysis_kendall.py", "tests/unit/test_analysis_levels.py", "tests/unit/test_mutation_survivors.py")),
    Target("resample", "metaeval/analysis/resample.py",
           ("tests/unit/test_analysis_resample.py", "tests/unit/test_analysis_bootstrap.py",
            "tests/unit/test_planted_bugs.py::test_bca_counts_replicates_tied_with_the_estimate_as_half")),
    Target("levels", "metaeval/analysis/levels.py",
           ("tests/unit/test_analysis_levels.py", "tests/unit/test_mutation_audit.py", "tests/unit/test_mutation_survivors.py")),
    Target("pooled", "metaeval/analysis/pooled.py",
           ("tests/unit/test_analysis_levels.py", "tests/unit/test_analysis_kendall.py")),
    Target("procedure", "metaeval/study/calibration_workflow/procedure.py",
           ("tests/unit/test_calibration_decision.py", "tests/unit/test_calibration_evaluate.py",
            "tests/unit/test_calibration_procedure.py")),
    Target("selection", "metaeval/study/calibration_workflow/selection.py",
           ("tests/unit/test_calibration_decision.py", "tests/unit/test_calibration_evaluate.py",
            "tests/unit/test_calibration_procedure.py")),
    Target("stages_keys", "metaeval/pipeline/stages.py",
           ("tests/unit/test_pipeline_keys.py", "tests/unit/test_planted_bugs.py::test_importance_job_key_depends_on_importance_batch"),
           ("relevance_job", "create_job", "importance_job", "assign_job")),
    Target("specs_keys", "metaeval/pipeline/specs.py", ("tests/unit/test_pipeline_keys.py", "tests/unit/test_job_keys_stable.py"),
           ("key", "as_dict", "judge_identity")),
    Target("verdict", "metaeval/report/verdict.py",
           ("tests/unit/test_verdict_thresholds.py", "tests/unit/test_report_parts.py",
            "tests/unit/test_planted_bugs.py::test_verdict_strictness_check_uses_the_absolute_index", "tests/unit/test_mutation_survivors.py"),
           ("_tau", "_labels", "_abs_strictness", "load_thresholds", "evaluate", "reasons", "headline")),
)

CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
BIN_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Add: "+",
          ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.And: "and", ast.Or: "or"}
#: calls whose arguments are messages, not logic
TEXT_CALLS = {"debug", "info", "warning", "error", "exception", "ConfigError", "FormatError", "ValueError",
              "TypeError", "KeyError", "AssertionError", "RuntimeError"}


@dataclass(frozen=True)
class Mutant:
    target: str
    index: int       # position among the module's mutation points (source order)
    line: int
    function: str
    kind: str
    original: str
    mutated: str


def _skip_ids(tree: ast.AST) -> set[int]:
    """Nodes never mutated: docstrings, annotations, ``__all__``, f-strings, arguments of logging/exception calls."""
    skip: set[int] = set()

    def mark(node):
        for n in ast.walk(node):
            skip.add(id(n))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                mark(body[0])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.returns is not None:
                mark(node.returns)
            for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                if a.annotation is not None:
                    mark(a.annotation)
        if isinstance(node, ast.AnnAssign):
            mark(node.annotation)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            mark(node)  # the export list: names, not behaviour
        if isinstance(node, ast.JoinedStr):
            mark(node)
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in TEXT_CALLS:
                mark(node)
    return skip


def _scopes(tree: ast.AST) -> dict[int, str]:
    """Node id -> name of the innermost enclosing function ('' at module level)."""
    out: dict[int, str] = {}

    def visit(node, name):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = node.name
        out[id(node)] = name
        for child in ast.iter_child_nodes(node):
            visit(child, name)

    visit(tree, "")
    return out


def mutation_points(tree: ast.AST, functions: tuple[str, ...] = ()) -> list[tuple[ast.AST, str, str, str, object]]:
    """(node, kind, original, mutated, how) for every mutation of ``tree``, in source order; ``how`` says what
    :func:`apply_mutation` changes."""
    skip, scope = _skip_ids(tree), _scopes(tree)
    points = []
    for node in ast.walk(tree):
        if id(node) in skip or not hasattr(node, "lineno"):
            continue
        fn = scope.get(id(node), "")
        if functions and fn not in functions:
            continue
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in CMP_SWAP:
                    new = CMP_SWAP[type(op)]
                    points.append((node, "compare", SYMBOL[type(op)], SYMBOL[new], ("op", i, new)))
        elif isinstance(node, ast.BinOp) and type(node.op) in BIN_SWAP:
            if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
                continue  # string formatting with %
            new = BIN_SWAP[type(node.op)]
            points.append((node, "arithmetic", SYMBOL[type(node.op)], SYMBOL[new], ("binop", new)))
        elif isinstance(node, ast.BoolOp):
            new = ast.Or if isinstance(node.op, ast.And) else ast.And
            points.append((node, "boolean", SYMBOL[type(node.op)], SYMBOL[new], ("boolop", new)))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            points.append((node, "unary", "not" if isinstance(node.op, ast.Not) else "-x", "(dropped)", ("unary",)))
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float) and not isinstance(node.value, bool):
            v = node.value
            new = v + 1 if isinstance(v, int) else (0.5 if v == 0 else 2 * v)
            points.append((node, "number", repr(v), repr(new), ("const", new)))
        elif isinstance(node, (ast.List, ast.Set)) and len(node.elts) >= 2 \
                and not isinstance(getattr(node, "ctx", None), ast.Store):
            for i, e in enumerate(node.elts):
                points.append((node, "drop element", ast.unparse(e)[:60], "(dropped)", ("drop", i)))
    points.sort(key=lambda p: (p[0].lineno, p[0].col_offset, p[1], str(p[4])))
    return points


def apply_mutation(tree: ast.AST, index: int, functions: tuple[str, ...] = ()) -> ast.AST:
    """A copy of ``tree`` with mutation ``index`` of :func:`mutation_points` applied."""
    new = copy.deepcopy(tree)
    node, _, _, _, how = mutation_points(new, functions)[index]
    if how[0] == "op":
        node.ops[how[1]] = how[2]()
    elif how[0] == "binop":
        node.op = how[1]()
    elif how[0] == "boolop":
        node.op = how[1]()
    elif how[0] == "const":
        node.value = how[1]
    elif how[0] == "drop":
        del node.elts[how[1]]
    elif how[0] == "unary":
        _replace(new, node, node.operand)
    return ast.fix_missing_locations(new)


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for i, v in enumerate(value):
                    if v is old:
                        value[i] = new
                        return
    raise AssertionError("node not found")


def enumerate_mutants(target: Target, source: str) -> list[Mutant]:
    tree = ast.parse(source)
    scope = _scopes(tree)
    return [Mutant(target.name, i, node.lineno, scope.get(id(node), ""), kind, orig, mut)
            for i, (node, kind, orig, mut, _) in enumerate(mutation_points(tree, target.functions))]


def choose(mutants: list[Mutant], limit: int, seed: int) -> list[Mutant]:
    """All mutants, or a seeded sample of ``limit`` (in source order)."""
    if limit <= 0 or len(mutants) <= limit:
        return mutants
    picked = random.Random(seed).sample(range(len(mutants)), limit)
    return [mutants[i] for i in sorted(picked)]


#: imported once by the parent and inherited by every forked test run (never ``metaeval``: each child imports the
#: mutated module afresh)
PRELOAD = ("numpy", "pandas", "scipy.stats", "scipy.special", "scipy.optimize", "statsmodels.api", "yaml", "pytest",
           "xdist", "pytest_timeout")


def preload() -> None:
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    assert not any(m == "metaeval" or m.startswith("metaeval.") for m in sys.modules), "metaeval preloaded"


def run_tests(tests: tuple[str, ...], timeout: float, fork: bool = True) -> tuple[str, float]:
    """'passed', 'failed' (a test failed), 'error' (collection/usage error), 'timeout' or 'exit N', and the seconds.  ``fork``: a forked child of this process (which
    has the heavy libraries imported, not metaeval) runs ``pytest.main``; else a fresh interpreter."""
    args = ["-q", "-x", "-n", "0", "-p", "no:cacheprovider", "-m", "not heavy", *tests]
    t0 = time.perf_counter()
    if not fork:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            r = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, env=env, capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout", time.perf_counter() - t0
        return {0: "passed", 1: "failed", 2: "error"}.get(r.returncode, f"exit {r.returncode}"), time.perf_counter() - t0
    pid = os.fork()
    if pid == 0:  # child: quiet, fresh metaeval, exit with pytest's code
        rc = 3
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.chdir(ROOT)
            sys.dont_write_bytecode = True
            sys.path.insert(0, str(ROOT))
            import pytest

            rc = int(pytest.main(args))
        finally:
            os._exit(rc)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return {0: "passed", 1: "failed", 2: "error"}.get(code, f"exit {code}"), time.perf_counter() - t0
        if time.perf_counter() - t0 > timeout:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", time.perf_counter() - t0
        time.sleep(0.05)


def _drop_bytecode(path: Path) -> None:
    for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        pyc.unlink(missing_ok=True)


def check_target(target: Target, limit: int, seed: int, timeout_factor: float, log, fork: bool = True) -> dict:
    path = ROOT / target.path
    original = path.read_text(encoding="utf-8")
    tree = ast.parse(original)
    every = enumerate_mutants(target, original)
    picked = choose(every, limit, seed)
    status, base_s = run_tests(target.tests, timeout=900, fork=fork)
    if status != "passed":
        raise SystemExit(f"{target.name}: its tests do not pass on the unmutated code ({status}); fix that first")
    log(f"{target.name}: {len(picked)} of {len(every)} mutants; tests pass unmutated in {base_s:.1f} s")
    results = []

    def restore(*_):
        path.write_text(original, encoding="utf-8")
        _drop_bytecode(path)

    old_int = signal.signal(signal.SIGINT, lambda *a: (restore(), sys.exit(130)))
    old_term = signal.signal(signal.SIGTERM, lambda *a: (restore(), sys.exit(143)))
    try:
        for m in picked:
            path.write_text(ast.unparse(apply_mutation(tree, m.index, target.functions)) + "\n", encoding="utf-8")
            _drop_bytecode(path)
            outcome, secs = run_tests(target.tests, timeout=max(60.0, timeout_factor * base_s), fork=fork)
            # a test failed: killed; collection/import error (pytest exit 2): killed, said so; a hang: killed (timeout);
            # anything else (pytest's internal error, a crash) is not counted as a kill
            state = {"failed": "killed", "error": "killed (error)", "timeout": "killed (timeout)",
                     "passed": "SURVIVED"}.get(outcome, f"not run ({outcome})")
            results.append({**asdict(m), "result": state, "seconds": round(secs, 1)})
            log(f"  {state:16s} {target.path}:{m.line} {m.function}: {m.kind} {m.original} -> {m.mutated}")
            restore()
    finally:
        restore()
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
    assert path.read_text(encoding="utf-8") == original
    killed = sum(r["result"].startswith("killed") for r in results)
    return {"target": target.name, "path": target.path, "tests": list(target.tests), "functions": list(target.functions),
            "mutants_total": len(every), "mutants_run": len(results), "killed": killed, "baseline_s": round(base_s, 1),
            "results": results}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", action="append", choices=[t.name for t in TARGETS],
                    help="only these targets (repeatable; default: all)")
    ap.add_argument("--max-per-module", type=int, default=15, help="seeded sample size per module (0: every mutant)")
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--timeout-factor", type=float, default=5.0, help="a mutant's tests time out at this x baseline")
    ap.add_argument("--json", type=Path, help="write every mutant's result here")
    ap.add_argument("--list", action="store_true", help="list the mutants that would run, run nothing")
    ap.add_argument("--no-fork", action="store_true", help="run each mutant's tests in a fresh interpreter (slower)")
    args = ap.parse_args(argv)
    targets = [t for t in TARGETS if not args.module or t.name in args.module]
    log = lambda s: print(s, flush=True)  # noqa: E731 - a script's output
    if args.list:
        for t in targets:
            every = enumerate_mutants(t, (ROOT / t.path).read_text(encoding="utf-8"))
            for m in choose(every, args.max_per_module, args.seed):
                log(f"{t.path}:{m.line} {m.function}: {m.kind} {m.original} -> {m.mutated}")
        return 0
    t0 = time.perf_counter()
    fork = not args.no_fork and hasattr(os, "fork")
    if fork:
        preload()
    reports = [check_target(t, args.max_per_module, args.seed, args.timeout_factor, log, fork) for t in targets]
    log("\nmodule         killed / run   (mutation points in scope)")
    for r in reports:
        log(f"{r['target']:14s} {r['killed']:4d} / {r['mutants_run']:<4d}   ({r['mutants_total']})")
    k, n = sum(r["killed"] for r in reports), sum(r["mutants_run"] for r in reports)
    log(f"{'total':14s} {k:4d} / {n:<4d}   in {time.perf_counter() - t0:.0f} s")
    survivors = [x for r in reports for x in r["results"] if x["result"] == "SURVIVED"]
    odd = [x for r in reports for x in r["results"] if x["result"].startswith("not run")]
    if odd:
        log(f"{len(odd)} mutant(s) not run (pytest crashed): " + "; ".join(f"{x['target']}:{x['line']}" for x in odd))
    if survivors:
        log("\nsurvivors:")
        for s in survivors:
            log(f"  {TARGETS_BY_NAME[s['target']].path}:{s['line']} {s['function']}: {s['kind']} {s['original']} -> {s['mutated']}")
    if args.json:
        args.json.write_text(json.dumps({"seed": args.seed, "max_per_module": args.max_per_module, "targets": reports},
                                        indent=1), encoding="utf-8")
    return 1 if survivors else 0


TARGETS_BY_NAME = {t.name: t for t in TARGETS}

if __name__ == "__main__":
    sys.exit(main())
