"""scripts/mutation_check.py's mutants: which operators apply where, and that each mutant changes exactly one thing."""

from __future__ import annotations

import ast
import functools
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SOURCE = '''
"""Module docstring 1 < 2."""
__all__ = ["f", "g"]


def f(x: int = 3) -> bool:
    """Docstring."""
    log.warning("a %s", x + 1)
    return x < 2 and not x


def g(a, b):
    key = [a, b]
    return -a * b, f"{a - b}", key
'''


@functools.lru_cache(maxsize=1)
def _script():
    spec = importlib.util.spec_from_file_location("mutation_check", ROOT / "scripts" / "mutation_check.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _target(mc, functions=()):
    return mc.Target("t", "x.py", ("tests",), functions)


def test_operators_and_what_is_never_mutated():
    mc = _script()
    got = [(m.function, m.kind, m.original, m.mutated) for m in mc.enumerate_mutants(_target(mc), SOURCE)]
    assert got == [
        ("f", "number", "3", "4"),                       # the default argument
        ("f", "boolean", "and", "or"),
        ("f", "compare", "<", "<="),
        ("f", "number", "2", "3"),
        ("f", "unary", "not", "(dropped)"),
        ("g", "drop element", "a", "(dropped)"),
        ("g", "drop element", "b", "(dropped)"),
        ("g", "arithmetic", "*", "/"),                   # -a * b: the product, and the minus
        ("g", "unary", "-x", "(dropped)"),
    ]  # not: docstrings, __all__, the log call's arguments, the f-string


def test_each_mutant_changes_one_thing_and_functions_limit_the_scope():
    mc = _script()
    tree = ast.parse(SOURCE)
    base = ast.unparse(tree)
    for m in mc.enumerate_mutants(_target(mc), SOURCE):
        new = ast.unparse(mc.apply_mutation(tree, m.index))
        assert new != base and compile(new, "x.py", "exec")
        assert ast.unparse(tree) == base  # the tree itself is not touched
    only_g = mc.enumerate_mutants(_target(mc, ("g",)), SOURCE)
    assert {m.function for m in only_g} == {"g"} and len(only_g) == 4
    src = ast.unparse(mc.apply_mutation(tree, only_g[0].index, ("g",)))
    assert "key = [b]" in src


def test_sample_is_seeded_and_in_source_order():
    mc = _script()
    ms = mc.enumerate_mutants(_target(mc), SOURCE)
    a, b = mc.choose(ms, 4, seed=1), mc.choose(ms, 4, seed=1)
    assert a == b and len(a) == 4 and [m.index for m in a] == sorted(m.index for m in a)
    assert mc.choose(ms, 0, seed=1) == ms


def test_every_target_exists_and_names_real_tests():
    mc = _script()
    for t in mc.TARGETS:
        src = (ROOT / t.path).read_text(encoding="utf-8")
        names = {n.name for n in ast.walk(ast.parse(src)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assert set(t.functions) <= names, t.name
        assert mc.enumerate_mutants(t, src), t.name
        for test in t.tests:
            path, _, node = test.partition("::")
            assert (ROOT / path).is_file(), test
            if node:
                assert f"def {node}(" in (ROOT / path).read_text(encoding="utf-8"), test
