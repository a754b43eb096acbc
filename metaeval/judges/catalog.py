"""The judge catalog: the ONE place that turns a judge name or mapping into a typed, validated ``JudgeSpec``.

A name is looked up, in order, as

1. a ``.yaml`` / ``.yml`` / ``.json`` file path (a judge config, or a bare deployment with ``backend``);
2. a config name ``judge/NAME.yaml`` in the config folders: a ``conf/`` folder in the working directory, then
   ``--config-dir`` folders, then the package's own ``metaeval/conf`` (so ``gpt-4o``, ``testserver`` or a user's
   ``./conf/judge/myjudge.yaml`` resolve the same way for ``sweep``, ``judge check`` and ``probe``);
3. a registry name (``metaeval.judges.registry.JUDGES``: ``lexical``, ``llm``, ...) with default options.

The spec is built and checked in the driver (``check_available``) before any job runs: an unknown judge, a stage
the judge class does not declare in ``Judge.STAGES``, a missing API-key variable or a missing optional extra is
one ``ConfigError`` line.  Workers receive the spec (``build_judge``), never an untyped dict.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from metaeval.errors import ConfigError
from metaeval.schema import nearest
from metaeval.judges.config import Deployment, Limits, Prices, load_config_file

#: every stage a judge may perform, in pipeline order
ALL_STAGES: tuple[str, ...] = ("relevance", "create", "importance", "assign")
#: judge kinds whose output depends on the prompt templates
PROMPTED: frozenset[str] = frozenset({"llm", "local-llm"})
#: catalog-only keys of a judge config (not passed to the judge class)
CATALOG_KEYS: tuple[str, ...] = ("requires", "label")
#: keys every judge config may hold (read by the catalog, the grid or the pipeline, not by the judge class)
COMMON_KEYS: tuple[str, ...] = ("judge", "name", "concurrency", "cache", *CATALOG_KEYS)
#: the package's own config folder (Hydra groups: judge, prompt, strategy, ...)
PACKAGE_CONF: Path = Path(__file__).resolve().parent.parent / "conf"


def default_config_dirs(extra: Sequence[str | os.PathLike] = ()) -> tuple[Path, ...]:
    """Config folders in lookup order: ``./conf`` (when present), ``extra`` (``--config-dir``), the package's."""
    out: list[Path] = []
    for cand in (Path.cwd() / "conf", *map(Path, extra), PACKAGE_CONF):
        p = cand.resolve()
        if p.is_dir() and p not in out:
            out.append(p)
    return tuple(out)


#: judge-config keys that do not change a judge's output, so they are not part of its identity (the job keys): the
#: catalog's own keys, the prompt selection (hashed apart, as the cell's prompt id), the response cache, and where /
#: how calls are made or what they cost when a judge without a deployment carries them at the top level
NOT_IDENTITY: frozenset[str] = frozenset({"prompts", "cache", "supports", "requires", "label", "limits", "prices",
                                          "api_key_env", "base_url", "replicas", "resources", "mode", "batch"})


@dataclass(frozen=True)
class JudgeSpec:
    """A validated judge: what the driver checks and what a worker builds its judge from.

    ``config`` is the judge config as resolved, its ``deployment`` (an llm judge) the typed ``Deployment`` - the
    only copy of it, from composition to the HTTP client (``deployment`` reads it).  The job identity is declared:
    :meth:`identity` (``NOT_IDENTITY`` and ``Deployment.IDENTITY_FIELDS``).
    """

    name: str
    kind: str
    config: dict[str, Any] = field(compare=False)
    capabilities: tuple[str, ...] = ALL_STAGES
    requires: tuple[str, ...] = ()
    concurrency: int = 4
    source: str = "registry"
    #: repeated draws of one call can differ (``Judge.SAMPLING``): ``sweep.samples`` > 1 applies to it
    sampling: bool = False

    @property
    def deployment(self) -> Deployment | None:
        """The typed deployment (an llm judge), else None."""
        dep = self.config.get("deployment")
        return dep if isinstance(dep, Deployment) else None

    @property
    def prompted(self) -> bool:
        return self.kind in PROMPTED

    def identity(self) -> dict[str, Any]:
        """What changes this judge's output, the part of every job key that names the judge
        (``metaeval.pipeline.specs.judge_identity`` hashes it): its options without ``NOT_IDENTITY``, and the
        deployment's ``Deployment.identity()`` (name, backend, model, generation params, revision - never retries,
        timeouts, concurrency, the URL or the prices).  The rendered messages and the sample index are in the job
        spec itself (``inputs``, ``prompt``, ``sample``)."""
        out = {k: v for k, v in self.config.items() if k not in NOT_IDENTITY and k != "deployment"}
        if self.deployment is not None:
            out["deployment"] = self.deployment.identity()
        return out

    @property
    def key_env(self) -> str | None:
        return self.deployment.api_key_env if self.deployment else None

    @property
    def prices(self) -> Prices:
        """The prices its calls pay: the batch prices when ``deployment.mode`` is ``batch`` (dry run, budget)."""
        return self.deployment.effective_prices if self.deployment else Prices()

    @property
    def limits(self) -> Limits | None:
        return self.deployment.limits if self.deployment else None

    @property
    def prompts(self) -> dict[str, str]:
        return dict(self.config.get("prompts") or {})

    def with_options(self, **options: Any) -> "JudgeSpec":
        """The same judge with some config options replaced (prompts, cache, a resolved reference)."""
        return replace(self, config={**self.config, **options})

    def with_deployment(self, **changes: Any) -> "JudgeSpec":
        """The same judge with deployment fields replaced (``base_url=...``, a replica's share of the ``limits``):
        the one typed deployment is replaced; nothing is parsed again."""
        if self.deployment is None:
            raise ConfigError(f"judge {self.name!r} has no deployment")
        return replace(self, config={**self.config, "deployment": self.deployment.replaced(**changes)})

    def missing_requirements(self) -> list[str]:
        """Modules named in ``requires`` that are not importable (an optional extra not installed)."""
        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    def public_dict(self) -> dict[str, Any]:
        """The config without secrets or in-memory objects (the deployment never holds the key)."""
        out = {k: v for k, v in self.config.items() if k not in ("reference", "labels") or isinstance(v, (str, type(None)))}
        out.pop("deployment", None)
        if self.deployment is not None:
            out["deployment"] = self.deployment.public_dict()
        return out


def judge_names(config_dirs: Sequence[str | os.PathLike] | None = None) -> dict[str, Path]:
    """Config name -> file over the config folders (earlier folders win)."""
    out: dict[str, Path] = {}
    for d in (default_config_dirs() if config_dirs is None else map(Path, config_dirs)):
        for p in sorted(Path(d, "judge").glob("*.yaml")):
            out.setdefault(p.stem, p)
    return out


def resolve_judge(spec: "str | Mapping[str, Any] | JudgeSpec", *, config_dirs: Sequence[str | os.PathLike] | None = None,
                  name: str | None = None, source: str | None = None) -> JudgeSpec:
    """A ``JudgeSpec`` from a name (file path, config name, registry name), a mapping, or a spec (returned as is)."""
    from metaeval.judges.registry import JUDGES

    if isinstance(spec, JudgeSpec):
        return spec
    source = source or "mapping"
    if isinstance(spec, Mapping):
        config = dict(spec)
    elif isinstance(spec, (str, os.PathLike)):
        text = str(spec)
        names = judge_names(config_dirs)
        if Path(text).suffix in (".yaml", ".yml", ".json"):
            config, source = load_config_file(text), text
        elif text in names:
            config, source = load_config_file(names[text]), str(names[text])
            config.setdefault("name", text)
        elif text in JUDGES:
            config, source = {"judge": text}, "registry"
        else:
            raise ConfigError(f"unknown judge {text!r}; config names: {', '.join(sorted(names)) or '(none)'}; "
                              f"registry names: {', '.join(sorted(JUDGES))}; or a .yaml/.json judge file")
    else:
        raise ConfigError(f"a judge is a name or a mapping, got {type(spec).__name__}")
    return _typed(config, source, name)


def _typed(config: dict[str, Any], source: str, name: str | None) -> JudgeSpec:
    from metaeval.judges.registry import judge_class

    where = f"judge {name or config.get('name') or config.get('judge') or '?'} ({source})"
    if "judge" not in config:
        if "backend" in config:  # a bare deployment means an llm judge
            config = {"judge": "llm", "deployment": config}
        else:
            raise ConfigError(f"{where}: needs a 'judge' field (a registry name) or a deployment 'backend'")
    kind = config["judge"]
    if not isinstance(kind, str):
        raise ConfigError(f"{where}: field 'judge' must be a string, got {kind!r}")
    cls = judge_class(kind)
    deployment = None
    if config.get("deployment") is not None:
        deployment = Deployment.from_dict(config["deployment"], where=f"{where}: deployment")
        config = {**config, "deployment": deployment}  # typed once, here: the only copy from now on
        if deployment.mode == "batch":  # batch settings checked here, before any job, not when the backend is built
            from metaeval.judges.backends import backend_class
            from metaeval.judges.batch import BatchSettings

            BatchSettings.from_dict(deployment.batch, backend_class(deployment), where=f"{where}: deployment.batch")
    elif kind == "llm":
        raise ConfigError(f"{where}: an llm judge needs a 'deployment' mapping")
    options = getattr(cls, "OPTIONS", None)  # a class that declares its options: any other key is a typo
    if options is not None:
        allowed = (*options, *COMMON_KEYS)
        for key in config:
            if key not in allowed:
                raise ConfigError(f"{where}: {key} is not an option{nearest(str(key), allowed)} "
                                  f"(options of {kind}: {', '.join(options)})")
    try:  # options typed by the judge class itself (declared on the class, checked here in the driver)
        cls.check_config({k: v for k, v in config.items() if k not in (*CATALOG_KEYS, "judge", "deployment")})
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    jname = str(name or config.get("name") or (deployment.name if deployment else kind))
    requires = config.get("requires") or ()
    if isinstance(requires, str) or not all(isinstance(r, str) for r in requires):
        raise ConfigError(f"{where}: 'requires' must be a list of module names")
    conc = deployment.limits.concurrency if deployment else config.get("concurrency", 4)
    if isinstance(conc, bool) or not isinstance(conc, int) or conc < 1:
        raise ConfigError(f"{where}: concurrency must be an integer >= 1, got {conc!r}")
    prompts = config.get("prompts")
    if prompts is not None and not isinstance(prompts, Mapping):
        raise ConfigError(f"{where}: 'prompts' must map a task to a template name")
    return JudgeSpec(name=jname, kind=kind, config=config,
                     capabilities=tuple(getattr(cls, "STAGES", ALL_STAGES)), requires=tuple(requires),
                     concurrency=int(conc), source=source, sampling=bool(getattr(cls, "SAMPLING", False)))


def lacking_stages(spec: JudgeSpec, stages: Sequence[str]) -> list[str]:
    """The stages in ``stages`` that the judge's class does not declare in ``STAGES``."""
    return [s for s in stages if s not in spec.capabilities]


def check_available(spec: JudgeSpec, stages: Sequence[str] = (), *, need_key: bool = True, strategy: str = "") -> None:
    """Raise one ``ConfigError`` line when the judge cannot run here: a stage it cannot do, an optional extra
    that is not installed, or (``need_key``) an API-key variable that is not set."""
    lacking = lacking_stages(spec, stages)
    if lacking:
        by = f" needed by strategy {strategy}" if strategy else ""
        raise ConfigError(f"judge {spec.name!r} ({spec.kind}) cannot perform stage(s) {', '.join(lacking)}{by}; "
                          f"it can: {', '.join(spec.capabilities)}")
    if spec.prompted:  # every named template must exist (a typo is one line here, not a FAILED job per unit)
        from metaeval.prompts import load_template

        for task, name in spec.prompts.items():
            if task not in ALL_STAGES:
                raise ConfigError(f"judge {spec.name!r}: prompts.{task} is not a stage ({', '.join(ALL_STAGES)})")
            try:
                load_template(str(name))
            except ConfigError as exc:
                raise ConfigError(f"judge {spec.name!r}: prompts.{task}: {exc}") from None
    missing = spec.missing_requirements()
    if missing:
        raise ConfigError(f"judge {spec.name!r} needs an extra that is not installed (missing {', '.join(missing)}); "
                          f"{install_hint(missing)}")
    if need_key and spec.key_env and not os.environ.get(spec.key_env, "").strip():
        raise ConfigError(f"judge {spec.name!r}: environment variable {spec.key_env} is not set "
                          f"(it must hold the API key for backend {spec.deployment.backend!r})")


def install_hint(modules: Sequence[str]) -> str:
    """``install it with: pip install 'metaeval[embed]'``: the package extras (``[project.optional-dependencies]``,
    read from the installed metadata) that provide the missing ``modules`` (a module matches a requirement whose
    distribution name, with ``-`` as ``_``, is or starts with it: ``llama_cpp`` -> ``llama-cpp-python``)."""
    import re
    from importlib import metadata

    try:
        reqs = metadata.requires("metaeval") or []
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree that is not installed
        reqs = []
    extras: list[str] = []
    for mod in modules:
        for r in reqs:
            m = re.match(r"\s*([A-Za-z0-9_.\-]+).*extra\s*==\s*['\"]([^'\"]+)['\"]", r)
            if m and m.group(1).lower().replace("-", "_").startswith(mod.lower()) and m.group(2) not in extras:
                extras.append(m.group(2))
                break
    if not extras:
        return f"install it with: pip install {' '.join(modules)}"
    return f"install it with: pip install 'metaeval[{','.join(extras)}]'"


def build_judge(spec: "JudgeSpec | str | Mapping[str, Any]"):
    """The judge object for a spec (in the worker).  Names and mappings are resolved first."""
    from metaeval.judges.registry import judge_class

    spec = resolve_judge(spec)
    config = {k: v for k, v in spec.config.items() if k not in CATALOG_KEYS}  # ``deployment``: the typed one
    return judge_class(spec.kind).from_config(config)
