"""Settings of the calibrate workflow: defaults in one place, names checked, one-line errors."""

from __future__ import annotations

from typing import Any

SCHEMA = "metaeval.calibration/4"
MODEL_FORMAT = "metaeval-calibration-model"
#: ``raw``: the judge's own scores everywhere; ``composite``: human labels on the human-labelled topics, the raw
#: judge on the others (the naive estimate; no fitted correction).  Both are always candidates.
BASELINES = ("raw", "composite")
SCORE_LEVEL = BASELINES + ("ppi", "ppi_pp", "regression")
LABEL_LEVEL = ("posterior", "matrix", "matrix_unconstrained", "ordinal")
ALL_METHODS = SCORE_LEVEL + LABEL_LEVEL
#: earlier name of ``raw`` (still accepted in ``calibration.methods`` / ``--method``)
ALIASES = {"none": "raw"}
#: the method whose (bootstrap-t) intervals the leaderboard shows, whatever point estimate is chosen
INTERVALS = "ppi_pp"
FALLBACK = INTERVALS
#: what is shown when no decision can be made (too few human-labelled topics or runs): nothing fitted
DEFAULT_POINT = "composite"
DEFAULTS: dict[str, Any] = {"folds": 5, "inner_folds": 3, "repeats": 20, "nested_splits": 10, "win_share": 0.8,
                            "min_topics": 10, "n_boot_t": 999,
                            "methods": None,
                            "metrics": None, "metric": "v_strict", "level": 0.95, "min_coverage": 0.95,
                            "n_boot": 1000, "selection": "one_se", "options": {}, "workers": "auto"}


def resolve_settings(settings: dict[str, Any] | None) -> dict[str, Any]:
    """Defaults filled in, method and metric names checked (metrics case-insensitive: ``V_strict`` works).

    ``raw``, ``composite`` and ``ppi_pp`` (the interval method) are always candidates; ``none`` is read as
    ``raw``.  ``repeats`` = the random splits of the decision, ``nested_splits`` = how many of them the nested
    evaluation re-runs the whole decision inside; ``inner_folds``, ``win_share`` and ``selection`` are accepted
    and no longer used (one rule: :mod:`.procedure`)."""
    from metaeval.errors import ConfigError
    from metaeval.scoring import METRICS, normalize_metric

    s = {**DEFAULTS, **{k: v for k, v in (settings or {}).items() if v is not None}}
    methods = list(dict.fromkeys(ALIASES.get(m, m) for m in (s["methods"] or ALL_METHODS)))
    for always in (INTERVALS, "composite", "raw"):
        if always not in methods:
            methods.insert(0, always)
    bad = [m for m in methods if m not in ALL_METHODS]
    if bad:
        raise ConfigError(f"calibration.methods: unknown {', '.join(bad)}; expected {', '.join(ALL_METHODS)}")
    metrics = [normalize_metric(m) for m in (s["metrics"] or METRICS)]
    metric = normalize_metric(s["metric"])
    if metric not in metrics:
        metrics.insert(0, metric)
    bad = [m for m in metrics if m not in METRICS]
    if bad:
        raise ConfigError(f"calibration metric {bad[0]!r}; expected one of {', '.join(METRICS)} (any case)")
    if not 0 < float(s["level"]) < 1:
        raise ConfigError(f"calibration.level {s['level']}: expected a value between 0 and 1")
    if int(s["repeats"]) < 1:
        raise ConfigError(f"calibration.repeats {s['repeats']}: expected at least 1")
    if not 0.5 <= float(s["win_share"]) <= 1:
        raise ConfigError(f"calibration.win_share {s['win_share']}: expected a value between 0.5 and 1")
    from metaeval.forked import resolve_workers

    resolve_workers(s["workers"], 1)  # 'auto' or a whole number >= 1, else one line
    if int(s["min_topics"]) < 2:
        raise ConfigError(f"calibration.min_topics {s['min_topics']}: expected at least 2")
    if int(s["nested_splits"]) < 0 or int(s["n_boot_t"]) < 99:
        raise ConfigError(f"calibration.nested_splits {s['nested_splits']} / n_boot_t {s['n_boot_t']}: expected "
                          ">= 0 / >= 99")
    return {**s, "methods": methods, "nested_splits": int(s["nested_splits"]), "n_boot_t": int(s["n_boot_t"]), "metrics": metrics, "metric": metric, "folds": int(s["folds"]),
            "min_topics": int(s["min_topics"]),
            "inner_folds": int(s["inner_folds"]), "repeats": int(s["repeats"]), "win_share": float(s["win_share"]),
            "level": float(s["level"]), "min_coverage": float(s["min_coverage"]), "n_boot": int(s["n_boot"])}
