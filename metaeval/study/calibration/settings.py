"""Settings of the calibrate workflow: defaults in one place (``DEFAULTS``: ``metaeval calibrate``'s options, the
sweep's ``calibration`` section and the typed ``CalibrationSettings`` read them), names checked, one-line errors.

Method names are the calibration-method registry's (``metaeval.calibration.methods``): ``ALL_METHODS``,
``SCORE_LEVEL`` and ``LABEL_LEVEL`` are live views of it, read at each use (a method registered from outside the
package is a candidate too), and importing this module imports no numpy (the command-line parser reads
``DEFAULTS``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metaeval.measures import DEFAULT_PRIMARY

SCHEMA = "metaeval.calibration/3"
MODEL_FORMAT = "metaeval-calibration-model"


class MethodNames(Sequence):
    """The registered calibration methods (of one ``level``: ``score`` | ``label``; None: all, score-level first),
    read from the registry at each use (``metaeval.calibration.methods.method_names``)."""

    def __init__(self, level: str | None = None):
        self.level = level

    def _names(self) -> tuple[str, ...]:
        from metaeval.calibration.methods import method_names

        return method_names(self.level)

    def __getitem__(self, i):  # type: ignore[override]
        return self._names()[i]

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __repr__(self) -> str:
        return f"MethodNames({self.level!r}: {', '.join(self._names())})"


SCORE_LEVEL = MethodNames("score")
LABEL_LEVEL = MethodNames("label")
ALL_METHODS = MethodNames()
#: the method whose intervals the leaderboard shows when the chosen one has none that qualify
FALLBACK = "ppi_pp"
#: every default of the calibrate workflow
DEFAULTS: dict[str, Any] = {"folds": 5, "inner_folds": 3, "repeats": 10, "win_share": 0.8, "min_topics": 10,
                            "methods": None,
                            "metrics": None, "metric": DEFAULT_PRIMARY, "level": 0.95, "min_coverage": 0.95,
                            "n_boot": 1000, "selection": "one_se", "options": {}, "workers": "auto"}
#: the calibration seed (folds and parameter draws; an argument of ``calibrate_study``, ``calibration.seed``)
SEED_DEFAULT = 0


def resolve_settings(settings: dict[str, Any] | None) -> dict[str, Any]:
    """Defaults filled in, method and metric names checked (any alias of ``metaeval.measures.measure``: ``V_strict``
    works).  A sweep passes its ``analysis.metrics`` and primary metric; ``metric`` defaults to V_strict otherwise.

    ``none`` (raw) and ``ppi_pp`` (the interval fallback) are always candidates."""
    from metaeval.errors import ConfigError
    from metaeval.measures import METRICS, canonical_metrics

    s = {**DEFAULTS, **{k: v for k, v in (settings or {}).items() if v is not None}}
    from metaeval.calibration.methods import check_names

    methods = list(s["methods"] or ALL_METHODS)
    for always in (FALLBACK, "none"):
        if always not in methods:
            methods.insert(0, always)
    check_names(methods)
    metrics = canonical_metrics(s["metrics"] or METRICS, "calibration metric")  # unknown: the nearest name
    metric = canonical_metrics([s["metric"]], "calibration metric")[0]
    if metric not in metrics:
        metrics.insert(0, metric)
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
    return {**s, "methods": methods, "metrics": metrics, "metric": metric, "folds": int(s["folds"]),
            "min_topics": int(s["min_topics"]),
            "inner_folds": int(s["inner_folds"]), "repeats": int(s["repeats"]), "win_share": float(s["win_share"]),
            "level": float(s["level"]), "min_coverage": float(s["min_coverage"]), "n_boot": int(s["n_boot"])}
