"""Defaults of the calibrate workflow in one place (``DEFAULTS``: ``metaeval calibrate``'s options, the sweep's
``calibration`` section and the typed ``CalibrationSettings`` of :mod:`metaeval.study.settings` read them), the
candidate method names, the file formats, and :func:`resolve_settings` (names checked, one-line errors).

Method names are the calibration-method registry's (``metaeval.calibration.methods``): ``ALL_METHODS``,
``SCORE_LEVEL`` and ``LABEL_LEVEL`` are live views of it, read at each use (a method registered from outside the
package is a candidate too), and importing this module imports no numpy (the command-line parser reads
``DEFAULTS``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metaeval.measures import DEFAULT_PRIMARY

SCHEMA = "metaeval.calibration/4"
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


#: ``raw``: the judge's own scores everywhere; ``composite``: human labels on the human-labelled topics, the raw
#: judge on the others (the naive estimate; no fitted correction).  Both apply the registry's ``none`` method and
#: are always candidates.
BASELINES = ("raw", "composite")


class StudyMethods(MethodNames):
    """The calibrate workflow's candidate names: ``raw`` and ``composite`` (the registry's ``none`` in its two
    roles) first, then every other registered method."""

    def _names(self) -> tuple[str, ...]:
        names = super()._names()
        return names if self.level == "label" else BASELINES + tuple(n for n in names if n != "none")


SCORE_LEVEL = StudyMethods("score")
LABEL_LEVEL = StudyMethods("label")
ALL_METHODS = StudyMethods()
#: earlier name of ``raw`` (still accepted in ``calibration.methods`` / ``--method``)
ALIASES = {"none": "raw"}
#: the method whose intervals the leaderboard shows, whatever point estimate is chosen
INTERVALS = "ppi_pp"
#: what is shown when no decision can be made (too few human-labelled topics or runs): nothing fitted
DEFAULT_POINT = "composite"
#: every default of the calibrate workflow
DEFAULTS: dict[str, Any] = {"folds": 5, "inner_folds": 3, "repeats": 20, "nested_splits": 10, "win_share": 0.8,
                            "min_topics": 10, "n_boot_t": 999,
                            "methods": None,
                            "metrics": None, "metric": DEFAULT_PRIMARY, "level": 0.95, "min_coverage": 0.95,
                            "n_boot": 1000, "selection": "one_se", "options": {}, "workers": "auto"}
#: the calibration seed (folds and parameter draws; an argument of ``calibrate_study``, ``calibration.seed``)
SEED_DEFAULT = 0


def resolve_settings(settings: dict[str, Any] | None) -> dict[str, Any]:
    """Defaults filled in, method and metric names checked (any alias of ``metaeval.measures.measure``: ``V_strict``
    works).  A sweep passes its ``analysis.metrics`` and primary metric; ``metric`` defaults to V_strict otherwise.

    ``raw``, ``composite`` and ``ppi_pp`` (the interval method) are always candidates; ``none`` is read as
    ``raw``.  ``repeats`` = the random splits of the decision, ``nested_splits`` = how many of them the nested
    evaluation re-runs the whole decision inside; ``inner_folds``, ``win_share`` and ``selection`` are accepted
    and no longer used (one rule: :mod:`.procedure`)."""
    from metaeval.errors import ConfigError
    from metaeval.measures import METRICS, canonical_metrics

    s = {**DEFAULTS, **{k: v for k, v in (settings or {}).items() if v is not None}}
    methods = list(dict.fromkeys(ALIASES.get(m, m) for m in (s["methods"] or ALL_METHODS)))
    for always in (INTERVALS, "composite", "raw"):
        if always not in methods:
            methods.insert(0, always)
    bad = [str(m) for m in methods if m not in ALL_METHODS]
    if bad:
        raise ConfigError(f"calibration.methods: unknown {', '.join(bad)}; expected {', '.join(ALL_METHODS)}")
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
    if int(s["nested_splits"]) < 0 or int(s["n_boot_t"]) < 99:
        raise ConfigError(f"calibration.nested_splits {s['nested_splits']} / n_boot_t {s['n_boot_t']}: expected "
                          ">= 0 / >= 99")
    return {**s, "methods": methods, "nested_splits": int(s["nested_splits"]), "n_boot_t": int(s["n_boot_t"]), "metrics": metrics, "metric": metric, "folds": int(s["folds"]),
            "min_topics": int(s["min_topics"]),
            "inner_folds": int(s["inner_folds"]), "repeats": int(s["repeats"]), "win_share": float(s["win_share"]),
            "level": float(s["level"]), "min_coverage": float(s["min_coverage"]), "n_boot": int(s["n_boot"])}
