"""Hydra at the edge: compose the sweep configuration, the only place that sees a DictConfig.

* The package's own ``metaeval/conf`` is the primary config folder; a ``conf/`` folder in the working directory
  and ``--config-dir DIR`` folders overlay it (searched first: a user's ``conf/judge/x.yaml`` adds a judge, a file
  with a shipped name replaces the shipped one).
* ``compose_config(overrides)`` returns a plain, resolved dict, checked against the typed settings
  (``metaeval.pipeline.settings``: one line naming the key on a bad value).
* ``compose_sweep(overrides)`` also expands the grid: every judge named in ``grid.judges`` /
  ``grid.optional_judges`` (and every prompt of ``grid.prompts``) gets the node Hydra composes for it as the
  ``judge`` (``prompt``) group choice with the same command-line overrides, so ``judge.*`` overrides reach EVERY
  judge of the grid (a judge that lacks the overridden key is an error naming it), and is resolved into a typed
  ``JudgeSpec`` by ``metaeval.judges.catalog``.  Only the first judge is composed in full; the others are loaded
  from Hydra's config repository into that composition's ``judge`` node, with the ``judge.*`` overrides applied by
  Hydra's own override code (``_JudgeNodes``: the same node, one file read instead of one composition each; a
  1,000-judge grid composes in seconds, not minutes).
* ``multirun_overrides(overrides)`` maps Hydra's sweep syntax (``-m judge=a,b strategy=x,y``) onto ONE grid sweep.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from metaeval.errors import ConfigError
from metaeval.judges.catalog import PACKAGE_CONF, default_config_dirs

#: group -> grid key: what ``-m`` may sweep over in one grid sweep
SWEEPABLE: dict[str, str] = {"judge": "judges", "prompt": "prompts", "strategy": "strategies"}


def overlay_dirs(config_dir: str | os.PathLike | Sequence[str | os.PathLike] | None = None) -> list[Path]:
    """The user's config folders, searched before the package's: ``./conf`` (if present) and ``config_dir``."""
    extra = [] if config_dir is None else ([config_dir] if isinstance(config_dir, (str, os.PathLike)) else list(config_dir))
    for d in extra:
        if not Path(d).is_dir():
            raise ConfigError(f"--config-dir {d}: no such folder")
    dirs = [d for d in default_config_dirs(extra) if d != PACKAGE_CONF.resolve()]
    for d in dirs:
        check_overlay_files(d)
    return dirs


#: (file, size, mtime) already checked by ``check_overlay_files``
_CHECKED: set[tuple[str, int, int]] = set()


def check_overlay_files(folder: Path) -> None:
    """Every ``*.yaml`` of a user's config folder read within bounds before Hydra reads it
    (``metaeval.io.yamlsafe``: UTF-8, size, alias expansion - a "billion laughs" judge file -, duplicated keys):
    one line naming the file instead of a hang or a ``UnicodeDecodeError``.  Each file once per content."""
    from metaeval.io.yamlsafe import check_yaml_file

    try:
        files = sorted(Path(folder).rglob("*.yaml"))
    except OSError:
        return
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        sig = (str(f), st.st_size, st.st_mtime_ns)
        if sig not in _CHECKED:
            check_yaml_file(f)
            _CHECKED.add(sig)


def _one_line(exc: BaseException) -> str:
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return text.split(" Config search path:")[0]


def _store_registry_judges(dirs: Sequence[Path]) -> None:
    """Every judge the catalog knows by registry name only (a kind with default options such as ``replay``, or a
    judge registered from Python) becomes a ``judge`` group option ``{judge: NAME, name: NAME}`` in Hydra's
    ConfigStore, so ``judge=NAME`` and ``grid.judges=[NAME]`` resolve as ``judge check NAME`` does (a config
    file of that name wins)."""
    from hydra.core.config_store import ConfigStore

    from metaeval.judges.catalog import judge_names
    from metaeval.judges.registry import JUDGES

    files = judge_names(dirs)
    store = ConfigStore.instance()
    for name in JUDGES:
        if name not in files:
            store.store(group="judge", name=name, node={"judge": name, "name": name})


class _Composer:
    """A Hydra compose context over the package conf plus the overlay folders (searched first)."""

    def __init__(self, dirs: list[Path]):
        self.dirs = dirs

    def __enter__(self) -> "_Composer":
        from hydra import initialize_config_dir

        from metaeval.security.secrets import install_env_recorder

        install_env_recorder()  # every credential-like ${oc.env:VAR} resolved here becomes a known secret
        self._ctx = initialize_config_dir(config_dir=str(PACKAGE_CONF), version_base=None, job_name="metaeval")
        self._ctx.__enter__()
        _store_registry_judges([*self.dirs, PACKAGE_CONF])
        self._fallback: list[str] = []
        if self.dirs:
            try:  # prepend the overlays so a user's file with a shipped name wins (Hydra's searchpath appends)
                from hydra._internal.config_repository import ConfigRepository
                from hydra.core.global_hydra import GlobalHydra

                loader = GlobalHydra.instance().config_loader()
                for d in reversed(self.dirs):
                    loader.config_search_path.prepend("metaeval-user", f"file://{d}")
                loader.repository = ConfigRepository(config_search_path=loader.config_search_path)
            except Exception:  # pragma: no cover - a Hydra without these internals: overlays add, do not replace
                self._fallback = ["hydra.searchpath=[" + ",".join(f"file://{d}" for d in self.dirs) + "]"]
        return self

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)

    def compose(self, overrides: list[str], hydra: bool = False):
        import yaml
        from hydra import compose
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException

        try:
            return compose(config_name="config", overrides=[*overrides, *self._fallback], return_hydra_config=hydra)
        except (HydraException, OmegaConfBaseException, yaml.YAMLError) as exc:  # a broken user file too
            raise (self._unknown_key(overrides, exc) or _unknown_option(exc)
                   or ConfigError(f"config: {_one_line(exc)}")) from None

    def _unknown_key(self, overrides: list[str], exc: BaseException) -> ConfigError | None:
        """Hydra's "Could not override 'a.b'. To append ... use +a.b" for a key that is not in the config, turned
        into the nearest-name error (``sweep.budjet_usd is not a setting; did you mean budget_usd?``) in one step
        (the ``+`` Hydra suggests would only lead there); None when the message is another one."""
        import re

        path = _not_overridable(exc)
        if path is None:
            return None
        rest = [o for o in overrides if not re.match(rf"^{re.escape(path)}\s*=", o)]
        try:
            from hydra import compose
            from omegaconf import OmegaConf

            cfg = compose(config_name="config", overrides=[*rest, *self._fallback])
            parent = OmegaConf.select(cfg, path.rsplit(".", 1)[0])
            given = path
            while parent is None and path.count(".") > 1:  # judge.deployment.model: judge has no deployment
                path = path.rsplit(".", 1)[0]
                parent = OmegaConf.select(cfg, path.rsplit(".", 1)[0])
        except Exception:  # noqa: BLE001 - the original message stands
            return None
        err = _not_a_setting(path, parent)
        if (err is not None and path != given and path.startswith("judge.") and OmegaConf.is_dict(parent)
                and parent.get("judge")):
            # a judge without that block (an offline judge has no deployment): say so, not Hydra's '+key'
            err = ConfigError(f"judge {parent.get('name') or parent.get('judge')} has no {path.split('.')[1]} "
                              f"setting; {err}")
        return err


def _unknown_option(exc: BaseException) -> ConfigError | None:
    """Hydra's "Could not find 'judge/lexcial' ... Available options in 'judge': ..." as one line with the nearest
    option (``judge=lexcial: no such judge; did you mean lexical? (options: ...)``); None for another message."""
    import re

    from metaeval.schema import nearest

    m = re.search(r"Could not find '([\w-]+)/([^']+)'\s*Available options in '[\w-]+':\s*(.+)", str(exc), re.S)
    if m is None:
        return None
    group, value = m.group(1), m.group(2)
    options = [o for o in m.group(3).split("Config search path")[0].split() if re.fullmatch(r"[\w.-]+", o)]
    return ConfigError(f"{group}={value}: no such {group}{nearest(value, options)} (options: {', '.join(options)}; "
                       f"a file of your own goes in ./conf/{group}/{value}.yaml)")


def _not_overridable(exc: BaseException) -> str | None:
    """The dotted key of Hydra's "Could not override 'a.b'" (a key not in the config), else None."""
    import re

    m = re.search(r"Could not override '([\w.]+)'", str(exc))
    return m.group(1) if m and "." in m.group(1) else None


def _not_a_setting(path: str, parent: Any) -> ConfigError | None:
    """``path`` (``where.key``) is not among ``parent``'s keys: the one-line nearest-name error, or None."""
    from omegaconf import OmegaConf

    from metaeval.schema import unknown_key_error

    if not OmegaConf.is_dict(parent) and not isinstance(parent, dict):
        return None
    where, key = path.rsplit(".", 1)
    return unknown_key_error(where, key, [str(k) for k in parent.keys()])


def _plain(cfg: Any) -> dict[str, Any]:
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        return OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except OmegaConfBaseException as exc:
        raise ConfigError(f"config: {_one_line(exc)}") from None


def multirun_overrides(overrides: Sequence[str]) -> list[str]:
    """``judge=a,b`` / ``prompt=...`` / ``strategy=...`` (Hydra's ``-m`` syntax, also ``choice(a,b)``; a single
    value too: an axis of one) become ``grid.judges=[a,b]`` ... so the whole product runs as ONE grid sweep
    (shared jobs run once).  Any other swept key is an error (one sweep has one set of settings), and so is a
    ``-m`` that names no axis at all."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        parsed = OverridesParser.create().parse_overrides(list(overrides))
    except HydraException as exc:
        raise ConfigError(f"config: {_one_line(exc)}") from None
    out: list[str] = []
    swept: dict[str, list[str]] = {}
    for raw, ov in zip(overrides, parsed):
        key = ov.key_or_group
        if ov.is_sweep_override():
            if key not in SWEEPABLE:
                raise ConfigError(f"-m: only {', '.join(SWEEPABLE)} can be swept in one grid sweep, got {raw!r} "
                                  "(run one sweep per setting, each with its own name=)")
            swept[key] = [str(v) for v in ov.sweep_string_iterator()]
        elif key in SWEEPABLE and not raw.lstrip("+~").startswith(f"{key}.") and ov.value() is not None:
            swept[key] = [str(ov.value())]  # a single value: an axis of one (as meant), not the default grid
        else:
            out.append(raw)
    for key, values in swept.items():  # `-m judge=` would run the default cell, not an axis the user typed
        if not [v for v in values if v.strip()]:
            raise ConfigError(f"-m {key}=: an empty axis; name at least one {key} (e.g. -m {key}=a,b)")
    if not swept:
        raise ConfigError(f"-m: nothing to sweep; name the axes, e.g. -m judge=lexical,lexical_strict "
                          f"strategy=human_auto (axes: {', '.join(SWEEPABLE)})")
    for group in SWEEPABLE:  # an unswept axis keeps its single top-level choice
        if group not in swept:
            out.append(f"grid.{SWEEPABLE[group]}=null")
    for group, values in swept.items():
        out.append(f"grid.{SWEEPABLE[group]}=[{','.join(values)}]")
    # exactly the product asked for (no default grid's optional judges); ++ because a grid file may lack the key
    # (grid=single has only judges, prompts, strategies: a plain override was "not a setting", issue 32)
    out.append("++grid.optional_judges=[]")
    return out


def ignored_choices(overrides: Sequence[str], grid: Any, grid_choice: str) -> None:
    """A top-level ``judge=X`` / ``prompt=X`` / ``strategy=X`` while the chosen grid lists that axis would change
    nothing (the grid's list wins): one line saying what to type instead."""
    for raw in overrides:
        key, _, value = raw.partition("=")
        key = key.lstrip("+~")
        axis = SWEEPABLE.get(key)
        if axis is None or not getattr(grid, axis):
            continue
        listed = ", ".join(map(str, getattr(grid, axis)))
        raise ConfigError(f"{raw} has no effect: grid {grid_choice} sweeps grid.{axis}=[{listed}]; for one cell use "
                          f"grid=single {raw}, for a grid of your own -m {key}={value},... or grid.{axis}=[{value}]")


def compose_config(overrides: Sequence[str], config_dir: Any = None, *, hydra: bool = False) -> dict[str, Any]:
    """The composed config as a plain dict, every section checked (``metaeval.commands.settings``).
    ``hydra=True`` adds ``_choices`` (group -> option)."""
    return _compose_checked(overrides, config_dir, hydra=hydra)[0]


def _compose_checked(overrides: Sequence[str], config_dir: Any = None, *, hydra: bool = False):
    """(the plain composed config, its typed sections: ``metaeval.commands.settings.check_sections``)."""
    from metaeval.commands.settings import check_sections

    with _Composer(overlay_dirs(config_dir)) as c:
        cfg = c.compose(list(overrides), hydra=True)
        from omegaconf import open_dict

        choices = _plain(cfg.hydra.runtime.choices)
        with open_dict(cfg):
            del cfg["hydra"]
        plain = _plain(cfg)
    from metaeval.security.secrets import secret_in_config

    secret_in_config(plain)  # a key's value in a name, path or parameter: one line, before any check prints it
    sections = check_sections(plain)
    if hydra:
        plain["_choices"] = {k: v for k, v in choices.items() if not k.startswith("hydra/")}
    return plain, sections


def _group_node(c: _Composer, overrides: list[str], group: str, option: str) -> dict[str, Any]:
    """``option`` of ``group`` composed with the command-line overrides (``group.*`` ones reach it)."""
    kept = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") != group]
    try:
        cfg = c.compose([*kept, f"{group}={option}"])
    except ConfigError as exc:
        raise _grid_error(group, option, str(exc)) from None
    return _plain(cfg[group])


def _grid_error(group: str, option: str, text: str) -> ConfigError:
    """An error composing ``option`` of the grid's ``group`` axis (``text``: the one-line cause)."""
    hint = ("judge.KEY=VALUE reaches every judge of the grid; to override one judge only, write "
            "judge.<NAME>.KEY=VALUE (e.g. judge.vllm.deployment.base_url=URL). " if group == "judge" else "")
    return ConfigError(f"{group} {option!r} of the grid: {hint}{text}")


class _JudgeNodes:
    """The ``judge`` node Hydra composes for ``judge=NAME`` with the command-line overrides, for many names.

    Composing the whole config once per grid judge costs ~0.2 s each.  The judge node of such a composition is
    the judge file (Hydra's config repository: the overlay folders first, then the package, then the registry
    judges in Hydra's ConfigStore) with the ``judge.*`` overrides applied in struct mode and the interpolations
    resolved against the whole config.  So the first name is composed in full (``base``) and each further one is
    loaded from the repository into ``base.judge``, with the ``judge.*`` overrides applied by Hydra's own override
    code (the same errors word for word).  A full composition is still used per name when anything else could
    shape the node: a judge file with a defaults list or an ``@package`` header, a file missing from the
    repository (Hydra's own "Could not find" error), an override with a package, or another config writing
    into ``judge`` (found by composing once without the judge group).
    """

    def __init__(self, composer: _Composer, overrides: list[str]):
        self.c = composer
        self.kept = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") != "judge"]
        self.base: Any = None
        self.repo: Any = None
        self.judge_overrides: list[Any] = []
        #: names composed in full (tests count them)
        self.composed: list[str] = []

    def node(self, name: str) -> dict[str, Any]:
        if self.base is None:
            return self._compose(name, first=True)
        cfg = self._load(name)
        if cfg is None:
            return self._compose(name)
        from hydra._internal.config_loader_impl import ConfigLoaderImpl
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException

        try:
            self.base.judge = cfg
            ConfigLoaderImpl._apply_overrides_to_config(self.judge_overrides, self.base)
        except (HydraException, OmegaConfBaseException) as exc:
            path = _not_overridable(exc)
            err = None
            if path and path.startswith("judge."):
                from omegaconf import OmegaConf

                inner = path.split(".")[1:-1]  # the key's parent inside the judge node
                err = _not_a_setting(path, OmegaConf.select(cfg, ".".join(inner)) if inner else cfg)
            raise _grid_error("judge", name, str(err) if err else f"config: {_one_line(exc)}") from None
        return _plain(self.base.judge)

    def _compose(self, name: str, first: bool = False) -> dict[str, Any]:
        self.composed.append(name)
        try:
            cfg = self.c.compose([*self.kept, f"judge={name}"])
        except ConfigError as exc:
            raise _grid_error("judge", name, str(exc)) from None
        node = _plain(cfg["judge"])
        if first:
            self._prepare(cfg)
        return node

    def _prepare(self, base: Any) -> None:
        """Set up loading into ``base`` unless something else than the judge file shapes the judge node."""
        from hydra.core.global_hydra import GlobalHydra
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
            self.repo = GlobalHydra.instance().config_loader().repository
        except Exception:  # noqa: BLE001 - anything unusual: compose each judge in full
            return
        self.base, self.judge_overrides = base, judge_ovs

    def _load(self, name: str) -> Any:
        """The judge file as Hydra loads it, or None when a full composition is needed for it."""
        if self.repo is None:
            return None
        try:
            ret = self.repo.load_config(config_path=f"judge/{name}")
        except Exception:  # noqa: BLE001 - a broken file: the full composition gives Hydra's own error
            return None
        if ret is None or ret.header.get("package") not in (None, "") or "defaults" in ret.config:
            return None
        return ret.config


def compose_sweep(overrides: Sequence[str], config_dir: Any = None):
    """Return ``(settings, cells)``: the typed settings tree (``metaeval.commands.settings.RunSettings``; its
    ``document`` is the plain composed config with ``name`` filled in and ``judges``: the resolved judge configs of
    the grid) and the expanded grid of cells holding typed ``JudgeSpec``s."""
    from metaeval.commands.settings import build_settings
    from metaeval.pipeline.grid import expand_grid

    judge_paths(overrides)
    overrides, per_judge = split_judge_overrides(list(overrides), config_dir)
    config, sections = _compose_top(overrides, config_dir)
    grid = sections["grid"]
    check_grid_names(grid)
    ignored_choices(overrides, grid, str(config["_choices"].get("grid") or "grid"))
    judge_names = list(grid.judges or [])
    optional = [n for n in grid.optional_judges or [] if n not in judge_names]
    judges, prompts = _grid_judges_and_prompts(config, grid, overrides, config_dir, [*judge_names, *optional],
                                               per_judge)
    strategies = grid.strategies or [config["strategy"]["name"]]
    cells = expand_grid(judges, prompts, list(strategies), sections["cache"].active_path, sections["sweep"].relevance)
    if not cells:
        raise ConfigError("the grid is empty")
    one_server_per_deployment(judges)
    config["judges"] = {j.name: j.public_dict() for j in judges}
    from metaeval.security.secrets import secret_in_config

    secret_in_config(config)  # every grid judge's key known; none of them in any configured string
    config["_grid_overridden"] = any(o.split("=", 1)[0].lstrip("+~").startswith("grid.") for o in overrides)
    config["_single"] = not (judge_names or optional) and not grid.prompts and not grid.strategies
    if not config["_single"]:  # only cells that can run here; what was left out is said once per judge
        cells, config["_grid_notes"] = _pruned(cells, config)
    if config.get("name") in (None, ""):
        config["name"] = default_name(config, cells)
    return build_settings(config, sections, single=config["_single"]), cells


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


def _compose_top(overrides: list[str], config_dir: Any):
    """``_compose_checked`` of the top-level config.  In a grid, ``judge.*`` overrides are for the grid's judges
    (applied to each in ``_group_node``), not for the top-level ``judge`` choice, which a grid does not run: when
    they fail on it, the config is composed without them, and if it then has no grid judges the first error
    stands (with how to aim an override at one judge)."""
    from metaeval.security.secrets import SecretInConfig

    try:
        return _compose_checked(overrides, config_dir, hydra=True)
    except SecretInConfig:
        raise
    except ConfigError as first:
        judge_ovs = [o for o in overrides if o.split("=", 1)[0].lstrip("+~").startswith("judge.")]
        if not judge_ovs:
            raise
        try:
            config, sections = _compose_checked([o for o in overrides if o not in judge_ovs], config_dir, hydra=True)
        except ConfigError:
            raise first from None
        if not sections["grid"].judges:
            raise ConfigError(f"{first} (to override one judge of a grid only: judge.<NAME>.KEY=VALUE)") from None
        return config, sections


def _pruned(cells: list, config: dict[str, Any]) -> tuple[list, list[str]]:
    """``metaeval.pipeline.grid.prune_grid``; its lines are logged once by the driver after its checks
    (:func:`log_grid_notes`), so an error stays one line."""
    from metaeval.pipeline.grid import prune_grid

    return prune_grid(cells)


def log_grid_notes(document: dict[str, Any]) -> None:
    """The grid lines of ``compose_sweep`` (``_grid_notes``) in the log at info level (``-v``); the terminal shows
    them once, in the summary table's header (``summary.md``) or under the dry-run table."""
    import logging

    log = logging.getLogger("metaeval.grid")
    for line in document.get("_grid_notes") or ():
        log.info(line)


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


def _grid_judges_and_prompts(config: dict[str, Any], grid: Any, overrides: list[str], config_dir: Any,
                             names: list[str], per_judge: dict[str, list[str]] | None = None):
    """The grid's typed judges (each the node Hydra composes for it as the ``judge`` group choice, ``_JudgeNodes``,
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
    with _Composer(overlay_dirs(config_dir)) as c:
        nodes = _JudgeNodes(c, overrides)  # a judge with judge.NAME.* overrides of its own is composed in full
        judge_cfgs = {n: _group_node(c, [*overrides, *per_judge[n]], "judge", n) if n in per_judge else nodes.node(n)
                      for n in names}
        # a prompt node does not read the judge: judge.* overrides (for the grid's judges, not the top-level
        # default judge) would fail on it (-m prompt=v1,v2_json judge=testserver judge.deployment.base_url=URL)
        not_judge = [o for o in overrides if not o.split("=", 1)[0].lstrip("+~").startswith("judge.")]
        prompts = {n: _group_node(c, not_judge, "prompt", n) for n in prompt_names}
        if single in per_judge:
            config["judge"] = _group_node(c, [*overrides, *per_judge[single]], "judge", single)
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


def default_name(config: dict[str, Any], cells: Sequence[Any]) -> str:
    """The results folder name when ``name`` is not given: ``demo`` for the demo dataset with its default grid,
    else ``<dataset>-<grid>`` (``<dataset>-<judge>-<prompt>-<strategy>`` for one cell; the grid's axes, see
    :func:`_axes_name`, when the grid was changed on the command line), so different datasets never share a
    folder."""
    from metaeval.layout import slugify
    from metaeval.hashing import content_hash

    choices = config.get("_choices") or {}
    ds = str((config.get("dataset") or {}).get("name") or choices.get("dataset") or "dataset")
    grid_choice = str(choices.get("grid") or "grid")
    if config.get("_single") and len(cells) == 1:
        c = cells[0]
        parts = [ds, c.judge_name, *([c.prompt_name] if c.prompt_name != "none" else []), c.strategy.name]
        return slugify("-".join(parts))
    if ds == "demo" and grid_choice == "demo_offline" and not config.get("_grid_overridden"):
        return "demo"
    if not config.get("_grid_overridden"):
        return slugify(f"{ds}-{grid_choice}")
    return slugify(_axes_name(ds, cells) or f"{ds}-{grid_choice}-" + content_hash(sorted(c.id for c in cells))[:8])


def _axes_name(ds: str, cells: Sequence[Any], max_len: int = 80) -> str | None:
    """``<dataset>-<judges>-<prompts>-<strategies>`` for a grid typed on the command line (``-m`` or ``grid.*=``),
    each axis its values in grid order joined by ``.`` (``demo-lexical.lexical_strict-human_auto``); the same
    cells always give the same name.  None when that is longer than ``max_len`` (then a short hash names it)."""
    def axis(values: Any) -> str:
        return ".".join(dict.fromkeys(str(v) for v in values if v != "none"))

    parts = [ds, axis(c.judge_name for c in cells), axis(c.prompt_name for c in cells),
             axis(c.strategy.name for c in cells)]
    name = "-".join(p for p in parts if p)
    return name if len(name) <= max_len else None
