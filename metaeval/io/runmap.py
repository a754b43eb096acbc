"""Run-name maps: ``--run-map OLD=NEW`` (repeatable) or a mapping file, applied to label sets and score tables.

Different tools name the same run differently (the nuggetizer output calls the gpt-4o baseline
``baseline_rag24.test_gpt-4o_top20``, NIST's export ``baseline_frag_rag24.test_gpt-4o_top20``).  A run map renames
runs on the side that carries the old names before two inputs are compared; unmapped runs keep their names.

Accepted forms (``parse_run_map``), one or several, merged in order:

* ``OLD=NEW`` on the command line;
* a file: ``.json`` / ``.yaml`` / ``.yml`` holding one mapping ``{old: new}``, or a text file with one pair per
  line, ``OLD=NEW``, ``OLD<TAB>NEW`` or ``OLD NEW`` (blank lines and ``#`` comments ignored).

A name mapped twice to different targets, or two runs of one input that would end up with the same name, is a
``ConfigError`` naming the file/line or the runs.  ``suggest_run_map`` proposes a map for two inputs that share
few runs: each unshared run of one side paired with its most similar unshared run of the other (``difflib``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from metaeval.errors import ConfigError, FormatError

log = logging.getLogger(__name__)


def parse_run_map(items: Iterable[str | os.PathLike] | str | None) -> dict[str, str]:
    """Merge ``OLD=NEW`` strings and mapping files into one ``{old: new}`` dict (see the module docstring)."""
    if items is None:
        return {}
    if isinstance(items, (str, os.PathLike)):
        items = [items]
    out: dict[str, str] = {}
    where: dict[str, str] = {}
    for item in items:
        text = str(item)
        if Path(text).is_file():
            pairs = _read_file(text)
        elif "=" in text:
            old, _, new = text.partition("=")
            pairs = [(old.strip(), new.strip(), f"--run-map {text!r}")]
        else:
            raise ConfigError(f"--run-map {text!r}: expected OLD=NEW or a mapping file (no such file)")
        for old, new, origin in pairs:
            if not old or not new:
                raise ConfigError(f"{origin}: empty run name in run map")
            if old in out and out[old] != new:
                raise ConfigError(f"{origin}: run {old!r} mapped to {new!r} but {where[old]} maps it to {out[old]!r}")
            out[old], where[old] = new, origin
    return out


def _read_file(path: str) -> list[tuple[str, str, str]]:
    low = path.lower()
    if low.endswith((".json", ".yaml", ".yml")):
        if low.endswith(".json"):
            import json

            try:
                data = json.loads(Path(path).read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise FormatError(path, exc.lineno, "", f"malformed JSON ({exc.msg})") from None
        else:
            import yaml

            try:
                data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
            except yaml.YAMLError as exc:
                raise FormatError(path, 0, "", f"malformed YAML ({exc})") from None
        if not isinstance(data, Mapping):
            raise FormatError(path, 0, "", "a run-map file must hold one mapping {old_run: new_run}")
        return [(str(k), str(v), f"{path} key {k!r}") for k, v in data.items()]
    from metaeval.io.jsonl import iter_lines

    pairs = []
    for lineno, line in iter_lines(path):
        s = line.split("#", 1)[0].strip()
        if not s:
            continue
        if "=" in s:
            old, _, new = s.partition("=")
        else:
            parts = s.split("\t") if "\t" in s else s.split()
            if len(parts) != 2:
                raise FormatError(path, lineno, "", "expected 'OLD=NEW', 'OLD<TAB>NEW' or 'OLD NEW'")
            old, new = parts
        pairs.append((old.strip(), new.strip(), f"{path}:{lineno}"))
    return pairs


def rename_runs(obj: Any, mapping: Mapping[str, str]) -> Any:
    """``obj`` (a ``LabelSet`` or a DataFrame with a ``run_id`` column) with runs renamed by ``mapping``.

    Returns a new object; the input is not modified.  Raises ``ConfigError`` when two runs would share a name.
    """
    if not mapping:
        return obj
    import pandas as pd

    from metaeval.types import LabelSet

    if isinstance(obj, LabelSet):
        runs = set(obj.answers["run_id"].astype(str)) | set(obj.labels["run_id"].astype(str))
        _check_collisions(runs, mapping, obj.name)
        lab = obj.labels.copy()
        ans = obj.answers.copy()
        lab["run_id"] = _mapped(lab["run_id"], mapping)
        ans["run_id"] = _mapped(ans["run_id"], mapping)
        prov = dict(obj.provenance)
        used = {k: v for k, v in mapping.items() if k in runs}
        if used:
            prov["run_map"] = used
        return LabelSet(name=obj.name, labels=lab, answers=ans, topics=dict(obj.topics), provenance=prov,
                        problems=list(obj.problems))
    if isinstance(obj, pd.DataFrame):
        if "run_id" not in obj.columns:
            raise ConfigError("cannot apply a run map: the table has no run_id column")
        _check_collisions(set(obj["run_id"].astype(str)), mapping, "score table")
        out = obj.copy()
        out["run_id"] = _mapped(out["run_id"], mapping)
        out.attrs = dict(obj.attrs)
        return out
    raise ConfigError(f"cannot apply a run map to a {type(obj).__name__}")


def unused_keys(mapping: Mapping[str, str], *objs: Any) -> list[str]:
    """Keys of ``mapping`` that name no run in any of ``objs`` (to warn about a typo)."""
    runs: set[str] = set()
    for o in objs:
        runs |= _runs_of(o)
    return sorted(k for k in mapping if k not in runs)


def _runs_of(obj: Any) -> set[str]:
    if hasattr(obj, "answers") and hasattr(obj, "labels"):
        return set(obj.answers["run_id"].astype(str)) | set(obj.labels["run_id"].astype(str))
    if hasattr(obj, "columns") and "run_id" in obj.columns:
        return set(obj["run_id"].astype(str))
    return set()


def _mapped(col: Any, mapping: Mapping[str, str]) -> Any:
    s = col.astype(str)
    return s.map(lambda r: mapping.get(r, r))


def _check_collisions(runs: set[str], mapping: Mapping[str, str], where: str) -> None:
    seen: dict[str, str] = {}
    for r in sorted(runs):
        new = mapping.get(r, r)
        if new in seen:
            raise ConfigError(f"run map on {where}: runs {seen[new]!r} and {r!r} would both be named {new!r}")
        seen[new] = r


def suggest_run_map(reference_runs: Iterable[str], candidate_runs: Iterable[str], cutoff: float = 0.6) -> dict[str, str]:
    """``{candidate run: reference run}`` for runs only one side has whose names nearly match: each pair's
    ``difflib.SequenceMatcher`` ratio is at least ``cutoff``; pairs are taken most similar first and each run is
    used once, so the map never makes two runs share a name.  Shared runs are left alone.

    ``baseline_rag24.test_gpt-4o_top20`` vs ``baseline_frag_rag24.test_gpt-4o_top20`` (ratio 0.93) is suggested;
    unrelated names are not.
    """
    import difflib

    ref, cand = set(map(str, reference_runs)), set(map(str, candidate_runs))
    only_ref, only_cand = sorted(ref - cand), sorted(cand - ref)
    scored = sorted(((difflib.SequenceMatcher(None, c, r).ratio(), c, r) for c in only_cand for r in only_ref),
                    key=lambda t: (-t[0], t[1], t[2]))
    out: dict[str, str] = {}
    taken: set[str] = set()
    for ratio, c, r in scored:
        if ratio < cutoff:
            break
        if c not in out and r not in taken:
            out[c] = r
            taken.add(r)
    return out
