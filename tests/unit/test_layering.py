"""The package's layering, enforced by an AST scan of every import (module level and inside functions).

Layers, lowest first (a module may import its own layer and the ones below, never above)::

    core (types, errors, paths, hashing, version, schema, simulation, seeded_uniform, paper, random_streams, forked,
          measures)
      <- io, scoring, layout, data, assess (assessor sheets)
      <- analysis, calibration, planning
      <- judges, prompts, security
      <- pipeline
      <- study
      <- report
      <- workflow (what a command does, for the CLI and the API alike)
      <- commands, cli, api, the package's __init__/__main__, testing

What counts as an import (``module_edges``): ``import a.b``, ``from a import b`` (absolute or relative, at module
level or inside a function), and a *string import*: any string constant naming a module of the package
(``importlib.import_module("metaeval.study.run")``, ``__import__(...)``, a ``"metaeval.judges.llm:LLMJudge"``
registry entry).  Imports under ``if TYPE_CHECKING:`` are not imports at run time and are ignored.

Rules on top of the order (``violations``):

* nothing inside the package imports the package facade (``import metaeval``, ``from metaeval import analyze``):
  the facade is lazy, and one attribute of it reaches ``api`` and with it every layer;
* no import cycles between modules (a strongly connected component of the module graph with more than one
  module, lazy and string imports included; an import of one's own enclosing package, e.g. a registry filling
  itself with ``from metaeval.calibration import methods`` inside ``methods/base.py``, is left out: Python has
  loaded every enclosing package before the module runs, and the package facade is a violation of its own);
* ``report`` renders only: no data, scoring, analysis, calibration, pipeline, judges, prompts or
  ``simulation``, of ``study`` only the results schema it reads (``study.records``), and of ``io`` only the format
  utilities ``io.jsonl``, ``io.atomic`` and ``io.latex`` (never a raw-data reader such as ``io.trec`` or
  ``io.assignments``, nor ``io``'s auto-detecting readers);
* ``judges`` do not import ``calibration``; ``pipeline`` does not import analysis, calibration, study or report;
  ``layout`` imports only core and ``io``;
* the Python API (``api``, ``api_results``) does not import ``commands``: both call the workflow.

The checker itself is tested on a synthetic package with each kind of violation planted (including the four
blind spots of the earlier, per-part checker: facade imports, ``importlib`` strings, the report reaching a raw
reader, the report importing ``simulation``), and ``scripts/import_graph.py`` prints / draws the same graph.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LAYERS: dict[str, int] = {
    "types": 0, "errors": 0, "paths": 0, "hashing": 0, "version": 0, "schema": 0, "simulation": 0,
    "seeded_uniform": 0, "paper": 0, "random_streams": 0, "forked": 0, "quick_exit": 0, "process_policy": 0, "measures": 0, "formatting": 0,
    "io": 1, "scoring": 1, "layout": 1, "data": 1, "assess": 1,
    "analysis": 2, "calibration": 2, "planning": 2,
    "judges": 3, "prompts": 3, "security": 3,
    "pipeline": 4,
    "study": 5,
    "report": 6,
    "workflow": 7,
    "commands": 8, "cli": 8, "api": 8, "api_results": 8, "__init__": 8, "__main__": 8, "testing": 8,
}
#: part -> parts (or dotted sub-modules, relative to the package) it must not import although they lie below it
FORBIDDEN: dict[str, set[str]] = {
    "report": {"data", "scoring", "analysis", "calibration", "pipeline", "judges", "prompts", "simulation"},
    "judges": {"calibration"},
    "pipeline": {"analysis", "calibration", "study", "report"},
    "layout": {"scoring", "data", "analysis", "calibration", "planning"},
    "api": {"commands"},
    "api_results": {"commands"},
}
#: part -> {imported part: the only modules of it allowed}; ``report`` may use io's format utilities, not its
#: raw-data readers (io.trec, io.assignments, io.answers, ... and the auto-detecting ``metaeval.io`` itself)
ONLY: dict[str, dict[str, set[str]]] = {
    "report": {"io": {"io.jsonl", "io.atomic", "io.latex"},
               "study": {"study.records"}},  # the results schema it reads; nothing that computes
}

# Violations on main that colleagues are fixing on their branches right now (issue 22, point 9).  Each entry is a
# violation's key (``path: message``, no line number).  The test passes while they are present and FAILS once an
# entry no longer occurs (test_known_violations_still_occur), so the lead deletes each entry as its fix merges:
KNOWN_UNTIL_MERGE: set[str] = set()  # every violation known when the contract was written is fixed

_MODULE_STRING = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?")


@dataclass(frozen=True)
class Edge:
    """One import: ``src`` module imports ``dst`` module (dotted names; ``dst`` is the package for a facade import)
    at ``path:line``; ``kind`` is ``static``, ``lazy`` (inside a function) or ``string`` (a module named in a
    string constant)."""

    path: str
    line: int
    src: str
    dst: str
    kind: str


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    message: str

    @property
    def key(self) -> str:
        """Stable across edits that move lines: what ``KNOWN_UNTIL_MERGE`` lists."""
        return f"{self.path}: {self.message}" if self.path else self.message

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.path else self.message


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _package_modules(pkg_dir: Path) -> dict[str, Path]:
    """dotted module name -> file, for every module and package of the package at ``pkg_dir``."""
    out = {}
    for f in sorted(pkg_dir.rglob("*.py")):
        parts = list(f.relative_to(pkg_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a module of the package (``metaeval.io.trec.read`` ->
    ``metaeval.io.trec``), or None outside the package."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in modules:
            return ".".join(parts)
        parts.pop()
    return None


def _function_nodes(tree: ast.AST) -> set[int]:
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner.update(id(n) for n in ast.walk(node) if n is not node)
    return inner


def _logger_names(tree: ast.AST) -> set[int]:
    """String constants passed to ``getLogger(...)``: logger names, not imports."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "getLogger":
            out.update(id(a) for a in node.args)
    return out


def module_edges(pkg_dir: Path) -> list[Edge]:
    """Every run-time import between two modules of the package at ``pkg_dir`` (see the module docstring)."""
    package = pkg_dir.name
    modules = _package_modules(pkg_dir)
    edges: list[Edge] = []
    for module, f in modules.items():
        is_pkg = f.name == "__init__.py"
        path = str(f.relative_to(pkg_dir.parent))
        tree = ast.parse(f.read_text(encoding="utf-8"), path)
        skip: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                for sub in node.body:
                    skip.update(id(n) for n in ast.walk(sub))
        inner, loggers = _function_nodes(tree), _logger_names(tree)

        def add(name: str, node: ast.AST, kind: str | None = None) -> None:
            dst = _resolve(name, modules)
            if dst is not None and dst != module:
                edges.append(Edge(path, node.lineno, module, dst, kind or ("lazy" if id(node) in inner else "static")))

        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name, node)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: resolve against this module's package
                    base = module.split(".") if is_pkg else module.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    name = ".".join(base + ([node.module] if node.module else []))
                else:
                    name = node.module or ""
                for alias in node.names:  # `from pkg import sub` imports the module pkg.sub; else pkg itself
                    add(f"{name}.{alias.name}" if f"{name}.{alias.name}" in modules else name, node)
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in loggers
                  and node.value.startswith(package + ".") and _MODULE_STRING.fullmatch(node.value)):
                target = node.value.split(":")[0]
                if target in modules:
                    add(target, node, "string")
    return edges


def _part(module: str) -> str:
    """``metaeval.report.build`` -> ``report``; ``metaeval`` (the facade) -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _relative(module: str) -> str:
    return module.split(".", 1)[1] if "." in module else ""


def _matches(module: str, rule: str) -> bool:
    """Does ``module`` (dotted, with package) fall under ``rule`` (a part or dotted sub-module, without package)?"""
    rel = _relative(module)
    return rel == rule or rel.startswith(rule + ".")


def import_cycles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted; sorted."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if not e.src.startswith(e.dst + "."):  # an enclosing package: loaded first anyway (module docstring)
            graph.setdefault(e.src, set()).add(e.dst)
            graph.setdefault(e.dst, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:  # recursion depth <= number of modules (a few hundred)
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(out)


def violations(edges: list[Edge], layers=LAYERS, forbidden=FORBIDDEN, only=ONLY) -> list[Violation]:
    """Every broken rule (see the module docstring), sorted and without repeats."""
    out: set[Violation] = set()
    for e in edges:
        src, dst = _part(e.src), _part(e.dst)
        if e.dst.count(".") == 0:  # the package itself: its facade
            if e.src.count(".") > 0:
                out.add(Violation(e.path, e.line, f"imports the package facade ({e.dst})"))
            continue
        if src == dst:
            continue
        if src not in layers:
            out.add(Violation(e.path, e.line, f"{src!r} has no layer (add it to LAYERS)"))
        elif dst not in layers:
            out.add(Violation(e.path, e.line, f"imports {dst!r}, which has no layer (add it to LAYERS)"))
        elif layers[dst] > layers[src]:
            out.add(Violation(e.path, e.line, f"{src} (layer {layers[src]}) imports {dst} (layer {layers[dst]}): "
                                              f"upward ({_relative(e.dst)}, {e.kind} import)"))
        elif any(_matches(e.dst, rule) for rule in forbidden.get(src, ())):
            out.add(Violation(e.path, e.line, f"{src} must not import {_relative(e.dst)}"))
        elif dst in only.get(src, {}) and not any(_matches(e.dst, ok) for ok in only[src][dst]):
            allowed = ", ".join(sorted(only[src][dst]))
            out.add(Violation(e.path, e.line, f"{src} must not import {_relative(e.dst)} (of {dst} only {allowed})"))
    for comp in import_cycles(edges):
        out.add(Violation("", 0, "cycle: " + " <-> ".join(comp)))
    return sorted(out, key=lambda v: (v.path, v.message, v.line))


@pytest.fixture(scope="module")
def package_violations() -> list[Violation]:
    """The real package's violations, scanned once for the two tests below."""
    return violations(module_edges(ROOT / "metaeval"))


def test_metaeval_respects_the_layering(package_violations):
    bad = [str(v) for v in package_violations if v.key not in KNOWN_UNTIL_MERGE]
    assert not bad, "\n".join(bad)


def test_known_violations_still_occur(package_violations):
    """An entry of KNOWN_UNTIL_MERGE whose fix has been merged must be deleted, so that it cannot come back."""
    keys = {v.key for v in package_violations}
    stale = sorted(KNOWN_UNTIL_MERGE - keys)
    assert not stale, "fixed now - delete from KNOWN_UNTIL_MERGE in tests/unit/test_layering.py:\n" + "\n".join(stale)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "metaeval"
    for rel, text in files.items():
        p = pkg / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return pkg


CLEAN = {
    "__init__.py": "import importlib\ndef __getattr__(n):\n    return importlib.import_module('metaeval.api')\n",
    "api.py": "from metaeval.study.run import run_study\n",
    "types.py": "import numpy\n",
    "simulation.py": "from metaeval.types import X\n",
    "io/__init__.py": "from metaeval.types import X\n",
    "io/jsonl.py": "",
    "io/trec.py": "from metaeval.io.jsonl import iter_lines\n",
    "scoring.py": "from metaeval import types\nfrom metaeval.io import trec\n",
    "analysis/__init__.py": "",
    "analysis/a.py": "from metaeval.analysis.b import f\n",
    "analysis/b.py": "import logging\nlog = logging.getLogger('metaeval.analysis.a')\n",
    "pipeline/__init__.py": "",
    "pipeline/sweep.py": "from .store import S\nfrom metaeval.judges.base import J\n",
    "pipeline/store.py": "from metaeval.layout import ResultsLayout\n",
    "judges/registry.py": "JUDGES = {'llm': 'metaeval.judges.base:J'}\n",
    "report/build.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from metaeval.scoring import M\n"
                       "from metaeval.layout import L\nfrom metaeval.io.jsonl import to_jsonable\n",
    "layout.py": "from metaeval.io import x\n",
    "study/run.py": "from metaeval.pipeline.sweep import S\n",
    **{f"{part}/__init__.py": "" for part in ("data", "calibration", "judges", "study", "report")},
    "judges/base.py": "",
    "workflow/__init__.py": "",
    "workflow/sweep.py": "from metaeval.study.run import run_study\nfrom metaeval.pipeline.sweep import S\n",
    "workflow/report.py": "from metaeval.report.build import B\n",
    "commands/__init__.py": "",
    "commands/sweep.py": "from metaeval.workflow.sweep import drive_sweep\n",
    "commands/compare.py": "",
}


def test_checker_accepts_a_clean_tree(tmp_path):
    pkg = _tree(tmp_path, CLEAN)
    edges = module_edges(pkg)
    assert violations(edges) == []
    # the clean tree's own lazy/string imports are seen (so that the planted ones below are not caught by luck)
    assert Edge("metaeval/__init__.py", 3, "metaeval", "metaeval.api", "string") in edges
    assert Edge("metaeval/judges/registry.py", 1, "metaeval.judges.registry", "metaeval.judges.base", "string") in edges
    assert not [e for e in edges if e.src == "metaeval.analysis.b"]  # a logger name is not an import


@pytest.mark.parametrize("rel, text, expect", [
    ("io/bad.py", "from metaeval.pipeline.sweep import run\n", "io (layer 1) imports pipeline (layer 4): upward"),
    ("types.py", "def f():\n    import metaeval.report.build\n", "types (layer 0) imports report (layer 6): upward"),
    ("pipeline/bad.py", "from ..study import run_study\n", "pipeline (layer 4) imports study (layer 5): upward"),
    ("pipeline/bad.py", "from metaeval.calibration import fit\n", "pipeline must not import calibration"),
    ("report/bad.py", "from metaeval.scoring import score_answers\n", "report must not import scoring"),
    ("report/bad2.py", "def f():\n    from metaeval import data\n", "report must not import data"),
    ("judges/bad.py", "import metaeval.calibration.simulate\n", "judges must not import calibration"),
    ("layout.py", "from metaeval.scoring import METRICS\n", "layout must not import scoring"),
    ("newthing/__init__.py", "from metaeval.types import X\n", "'newthing' has no layer"),
    ("io/bad2.py", "from metaeval import scoring, report\n", "io (layer 1) imports report (layer 6): upward"),
    # the workflow layer: the API calls it, never a command; nothing below it imports it
    ("api.py", "def sweep():\n    from metaeval.commands.sweep import run\n", "api must not import commands"),
    ("study/bad.py", "from metaeval.workflow.sweep import drive_sweep\n", "study (layer 5) imports workflow (layer 7): upward"),
    ("report/bad.py", "def f():\n    from metaeval.workflow import report\n", "report (layer 6) imports workflow (layer 7)"),
    ("workflow/bad.py", "from metaeval.commands.compare import pair_lines\n", "workflow (layer 7) imports commands (layer 8)"),
    # the four blind spots of the earlier checker (issue 22, point 11):
    # 1. an import through the package facade, from inside the package, in both spellings
    ("pipeline/bad.py", "from metaeval import analyze\n", "imports the package facade (metaeval)"),
    ("study/reuse.py", "def key():\n    import metaeval\n    return metaeval.__version__\n",
     "imports the package facade (metaeval)"),
    ("pipeline/bad.py", "from .. import analyze\n", "imports the package facade (metaeval)"),
    # 2. a string import through importlib (and a registry entry naming a module)
    ("io/bad.py", "import importlib\ndef f():\n    return importlib.import_module('metaeval.study.run')\n",
     "io (layer 1) imports study (layer 5): upward (study.run, string import)"),
    ("judges/bad.py", "PLUGINS = {'x': 'metaeval.study.run:Study'}\n",
     "judges (layer 3) imports study (layer 5): upward"),
    ("report/bad.py", "def f():\n    return __import__('metaeval.scoring')\n", "report must not import scoring"),
    # 3. the report reaching a raw-data reader, directly or through io's auto-detecting package
    ("report/bad.py", "from metaeval.io.trec import read_topics\n", "report must not import io.trec (of io only"),
    ("report/bad.py", "def f():\n    from metaeval.io import trec\n", "report must not import io.trec"),
    ("report/bad.py", "from metaeval.io import read_any\n", "report must not import io (of io only"),
    # 4. the report importing simulation (core, but not the report's business)
    ("report/bad.py", "from metaeval.simulation import simulate_labels\n", "report must not import simulation"),
    ("report/bad.py", "import importlib\nsim = importlib.import_module('metaeval.simulation')\n",
     "report must not import simulation"),
])
def test_checker_catches_a_planted_violation(tmp_path, rel, text, expect):
    found = violations(module_edges(_tree(tmp_path, {**CLEAN, rel: text})))
    bad = [v for v in found if not v.message.startswith("cycle: ")]  # an upward import may close a cycle too
    assert len(bad) == 1 and expect in bad[0].message and bad[0].path == f"metaeval/{rel}", [str(v) for v in found]


@pytest.mark.parametrize("files, cycle", [
    ({"analysis/b.py": "def f():\n    from metaeval.analysis.a import g\n"},  # lazy import closes the loop
     "cycle: metaeval.analysis.a <-> metaeval.analysis.b"),
    ({"analysis/b.py": "from . import c\n", "analysis/c.py": "import metaeval.analysis.a\n"},
     "cycle: metaeval.analysis.a <-> metaeval.analysis.b <-> metaeval.analysis.c"),
    ({"judges/base.py": "def f():\n    from metaeval.judges.registry import JUDGES\n"},  # via a string import
     "cycle: metaeval.judges.base <-> metaeval.judges.registry"),
])
def test_checker_catches_a_planted_cycle(tmp_path, files, cycle):
    bad = violations(module_edges(_tree(tmp_path, {**CLEAN, **files})))
    assert [str(v) for v in bad] == [cycle]


def test_known_until_merge_is_applied_by_key_not_line(tmp_path):
    pkg = _tree(tmp_path, {**CLEAN, "study/reuse.py": "\n\ndef key():\n    from metaeval import __version__\n"})
    (v,) = violations(module_edges(pkg))
    assert str(v) == "metaeval/study/reuse.py:4: imports the package facade (metaeval)"
    assert v.key == "metaeval/study/reuse.py: imports the package facade (metaeval)"  # no line: survives edits
