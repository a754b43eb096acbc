"""The package's layering, enforced by an AST scan of every import (module level and inside functions).

Layers, lowest first (a module may import its own layer and the ones below, never above)::

    core (types, errors, paths, simulation, seeded_uniform, paper - the paper's published constants)
      <- io, scoring, layout, data, assess (assessor sheets)
      <- analysis, calibration, planning
      <- judges, prompts, security
      <- pipeline
      <- study
      <- report
      <- commands, cli, api, the package's __init__/__main__, testing

Extra rules on top of the order: ``report`` renders only (no data, scoring, analysis, calibration, study, pipeline,
judges or prompts); ``judges`` do not import ``calibration``; ``pipeline`` does not import analysis, calibration,
study or report; ``layout`` imports only core and ``io``.  Imports under ``if TYPE_CHECKING:`` are not imports at
run time and are ignored.  The checker itself is tested on a synthetic package with planted violations.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LAYERS: dict[str, int] = {
    "types": 0, "errors": 0, "paths": 0, "hashing": 0, "version": 0, "schema": 0, "simulation": 0, "seeded_uniform": 0, "paper": 0, "random_streams": 0,
    "io": 1, "scoring": 1, "layout": 1, "data": 1, "assess": 1,
    "analysis": 2, "calibration": 2, "planning": 2,
    "judges": 3, "prompts": 3, "security": 3,
    "pipeline": 4,
    "study": 5,
    "report": 6,
    "commands": 7, "cli": 7, "api": 7, "__init__": 7, "__main__": 7, "testing": 7,
}
FORBIDDEN: dict[str, set[str]] = {
    "report": {"data", "scoring", "analysis", "calibration", "study", "pipeline", "judges", "prompts"},
    "judges": {"calibration"},
    "pipeline": {"analysis", "calibration", "study", "report"},
    "layout": {"scoring", "data", "analysis", "calibration", "planning"},
}


def _top(module: str, package: str) -> str | None:
    """``metaeval.report.build`` -> ``report``; None for modules outside the package."""
    parts = module.split(".")
    if parts[0] != package:
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_pkg: bool) -> list[tuple[str, int]]:
    """(absolute module imported, line) for every run-time import in ``tree``."""
    out: list[tuple[str, int]] = []
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for sub in node.body:
                skip.update(id(n) for n in ast.walk(sub))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.append((name, node.lineno))
            out += [(f"{name}.{a.name}", node.lineno) for a in node.names]  # `from pkg import sub` may be a module
    return out


def scan(pkg_dir: Path) -> list[tuple[str, str, str, int]]:
    """(file, importing layer, imported layer, line) for every import between two parts of the package
    (``from metaeval import __version__`` names an attribute of the package, not a part: ignored)."""
    package = pkg_dir.name
    parts_of_pkg = {p.stem for p in pkg_dir.glob("*.py")} | {p.name for p in pkg_dir.iterdir() if (p / "__init__.py").exists()}
    edges = []
    for f in sorted(pkg_dir.rglob("*.py")):
        rel = f.relative_to(pkg_dir.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_pkg else parts)
        src = _top(module, package) or "__init__"
        if is_pkg and len(parts) == 2:
            src = "__init__"
        for name, line in _imports(ast.parse(f.read_text(encoding="utf-8"), str(f)), module, is_pkg):
            dst = _top(name, package)
            if dst is None or dst == src or dst == "__init__" or dst not in parts_of_pkg:
                continue
            edges.append((str(f.relative_to(pkg_dir.parent)), src, dst, line))
    return edges


def violations(edges, layers=LAYERS, forbidden=FORBIDDEN) -> list[str]:
    out = []
    for f, src, dst, line in edges:
        if src not in layers:
            out.append(f"{f}:{line}: {src!r} has no layer (add it to LAYERS)")
            continue
        if dst not in layers:
            out.append(f"{f}:{line}: imports {dst!r}, which has no layer (add it to LAYERS)")
            continue
        if layers[dst] > layers[src]:
            out.append(f"{f}:{line}: {src} (layer {layers[src]}) imports {dst} (layer {layers[dst]}): upward")
        elif dst in forbidden.get(src, ()):
            out.append(f"{f}:{line}: {src} must not import {dst}")
    return sorted(set(out))


def test_metaeval_respects_the_layering():
    bad = violations(scan(ROOT / "metaeval"))
    assert not bad, "\n".join(bad)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "metaeval"
    for rel, text in files.items():
        p = pkg / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return pkg


CLEAN = {
    "__init__.py": "",
    "types.py": "import numpy\n",
    "io/__init__.py": "from metaeval.types import X\n",
    "scoring.py": "from metaeval import types\nfrom metaeval.io import read\n",
    "pipeline/__init__.py": "",
    "pipeline/sweep.py": "from .store import S\nfrom metaeval.judges.base import J\n",
    "pipeline/store.py": "from metaeval.layout import ResultsLayout\n",
    "report/build.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from metaeval.scoring import M\n"
                       "from metaeval.layout import L\n",
    "layout.py": "from metaeval.io import x\n",
    **{f"{part}/__init__.py": "" for part in ("data", "calibration", "judges", "study", "report")},
}


def test_checker_accepts_a_clean_tree(tmp_path):
    assert violations(scan(_tree(tmp_path, CLEAN))) == []


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
])
def test_checker_catches_a_planted_violation(tmp_path, rel, text, expect):
    bad = violations(scan(_tree(tmp_path, {**CLEAN, rel: text})))
    assert len(bad) == 1 and expect in bad[0] and rel in bad[0], bad
