"""The prompt-injection workflow of ``metaeval probe``: resolve and check the judge (``--base-url`` replacing its
deployment's), run the probe (:func:`metaeval.security.injection.run_probe`: the dataset's human nuggets assigned to
original answers and to the same answers with planted instructions; flip and upward rates per phrasing), say
whether any label was usable (:func:`metaeval.pipeline.health.unusable_stage`), and write the result as JSON (:func:`write_probe`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence


@dataclass(frozen=True)
class ProbeRun:
    """What ``metaeval probe`` measured: the probe's document (with every label pair) and the health ``problem``
    (None unless every label of the probe FAILED: no flip rate was measured)."""

    result: dict
    problem: str | None


def probe(judge: str, *, config_dirs: Sequence[str] = (), base_url: str | None = None, concurrency: int = 4,
          **options: Any) -> ProbeRun:
    """Probe ``judge`` (a registry name, config name or file).  ``options``: ``dataset``, ``prompt``,
    ``n_answers``, ``seed``, ``probes`` of :func:`~metaeval.security.injection.run_probe`.  A ``base_url`` for a judge without a deployment, or
    ``concurrency < 1``, is one :class:`~metaeval.errors.ConfigError` line before any call."""
    from metaeval.errors import ConfigError
    from metaeval.judges.catalog import check_available, default_config_dirs, resolve_judge
    from metaeval.pipeline.health import unusable_stage
    from metaeval.security.injection import run_probe

    spec = resolve_judge(judge, config_dirs=default_config_dirs(config_dirs or ()))
    if base_url:
        if spec.deployment is None:
            raise ConfigError(f"--base-url: judge {judge!r} has no deployment")
        spec = spec.with_deployment(base_url=base_url)
    check_available(spec, ("assign",))
    if concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    result = run_probe(spec, concurrency=concurrency, **options)
    pairs = result.get("pairs") or []
    usable = sum(p["original"] != "FAILED" for p in pairs) + sum(p["injected"] != "FAILED" for p in pairs)
    return ProbeRun(result, unusable_stage("assignment", usable=usable, total=2 * len(pairs)))


def write_probe(result: dict, out: str, keep_pairs: bool = False) -> None:
    """The probe's document as JSON at ``out``, without the label pairs unless ``keep_pairs``."""
    import json

    from metaeval.io.atomic import atomic_write_text

    kept = result if keep_pairs else {k: v for k, v in result.items() if k != "pairs"}
    atomic_write_text(out, json.dumps(kept, indent=1, ensure_ascii=False) + "\n")
