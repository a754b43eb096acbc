"""YAML read within bounds: alias expansion counted before anything expands it, duplicated keys refused.

PyYAML keeps an alias (``*a``) as a second reference to its anchored node, so ``safe_load`` of a "billion laughs"
file (9 aliases of 9 aliases ... of a list of 9) is fast - but everything downstream that copies the data
(OmegaConf / Hydra, ``json.dumps``, a deep copy) expands it: 9^6 = 531,441 leaves held the sweep for minutes.
:func:`check_yaml` composes the file's node graph (no expansion) and computes, memoised per node, how many nodes
the fully expanded document would have; over :data:`MAX_YAML_NODES` (or a file over :data:`MAX_YAML_BYTES`)
is one ``FormatError`` naming the file.  A mapping with a duplicated key is an error too (naming the line): YAML
1.2 forbids it and "last wins" would silently drop a setting (Hydra refuses it as well, so ``assign --judge FILE``
and ``sweep`` agree).

Every YAML file metaeval reads from a user goes through :func:`load_yaml` / :func:`check_yaml_file`: judge and
prompt files (``metaeval.judges.config.load_config_file``, ``assign --judge/--prompt``), the overlay config folders
Hydra composes (``metaeval.workflow.hydra_config``: each ``*.yaml`` checked once per content), the run map.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from metaeval.errors import FormatError

#: the most nodes a YAML document may have once its aliases are expanded (a judge file has tens)
MAX_YAML_NODES = 100_000
#: the largest YAML configuration file read
MAX_YAML_BYTES = 10 * 1024 * 1024


def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def check_yaml(text: str, where: str) -> None:
    """``FormatError`` when ``text`` would expand past ``MAX_YAML_NODES`` nodes or repeats a mapping key."""
    import yaml

    if len(text) > MAX_YAML_BYTES:
        raise FormatError(where, 0, "", f"{len(text):,} characters, over the {MAX_YAML_BYTES:,} a configuration "
                          "file may have")
    if "*" not in text and ":" not in text:
        return
    try:
        docs = list(yaml.compose_all(text, Loader=_loader()))
    except yaml.YAMLError:
        return  # the loader that follows reports the syntax error in its own words
    sizes: dict[int, int] = {}
    for root in docs:
        if root is not None and _expanded(root, sizes) > MAX_YAML_NODES:
            raise FormatError(where, 0, "", f"its aliases expand to more than {MAX_YAML_NODES:,} nodes (a "
                              "\"billion laughs\" document); refused")


def _expanded(root: Any, sizes: dict[int, int]) -> int:
    """Nodes of ``root`` with every alias expanded; each distinct node is visited once (iteratively)."""
    import yaml

    stack: list[tuple[Any, bool]] = [(root, False)]
    on_path: set[int] = set()
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if nid in sizes and not done:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[nid] = 1
            continue
        children = ([c for kv in node.value for c in kv] if isinstance(node, yaml.MappingNode) else list(node.value))
        if not done:
            if nid in on_path:  # a recursive alias: infinite
                sizes[nid] = MAX_YAML_NODES + 1
                continue
            on_path.add(nid)
            if isinstance(node, yaml.MappingNode):
                _no_duplicate_keys(node)
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        on_path.discard(nid)
        total = 1
        for c in children:
            total += sizes.get(id(c), MAX_YAML_NODES + 1)
            if total > MAX_YAML_NODES:
                break
        sizes[nid] = min(total, MAX_YAML_NODES + 1)
    return sizes.get(id(root), 0)


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int, first: int):
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


def _no_duplicate_keys(node: Any) -> None:
    import yaml

    seen: dict[str, int] = {}
    for k, _ in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value != "<<":
            line = k.start_mark.line + 1
            if k.value in seen:
                raise _DuplicateKey(k.value, line, seen[k.value])
            seen[k.value] = line


def load_yaml(text: str, where: str) -> Any:
    """``yaml.safe_load(text)`` after :func:`check_yaml`; a duplicated key is a ``FormatError`` naming its line."""
    import yaml

    load_check(text, where)
    try:
        return yaml.load(text, Loader=_loader())
    except yaml.YAMLError as exc:
        raise yaml_error(exc, where) from None


def yaml_error(exc: Exception, where: str) -> FormatError:
    """A PyYAML error (4-7 lines: context, problem, two marks) as one ``FormatError`` line naming the line and
    column of the problem."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = (mark.line + 1) if mark is not None else 0
    col = f" at column {mark.column + 1}" if mark is not None else ""
    what = " ".join(str(getattr(exc, "problem", None) or exc).split())
    context = getattr(exc, "context", None)
    ctx = f" ({' '.join(str(context).split())})" if context else ""
    return FormatError(where, line, "", f"not valid YAML: {what}{col}{ctx}")


def read_yaml_text(path: str | os.PathLike) -> str:
    """The text of a YAML file: size-checked, UTF-8 (a byte-order mark dropped), one ``FormatError`` otherwise."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise FormatError(str(p), 0, "", exc.strerror or "cannot read") from None
    if size > MAX_YAML_BYTES:
        raise FormatError(str(p), 0, "", f"{size:,} bytes, over the {MAX_YAML_BYTES:,} a configuration file may have")
    raw = p.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise FormatError(str(p), line, "", f"not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save "
                          "the file as UTF-8") from None


def check_yaml_file(path: str | os.PathLike) -> None:
    """:func:`read_yaml_text` + :func:`check_yaml` of one file (duplicated keys named by line)."""
    load_check(read_yaml_text(path), str(path))


def load_check(text: str, where: str) -> None:
    """:func:`check_yaml`, a duplicated key turned into a ``FormatError`` naming its line."""
    try:
        check_yaml(text, where)
    except _DuplicateKey as exc:
        raise FormatError(where, exc.line, exc.key, f"key {exc.key!r} appears twice in one mapping (first on line "
                          f"{exc.first}); remove one") from None
