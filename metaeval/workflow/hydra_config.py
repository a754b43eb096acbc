"""Hydra at the edge: compose the configuration with Hydra's public compose API, the only place that sees a
DictConfig.

* The package's own ``metaeval/conf`` is the base config folder; a ``conf/`` folder in the working directory and
  ``--config-dir DIR`` folders overlay it (searched first: a user's ``conf/judge/x.yaml`` adds a judge, a file
  with a shipped name replaces the shipped one).  The search order is given to Hydra publicly
  (:class:`Composer`): the folders as ``hydra.searchpath`` (which Hydra searches in order), after a primary
  config folder of ``hydra.initialize_config_dir`` that holds only ``config.yaml`` (:func:`primary_folder`).
* ``compose_config(overrides)`` returns a plain, resolved dict, checked against the typed settings
  (``metaeval.workflow.settings``: one line naming the key on a bad value).
* Hydra's errors become one line: a key that is not in the config names the nearest key
  (``sweep.budjet_usd is not a setting; did you mean budget_usd?``), an option that does not exist the nearest
  option (``judge=lexcial: no such judge; did you mean lexical?``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from metaeval.errors import ConfigError
from metaeval.judges.catalog import PACKAGE_CONF, default_config_dirs


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


def search_path(overlays: Sequence[Path]) -> list[Path]:
    """The config folders in lookup order (first match wins): the overlays, then the package's conf."""
    return [*overlays, PACKAGE_CONF]


def searchpath_override(folders: Sequence[Path]) -> str:
    """``hydra.searchpath=['file:///a', ...]``: Hydra's public override for folders searched after the primary
    one, each a quoted string (a path may hold a comma, a space or a quote)."""
    def quoted(folder: Path) -> str:
        text = f"file://{folder}".replace("'", "\\'")
        return f"'{text}'"

    return "hydra.searchpath=[" + ",".join(quoted(f) for f in folders) + "]"


def primary_folder(folders: Sequence[Path]) -> Path:
    """A folder holding only the primary config, ``config.yaml``, as the first of ``folders`` that has one holds
    it: a private temporary folder per content, removed when the process exits."""
    import atexit
    import hashlib
    import shutil
    import tempfile

    global _PRIMARY_ROOT
    source = next((Path(f, "config.yaml") for f in folders if Path(f, "config.yaml").is_file()), None)
    text = source.read_bytes() if source is not None else b""
    if _PRIMARY_ROOT is None:
        _PRIMARY_ROOT = Path(tempfile.mkdtemp(prefix="metaeval-conf-"))
        owner = os.getpid()  # a forked child that exits normally must not remove its parent's folder

        def remove(root: Path = _PRIMARY_ROOT) -> None:
            if os.getpid() == owner:
                shutil.rmtree(root, ignore_errors=True)

        atexit.register(remove)
    folder = _PRIMARY_ROOT / hashlib.sha256(text).hexdigest()[:16]
    if not (folder / "config.yaml").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        if source is not None:
            tmp = folder / f".config.{os.getpid()}.tmp"
            tmp.write_bytes(text)
            tmp.replace(folder / "config.yaml")
    return folder


#: the process's folder of primary-config folders (:func:`primary_folder`)
_PRIMARY_ROOT: Path | None = None


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


def one_line(exc: BaseException) -> str:
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


class Composer:
    """A Hydra compose context (Hydra's public compose API) over the overlay folders and then the package conf."""

    def __init__(self, dirs: list[Path]):
        self.dirs = dirs

    def __enter__(self) -> "Composer":
        from hydra import initialize_config_dir

        from metaeval.security.secrets import install_env_recorder

        install_env_recorder()  # every credential-like ${oc.env:VAR} resolved here becomes a known secret
        folders = search_path(self.dirs)
        # Hydra looks the primary config up in its primary config folder before it reads ``hydra.searchpath``
        # (whose folders it appends, in order).  So with overlays the primary folder holds only the primary config
        # (``config.yaml``, the first on the search path), and every folder follows as ``hydra.searchpath``: a
        # user's file with a shipped name wins (Hydra's public compose API only, no search path internals)
        primary = primary_folder(folders) if self.dirs else folders[0]
        self._ctx = initialize_config_dir(config_dir=str(primary), version_base=None, job_name="metaeval")
        self._ctx.__enter__()
        _store_registry_judges(folders)
        self._searchpath = [searchpath_override(folders)] if self.dirs else []
        return self

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)

    def compose(self, overrides: list[str], hydra: bool = False):
        import yaml
        from hydra import compose
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException

        try:
            return compose(config_name="config", overrides=[*overrides, *self._searchpath], return_hydra_config=hydra)
        except (HydraException, OmegaConfBaseException, yaml.YAMLError) as exc:  # a broken user file too
            raise (self._unknown_key(overrides, exc) or unknown_option(exc)
                   or ConfigError(f"config: {one_line(exc)}")) from None

    def _unknown_key(self, overrides: list[str], exc: BaseException) -> ConfigError | None:
        """Hydra's "Could not override 'a.b'. To append ... use +a.b" for a key that is not in the config, turned
        into the nearest-name error (``sweep.budjet_usd is not a setting; did you mean budget_usd?``) in one step
        (the ``+`` Hydra suggests would only lead there); None when the message is another one."""
        import re

        path = not_overridable(exc)
        if path is None:
            return None
        rest = [o for o in overrides if not re.match(rf"^{re.escape(path)}\s*=", o)]
        try:
            from hydra import compose
            from omegaconf import OmegaConf

            cfg = compose(config_name="config", overrides=[*rest, *self._searchpath])
            parent = OmegaConf.select(cfg, path.rsplit(".", 1)[0])
            given = path
            while parent is None and path.count(".") > 1:  # judge.deployment.model: judge has no deployment
                path = path.rsplit(".", 1)[0]
                parent = OmegaConf.select(cfg, path.rsplit(".", 1)[0])
        except Exception:  # noqa: BLE001 - the original message stands
            return None
        err = not_a_setting(path, parent)
        if (err is not None and path != given and path.startswith("judge.") and OmegaConf.is_dict(parent)
                and parent.get("judge")):
            # a judge without that block (an offline judge has no deployment): say so, not Hydra's '+key'
            err = ConfigError(f"judge {parent.get('name') or parent.get('judge')} has no {path.split('.')[1]} "
                              f"setting; {err}")
        return err


def unknown_option(exc: BaseException) -> ConfigError | None:
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


def not_overridable(exc: BaseException) -> str | None:
    """The dotted key of Hydra's "Could not override 'a.b'" (a key not in the config), else None."""
    import re

    m = re.search(r"Could not override '([\w.]+)'", str(exc))
    return m.group(1) if m and "." in m.group(1) else None


def not_a_setting(path: str, parent: Any) -> ConfigError | None:
    """``path`` (``where.key``) is not among ``parent``'s keys: the one-line nearest-name error, or None."""
    from omegaconf import OmegaConf

    from metaeval.schema import unknown_key_error

    if not OmegaConf.is_dict(parent) and not isinstance(parent, dict):
        return None
    where, key = path.rsplit(".", 1)
    return unknown_key_error(where, key, [str(k) for k in parent.keys()])


def plain(cfg: Any) -> dict[str, Any]:
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        return OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except OmegaConfBaseException as exc:
        raise ConfigError(f"config: {one_line(exc)}") from None


def compose_config(overrides: Sequence[str], config_dir: Any = None, *, hydra: bool = False) -> dict[str, Any]:
    """The composed config as a plain dict, every section checked (``metaeval.workflow.settings``).
    ``hydra=True`` adds ``_choices`` (group -> option)."""
    return compose_checked(overrides, config_dir, hydra=hydra)[0]


def compose_checked(overrides: Sequence[str], config_dir: Any = None, *, hydra: bool = False):
    """(the plain composed config, its typed sections: ``metaeval.workflow.settings.check_sections``)."""
    from metaeval.workflow.settings import check_sections

    with Composer(overlay_dirs(config_dir)) as c:
        cfg = c.compose(list(overrides), hydra=True)
        from omegaconf import open_dict

        choices = plain(cfg.hydra.runtime.choices)
        with open_dict(cfg):
            del cfg["hydra"]
        config = plain(cfg)
    from metaeval.security.secrets import secret_in_config

    secret_in_config(config)  # a key's value in a name, path or parameter: one line, before any check prints it
    sections = check_sections(config)
    if hydra:
        config["_choices"] = {k: v for k, v in choices.items() if not k.startswith("hydra/")}
    return config, sections


