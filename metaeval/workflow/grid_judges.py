"""The judges and prompts of a grid, each the node Hydra composes for it as the ``judge`` (``prompt``) group
choice with the same command-line overrides: ``judge.*`` overrides reach EVERY judge of the grid (a judge that
lacks the overridden key is an error naming it), ``judge.NAME.*`` ones judge NAME only
(``split_judge_overrides``).  Only the first judge is composed in full; the others are read from their files into
that composition's ``judge`` node (:class:`JudgeNodes`: the same node, one file read instead of one composition
each; a 1,000-judge grid composes in seconds, not minutes).  Each judge is then typed (``JudgeSpec``) by
``metaeval.judges.catalog``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

from metaeval.errors import ConfigError
from metaeval.judges.catalog import PACKAGE_CONF
from metaeval.workflow.hydra_config import Composer, overlay_dirs, plain, search_path

def group_node(c: Composer, overrides: list[str], group: str, option: str) -> dict[str, Any]:
    """``option`` of ``group`` composed with the command-line overrides (``group.*`` ones reach it)."""
    kept = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") != group]
    try:
        cfg = c.compose([*kept, f"{group}={option}"])
    except ConfigError as exc:
        raise grid_error(group, option, str(exc)) from None
    return plain(cfg[group])


def grid_error(group: str, option: str, text: str) -> ConfigError:
    """An error composing ``option`` of the grid's ``group`` axis (``text``: the one-line cause)."""
    hint = ("judge.KEY=VALUE reaches every judge of the grid; to override one judge only, write "
            "judge.<NAME>.KEY=VALUE (e.g. judge.vllm.deployment.base_url=URL). " if group == "judge" else "")
    return ConfigError(f"{group} {option!r} of the grid: {hint}{text}")


class JudgeNodes:
    """The ``judge`` node Hydra composes for ``judge=NAME`` with the command-line overrides, for many names.

    Composing the whole config once per grid judge costs ~0.2 s each.  The judge node of such a composition is
    the judge file (the first of the search path, :func:`metaeval.workflow.hydra_config.search_path`: the overlay
    folders, then the package; else a registry judge, ``{judge: NAME, name: NAME}`` in Hydra's ConfigStore) with
    the ``judge.*`` overrides applied in struct mode and the interpolations resolved against the whole config.  So
    the first name is composed in full (``base``) and each further one is read from its file into ``base.judge``,
    with the ``judge.*`` overrides applied as Hydra applies them (:func:`apply_overrides`).  Whenever that path
    refuses something - a judge file with a defaults list or an ``@package`` header, a name that is no file nor
    registry judge, an override with a package, another config writing into ``judge`` (found by composing once
    without the judge group), or any override that does not apply - the name is composed in full instead, so
    every error is Hydra's own, word for word.
    """

    def __init__(self, composer: Composer, overrides: list[str]):
        self.c = composer
        self.kept = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") != "judge"]
        self.base: Any = None
        self.folders: list[Path] | None = None  # where judge files are read from; None: compose each in full
        self.judge_overrides: list[Any] = []
        #: names composed in full (tests count them)
        self.composed: list[str] = []

    def node(self, name: str) -> dict[str, Any]:
        if self.base is None:
            return self._compose(name, first=True)
        cfg = self._load(name)
        if cfg is None:
            return self._compose(name)
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException

        try:
            self.base.judge = cfg
            apply_overrides(self.judge_overrides, self.base)
            return plain(self.base.judge)
        except (HydraException, OmegaConfBaseException, ConfigError, ValueError, TypeError):
            return self._compose(name)  # the full composition gives (or does not give) Hydra's own error

    def _compose(self, name: str, first: bool = False) -> dict[str, Any]:
        self.composed.append(name)
        try:
            cfg = self.c.compose([*self.kept, f"judge={name}"])
        except ConfigError as exc:
            raise grid_error("judge", name, str(exc)) from None
        node = plain(cfg["judge"])
        if first:
            self._prepare(cfg)
        return node

    def _prepare(self, base: Any) -> None:
        """Set up loading into ``base`` unless something else than the judge file shapes the judge node."""
        from hydra.core.override_parser.overrides_parser import OverridesParser

        try:
            parsed = OverridesParser.create().parse_overrides(self.kept)
            judge_ovs = [o for o in parsed if o.key_or_group.startswith("judge.")]
            if any(o.package is not None for o in judge_ovs):
                return
            others = [o.input_line for o in parsed if not o.key_or_group.startswith("judge.")]
            without = self.c.compose([*others, "~judge"])  # what the rest of the config puts into 'judge'
            if "judge" in without:
                return
        except Exception:  # noqa: BLE001 - anything unusual: compose each judge in full
            return
        self.base, self.judge_overrides, self.folders = base, judge_ovs, search_path(self.c.dirs)

    def _load(self, name: str) -> Any:
        """The judge file as Hydra reads it (the first on the search path), the registry judge's node, or None
        when a full composition is needed for it."""
        if self.folders is None:
            return None
        from omegaconf import OmegaConf

        for folder in self.folders:
            path = Path(folder, "judge", f"{name}.yaml")
            if not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
                if re.search(r"^\s*#\s*@", text, re.M):  # a header (@package ...): Hydra places the node itself
                    return None
                cfg = OmegaConf.create(text)
            except Exception:  # noqa: BLE001 - a broken file: the full composition gives Hydra's own error
                return None
            return cfg if OmegaConf.is_dict(cfg) and "defaults" not in cfg else None
        from metaeval.judges.registry import JUDGES

        if name in JUDGES:  # stored in the ConfigStore by the composer (no file of that name)
            return OmegaConf.create({"judge": name, "name": name})
        return None


def apply_overrides(overrides: Sequence[Any], cfg: Any) -> None:
    """Hydra's parsed overrides (``hydra.core.override_parser``) applied to the composed ``cfg`` in place, with
    Hydra's meaning of each prefix: ``~key[=value]`` deletes a key that exists (holding ``value`` when given),
    ``+key=value`` adds a key that does not exist (a mapping or list merges), ``++key=value`` sets it either way,
    ``key=value`` changes a key that exists (struct mode: an unknown key raises).  Anything refused raises
    (``ConfigError`` or OmegaConf's error); :class:`JudgeNodes` then composes in full for Hydra's own message."""
    from omegaconf import OmegaConf, open_dict

    for o in overrides:
        key, value = o.key_or_group, o.value()
        if o.package is not None or getattr(o, "is_sweep_override", lambda: False)():
            raise ConfigError(f"{o.input_line}: not a plain override")
        present = OmegaConf.select(cfg, key, throw_on_missing=False)
        if o.is_delete():
            if present is None or (value is not None and value != present):
                raise ConfigError(f"{o.input_line}: nothing to delete")
            parent, _, leaf = key.rpartition(".")
            with open_dict(cfg):
                del (OmegaConf.select(cfg, parent) if parent else cfg)[leaf]
        elif o.is_add():
            if present is not None and not isinstance(value, (dict, list)):
                raise ConfigError(f"{o.input_line}: the key exists")
            OmegaConf.update(cfg, key, value, merge=True, force_add=True)
        elif o.is_force_add():
            OmegaConf.update(cfg, key, value, merge=True, force_add=True)
        else:
            OmegaConf.update(cfg, key, value, merge=True)


def judge_paths(overrides: Sequence[str]) -> None:
    """``judge=PATH`` (a file, not a name): Hydra takes group options by name only, so say how to use the file
    (``assign --judge`` and ``judge check`` take a path; a sweep takes ``--config-dir``)."""
    for raw in overrides:
        key, eq, value = raw.partition("=")
        if eq and key.lstrip("+~") == "judge" and ("/" in value or value.endswith((".yaml", ".yml"))):
            p = Path(value)
            raise ConfigError(f"{raw}: a sweep takes a judge name, not a path; put the file in DIR/judge/ and pass "
                              f"--config-dir DIR judge={p.stem} (here: --config-dir {p.parent.parent} judge={p.stem} "
                              f"when the file is in a judge/ folder)")


def check_grid_names(grid: Any) -> None:
    """Every entry of ``grid.judges`` / ``optional_judges`` / ``prompts`` / ``strategies`` is a name (a config
    file or registry name): a mapping, list or number there is one line, not a ``TypeError``."""
    for axis, what in (("judges", "a judge name"), ("optional_judges", "a judge name"), ("prompts", "a prompt name"),
                       ("strategies", "a strategy name")):
        values = getattr(grid, axis, None)
        if values is None:
            continue
        if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
            raise ConfigError(f"grid.{axis}: expected a list of names, got {type(values).__name__} {values!r:.60}")
        for i, v in enumerate(values):
            if not isinstance(v, str) or not v.strip():
                shown = repr(v)
                raise ConfigError(f"grid.{axis}[{i}]: expected {what} (a config file of that group), got "
                                  f"{type(v).__name__} {shown[:60]}")


def one_server_per_deployment(judges: Sequence[Any]) -> None:
    """A deployment name names one server: two judges of one sweep whose deployments share a ``name`` (the
    response-cache namespace with ``revision``; the URL is not in the cache key) but point at different
    ``base_url``s would read each other's cached replies.  One line naming both judges and how to keep them apart."""
    from metaeval.judges.cache import public_url

    seen: dict[tuple[str, Any], tuple[str, str]] = {}
    for j in judges:
        dep = getattr(j, "deployment", None)
        if dep is None:
            continue
        url = public_url(dep.base_url)
        first = seen.setdefault((dep.name, getattr(dep, "revision", None)), (j.name, url))
        if first[1] != url:
            raise ConfigError(
                f"judges {first[0]!r} and {j.name!r} share deployment name {dep.name!r} but point at different servers "
                f"({first[1] or 'the SDK default URL'} and {url or 'the SDK default URL'}); a deployment name names one "
                "server (it is the cache namespace): give each its own deployment.name, or each its own deployment.revision")


def split_judge_overrides(overrides: list[str], config_dir: Any = None) -> tuple[list[str], dict[str, list[str]]]:
    """``judge.NAME.KEY=V`` (NAME a judge config or registry name) is an override of judge NAME only, as
    ``judge.KEY=V`` is of every judge of the grid: ``-m judge=lexical,vllm judge.vllm.deployment.base_url=URL``.
    Returns the other overrides and NAME -> its overrides rewritten as ``judge.KEY=V`` (prefixes ``+``/``~`` kept)."""
    from metaeval.judges.catalog import judge_names
    from metaeval.judges.registry import JUDGES

    known: set[str] | None = None
    rest: list[str] = []
    per: dict[str, list[str]] = {}
    for raw in overrides:
        key, eq, value = raw.partition("=")
        prefix = key[: len(key) - len(key.lstrip("+~"))]
        parts = key[len(prefix):].split(".")
        if eq and len(parts) >= 3 and parts[0] == "judge":
            if known is None:
                known = {*judge_names([*overlay_dirs(config_dir), PACKAGE_CONF]), *JUDGES}
            if parts[1] in known:
                per.setdefault(parts[1], []).append(f"{prefix}judge.{'.'.join(parts[2:])}={value}")
                continue
        rest.append(raw)
    return rest, per


def grid_judges_and_prompts(config: dict[str, Any], grid: Any, overrides: list[str], config_dir: Any,
                             names: list[str], per_judge: dict[str, list[str]] | None = None):
    """The grid's typed judges (each the node Hydra composes for it as the ``judge`` group choice, ``JudgeNodes``,
    so ``judge.*`` overrides reach every one and ``judge.NAME.*`` ones judge NAME only, then typed by the judge
    catalog) and its prompts (name -> prompt config)."""
    from metaeval.judges.catalog import resolve_judge

    per_judge = per_judge or {}
    prompt_names = list(grid.prompts or [])
    single = None if grid.judges else str(config["_choices"].get("judge") or "")
    listed = [*names, *([single] if single else [])]
    stray = [n for n in per_judge if n not in listed]
    if stray:
        raise ConfigError(f"judge.{stray[0]}.*: {stray[0]} is not a judge of this grid (judges: "
                          f"{', '.join(listed) or '(none)'}); judge.NAME.KEY=VALUE overrides judge NAME only")
    with Composer(overlay_dirs(config_dir)) as c:
        nodes = JudgeNodes(c, overrides)  # a judge with judge.NAME.* overrides of its own is composed in full
        judge_cfgs = {n: group_node(c, [*overrides, *per_judge[n]], "judge", n) if n in per_judge else nodes.node(n)
                      for n in names}
        # a prompt node does not read the judge: judge.* overrides (for the grid's judges, not the top-level
        # default judge) would fail on it (-m prompt=v1,v2_json judge=testserver judge.deployment.base_url=URL)
        not_judge = [o for o in overrides if not o.split("=", 1)[0].lstrip("+~").startswith("judge.")]
        prompts = {n: group_node(c, not_judge, "prompt", n) for n in prompt_names}
        if single in per_judge:
            config["judge"] = group_node(c, [*overrides, *per_judge[single]], "judge", single)
    if not grid.judges:
        name = str(config["judge"].get("name") or config["_choices"].get("judge") or "judge")
        judge_cfgs = {name: config["judge"], **judge_cfgs}
    if not prompts:
        prompts = {config["prompt"]["name"]: config["prompt"]}
    # a grid judge's cell name is its config name (grid.judges entry); the single top-level judge keeps its 'name'
    every = [o for o in overrides if o.split("=", 1)[0].lstrip("+~").startswith("judge.")]
    specs = []
    for n, cfg in judge_cfgs.items():
        try:
            specs.append(resolve_judge(cfg, name=n, source=f"config judge/{n}"))
        except ConfigError as exc:
            if not (every and len(judge_cfgs) > 1):
                raise
            raise ConfigError(f"{exc} ({every[0]} reaches every judge of the grid; to override one judge only: "
                              f"judge.<NAME>.{every[0].split('=', 1)[0].lstrip('+~')[len('judge.'):]}=...)") from None
    return specs, prompts


