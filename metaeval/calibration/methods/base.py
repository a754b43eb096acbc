"""The calibration-method interface, THE registry of calibration methods, and the prediction they return.

Every calibration method - score-level (:mod:`metaeval.calibration.scorelevel`: fitted on paired per-answer
scores) and label-level (:mod:`.posterior`, :mod:`.matrix`, :mod:`.ordinal`: fitted on paired labels) - is one
class, registered with ``@register``; its class attributes say what every list of methods needs: ``name``,
``level`` (``score`` | ``label``), ``display`` (as typeset in tables), ``gives_ci`` (whether it gives intervals)
and ``description``.  Every list of method names (the command-line checks, the calibrate workflow's candidates,
the simulation harness, the report's display names) asks the registry: :func:`method_names`, :func:`get_method`,
:func:`display_names`.  A method registered from outside the package (a module that defines a subclass with
``@register``) is a candidate everywhere once that module is imported.

A label-level method is fitted on the (nugget, answer) pairs of *calibration* topics that carry both a judge label and
a human label, and applied to judge labels elsewhere.  A fitted model is a plain JSON-ready ``dict`` (the
``method`` key names its class), so a saved model file is human-readable and ``apply`` works the same on a
freshly fitted model and on one loaded from disk.

``apply`` returns corrected per-answer scores (the expected human score of each answer, used for tau at the
topic and pooled levels) and corrected run scores with a standard error and a confidence interval for each
metric.  The interval targets the run score that human assessors would have given on the *applied* topics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from metaeval.calibration.pairs import METRICS, Pairs
from metaeval.errors import ConfigError

MODEL_VERSION = 1
#: the shrinkage prior strength of the posterior and matrix corrections, in pseudo-pairs (``metaeval calibrate --kappa``)
KAPPA = 10.0


@dataclass
class ArrayPrediction:
    """Per-answer and per-run corrected scores as arrays aligned with a ``Pairs`` (answers / ``run_ids``)."""

    answers: dict[str, np.ndarray]
    run: dict[str, np.ndarray]
    se: dict[str, np.ndarray] = field(default_factory=dict)
    lo: dict[str, np.ndarray] = field(default_factory=dict)
    hi: dict[str, np.ndarray] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)


class CalibrationMethod:
    """Base class of the label-level methods: subclasses set ``name``, ``display``, ``gives_ci``, ``description``
    and implement ``fit_pairs`` / ``apply_pairs`` (score-level methods: :class:`ScoreMethod`)."""

    name: str = ""
    #: ``label``: fitted on (nugget, answer) label pairs (``fit_pairs``); ``score``: on per-answer scores
    level: str = "label"
    #: the name tables print (``PPI++``); defaults to ``name``
    display: str = ""
    gives_ci: bool = True
    description: str = ""
    #: extra ``fit_pairs`` options for a fit whose point predictions only are used (inner cross-fitting folds)
    point_fit_options: dict[str, Any] = {}
    #: True when ``apply_pairs`` takes ``answers=False``: run scores only (``ArrayPrediction.answers`` left
    #: empty), the same numbers, for callers that read no per-answer score
    answers_optional: bool = False

    def fit_pairs(self, judge: Pairs, human: np.ndarray, **options: Any) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply_pairs(self, model: dict, judge: Pairs, metrics: Sequence[str] = METRICS, level: float = 0.95,
                    rng: np.random.Generator | None = None,
                    point_only: bool = False) -> ArrayPrediction:  # pragma: no cover - abstract
        """Corrected per-answer and run scores of ``judge``'s pairs; ``se``/``lo``/``hi`` per run (label noise, plus
        the model's sampling spread over draws from ``rng`` when given).  ``point_only``: the estimates only, no
        variance work (``se``/``lo``/``hi`` left empty; the estimates are the same numbers)."""
        raise NotImplementedError


class ScoreMethod(CalibrationMethod):
    """Base class of the score-level methods (:mod:`metaeval.calibration.scorelevel`): ``fit_scores(H, J)`` on
    training (topic, run) score matrices returns a JSON-ready model; ``apply_scores(model, J, level)`` gives the
    run estimates on the applied topics (a ``scorelevel.RunEstimate``, intervals inside [0, 1])."""

    level = "score"

    def fit_scores(self, H: np.ndarray, J: np.ndarray) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply_scores(self, model: dict, J: np.ndarray, level: float = 0.95):  # pragma: no cover - abstract
        raise NotImplementedError


#: method name -> class, in registration order (read it through ``method_names`` / ``get_method``)
REGISTRY: dict[str, type[CalibrationMethod]] = {}
LEVELS: tuple[str, ...] = ("score", "label")


def register(cls: type[CalibrationMethod]) -> type[CalibrationMethod]:
    """Class decorator: add a calibration method to the registry (a name may not be taken twice)."""
    if not cls.name or cls.level not in LEVELS:
        raise ConfigError(f"calibration method {cls.__name__}: needs a name and a level in {', '.join(LEVELS)}")
    old = REGISTRY.get(cls.name)
    if old is not None and old.__qualname__ != cls.__qualname__:
        raise ConfigError(f"calibration method {cls.name!r} is already registered ({old.__module__}.{old.__qualname__})")
    REGISTRY[cls.name] = cls
    return cls


def _filled() -> dict[str, type[CalibrationMethod]]:
    from metaeval.calibration import methods as _m  # noqa: F401  (fills the registry with the built-in methods)

    return REGISTRY


def method_names(level: str | None = None) -> tuple[str, ...]:
    """Registered method names, score-level first (the order candidates are tried and listed); ``level`` filters."""
    reg = _filled()
    return tuple(n for lv in LEVELS if level in (None, lv) for n, c in reg.items() if c.level == lv)


def get_method(name: str) -> CalibrationMethod:
    reg = _filled()
    if name not in reg:
        raise ConfigError(f"unknown calibration method {name!r}; expected one of {', '.join(method_names())}")
    return reg[name]()


def check_names(names: Sequence[str], where: str = "calibration.methods") -> list[str]:
    """``names`` as a list when every one is a registered method, else one ``ConfigError`` line naming the unknown
    ones and the registered ones (``where`` names the setting or option)."""
    known = method_names()
    bad = [str(m) for m in names if m not in known]
    if bad:
        raise ConfigError(f"{where}: unknown {', '.join(bad)}; expected {', '.join(known)}")
    return list(names)


def display_names(names: Sequence[str] | None = None) -> dict[str, str]:
    """``{name: display name}`` of ``names`` (default every registered method)."""
    reg = _filled()
    return {n: (reg[n].display or n) if n in reg else n for n in (method_names() if names is None else names)}


@lru_cache(maxsize=64)
def z_value(level: float) -> float:
    """Two-sided normal quantile ``Phi^-1(0.5 + level / 2)`` (cached: cross-fitting asks for it thousands of times)."""
    from scipy.special import ndtri  # what scipy.stats.norm.ppf evaluates, without importing scipy.stats

    return float(ndtri(0.5 + level / 2.0))


def normal_ci(est: np.ndarray, se: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    z = z_value(level)
    return est - z * se, est + z * se


def check_training(judge: Pairs, human: np.ndarray) -> np.ndarray:
    """Mask of pairs usable for fitting (human label valid); errors when there are none."""
    human = np.asarray(human)
    if human.shape != judge.sup.shape:
        raise ConfigError(f"human labels ({human.shape[0]}) do not align with judge pairs ({judge.sup.shape[0]})")
    ok = human >= 0
    if not ok.any():
        raise ConfigError("no (nugget, answer) pair carries both a human and a judge label: nothing to calibrate on")
    return ok


def credit_moments(prob: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """From P(human = k), k = 0/1/2 (shape (..., 3)): mean and variance of strict and partial credit."""
    p1, p2 = prob[..., 1], prob[..., 2]
    strict = p2
    partial = p2 + 0.5 * p1
    v_strict = p2 * (1.0 - p2)
    v_partial = p2 + 0.25 * p1 - partial ** 2
    return strict, partial, v_strict, np.maximum(v_partial, 0.0)


def expected_credit_prediction(judge: Pairs, prob: np.ndarray, prob_draws: "np.ndarray | tuple | None",
                               metrics: Sequence[str], level: float, point_only: bool = False) -> ArrayPrediction:
    """Scores from per-pair label probabilities ``prob`` (n, 3) of the human label.

    Run-score variance = label-noise part ``sum_i omega_i^2 Var(credit_i)`` (pairs independent given the
    model) + parameter part, the variance of the run score over ``prob_draws`` (B, n, 3) drawn from the
    fitted model's sampling distribution (None: no parameter part).  ``point_only``: the estimates only.
    """
    from metaeval.calibration.pairs import METRIC_SPEC

    strict, partial, v_s, v_p = credit_moments(prob)
    per_answer = judge.answer_scores(strict, partial, metrics)
    pr = ArrayPrediction(answers=per_answer, run={})
    prun = judge.pair_run()
    nr, n = len(judge.run_ids), len(prun)
    draws = None
    if prob_draws is not None:  # only the draws' mean credits are needed (credit_moments' first two outputs),
        # pair-major (n, B) so that the run sums below read them contiguously; a (P(partial), P(support)) pair of
        # (B, n) arrays is accepted in place of the (B, n, 3) stack
        d1, d2 = prob_draws if isinstance(prob_draws, tuple) else (prob_draws[..., 1], prob_draws[..., 2])
        p1 = np.ascontiguousarray(d1.T)
        p2 = np.ascontiguousarray(d2.T)
        draws = (p2, p2 + 0.5 * p1)
    weights: dict[str, tuple] = {}
    for m in metrics:
        family, is_strict = METRIC_SPEC[m]
        est = judge.run_means(per_answer[m])
        pr.run[m] = est
        if point_only:
            continue
        if family not in weights:
            w = judge.run_weights(family)
            S = None
            if draws is not None:  # run-by-pair weight matrix: runs_b = S @ credits sums each run's pairs in pair
                from scipy import sparse  # order, as bincount(prun, w * credit) per draw does (bit-identical)

                S = sparse.csr_matrix((w, (prun, np.arange(n))), shape=(nr, n))
            weights[family] = (w, S)
        w, S = weights[family]
        var = np.bincount(prun, weights=w ** 2 * (v_s if is_strict else v_p), minlength=nr)
        if draws is not None:
            c = draws[0] if is_strict else draws[1]
            runs_b = np.ascontiguousarray((S @ c).T)  # (B, nr)
            var = var + runs_b.var(axis=0, ddof=1)
        se = np.sqrt(var)
        pr.se[m] = se
        pr.lo[m], pr.hi[m] = normal_ci(est, se, level)
    return pr
