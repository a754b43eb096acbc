"""Cross-fitting engine: outer leave-topics-out folds, nested selection with raw as a candidate, held-out figures.

Candidates are score-level (:mod:`metaeval.calibration.scorelevel`: ``none`` = raw, ``ppi``, ``ppi_pp``,
``regression``) and, when the labels pair by nugget text, label-level (``posterior``, ``matrix``,
``matrix_unconstrained``, ``ordinal``).  With ``K`` outer folds of the human-labelled topics:

1. **outer**: for fold ``k`` every candidate is fitted on the other folds and applied to the judge labels of
   fold ``k``; the fold error is ``MAE_k = mean_r |theta_hat_r - H_r|`` over runs, ``H_r`` the reference run
   score on fold ``k``'s topics.  A candidate's held-out error is ``mean_k MAE_k`` with the fold SE
   ``sd_k(MAE_k) / sqrt(K)``; the comparison with raw uses the paired differences ``MAE_k(c) - MAE_k(none)``.
2. **nested**: inside each outer training set, ``inner_folds`` folds choose a candidate by the same rule; that
   choice is scored on outer fold ``k``.  The mean of those scores is the held-out error of the *whole
   procedure* (selection included), the honest figure for "calibrate, then pick what looked best".
3. **rule**: ``one_se`` (default): the lowest-error candidate is chosen only if it beats raw by more than one
   SE of the paired difference; otherwise ``none``.  ``min``: the lowest error, raw included.

4. **repeats** (:func:`repeated_crossfit`): steps 1-2 are run ``repeats`` times with independent fold
   assignments (stream ``calibration.crossfit``, one key per repeat).  One 5-fold split of ~20 topics is a
   t-test on 4 degrees of freedom; which method "wins" then depends on the seed.  Repeating the folds shows how
   often each method wins, and the nested error averaged over repeats no longer hangs on one split.

No candidate is ever evaluated on a topic it was fitted on (``check_disjoint``), and the nested selection of
outer fold ``k`` never sees fold ``k``'s topics (``FoldResult.inner_topics`` is checked disjoint from them).  The outer fold predictions
also give the cross-fitted (out-of-fold) corrected scores of every human-labelled topic.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

log = logging.getLogger(__name__)
RULES = ("one_se", "min")


def topic_folds(topics: np.ndarray, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Shuffle topic indices and deal them into ``k`` folds (sizes differ by at most one)."""
    from metaeval.errors import ConfigError

    topics = np.asarray(topics)
    if k < 2 or k > len(topics):
        raise ConfigError(f"folds={k}: need 2 <= K <= number of human-labelled topics ({len(topics)})")
    perm = rng.permutation(topics)
    return [np.sort(perm[i::k]) for i in range(k)]


def check_disjoint(fit_topics: Sequence[int], eval_topics: Sequence[int]) -> None:
    """Refuse to evaluate a calibration on topics it was fitted on."""
    overlap = set(np.asarray(fit_topics).tolist()) & set(np.asarray(eval_topics).tolist())
    if overlap:
        raise AssertionError(f"calibration evaluated on {len(overlap)} topic(s) it was fitted on")


@dataclass
class Prediction:
    """One candidate applied to some topics, for one metric: per-run arrays and per-answer (T_U, R) values."""

    est: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    se: np.ndarray
    answers: np.ndarray | None = None


#: fit(train_topic_idx) -> model ; apply(model, test_topic_idx, want_ci) -> {metric: Prediction}
FitFn = Callable[[np.ndarray], Any]
ApplyFn = Callable[[Any, np.ndarray, bool], dict[str, Prediction]]


@dataclass
class Candidate:
    name: str
    level: str  # "score" or "label"
    fit: FitFn
    apply: ApplyFn
    #: optional cheaper fit for point predictions only (``apply(model, test, want_ci=False)``), used where no
    #: interval is needed (the inner selection folds); it must give the same point predictions as ``fit``
    fit_point: FitFn | None = None
    #: False when the caller uses this candidate's point estimates only: the outer folds then skip its intervals
    #: too (``fit_point``, ``want_ci=False``), which moves none of its point estimates
    intervals: bool = True
    #: False only for raw: its whole-track score is the judge's everywhere, human labels included nowhere
    uses_labels: bool = True


@dataclass
class FoldResult:
    fold: int
    topics: np.ndarray
    truth: dict[str, np.ndarray]                      # metric -> (R,)
    n_topics: dict[str, np.ndarray]                   # metric -> (R,) reference topics per run in the fold
    preds: dict[str, dict[str, Prediction]]           # candidate -> metric -> prediction
    failed: dict[str, str] = field(default_factory=dict)
    nested_choice: dict[str, str] = field(default_factory=dict)  # metric -> candidate chosen by the inner folds
    inner_topics: np.ndarray | None = None            # every topic the nested selection fitted or scored on
    repeat: int = 0


def fold_mae(pred: Prediction, truth: np.ndarray) -> float:
    ok = np.isfinite(pred.est) & np.isfinite(truth)
    return float(np.abs(pred.est[ok] - truth[ok]).mean()) if ok.any() else float("nan")


def choose(errors: dict[str, np.ndarray], rule: str = "one_se") -> tuple[str, str]:
    """Pick a candidate from per-fold errors ``{name: (K,)}`` (``none`` must be present); returns (name, why)."""
    means = {c: float(np.nanmean(e)) for c, e in errors.items() if np.isfinite(e).any()}
    best = min(sorted(means), key=lambda c: (means[c], c != "none"))
    if best == "none":
        return "none", "no method has a lower held-out error than raw"
    if rule == "min":
        return best, f"lowest held-out error ({means[best]:.4f} vs raw {means['none']:.4f})"
    d = errors[best] - errors["none"]
    d = d[np.isfinite(d)]
    se = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("inf")
    if float(d.mean()) + se < 0:
        return best, f"beats raw by {-d.mean():.4f} (> one SE {se:.4f} of the paired fold differences)"
    return "none", (f"best method {best} beats raw by only {-d.mean():.4f} (within one SE {se:.4f} of the paired "
                    "fold differences): keep raw")


def _eval_folds(cands: Sequence[Candidate], plan: list[np.ndarray], all_topics: np.ndarray, truth_fn, metrics,
                want_ci: bool) -> list[FoldResult]:
    out = []
    for k, held in enumerate(plan):
        train = np.setdiff1d(all_topics, held)
        check_disjoint(train, held)
        truth, n_top = truth_fn(held)
        fr = FoldResult(k, held, truth, n_top, {})
        for c in cands:
            ci = want_ci and c.intervals
            fit = c.fit if ci or c.fit_point is None else c.fit_point
            try:
                model = fit(train)
                fr.preds[c.name] = c.apply(model, held, ci)
            except Exception as exc:  # a method that cannot fit this fold is recorded, never hidden
                if c.name == "none":
                    raise
                fr.failed[c.name] = f"{type(exc).__name__}: {exc}"
                log.info("candidate %s failed on fold %d: %s", c.name, k, exc)
        out.append(fr)
    return out


def fold_errors(folds: list[FoldResult], metric: str, names: Sequence[str]) -> dict[str, np.ndarray]:
    return {c: np.array([fold_mae(f.preds[c][metric], f.truth[metric]) if c in f.preds and metric in f.preds[c]
                         else np.nan for f in folds]) for c in names}


def crossfit(cands: Sequence[Candidate], labelled: np.ndarray, truth_fn, metrics: Sequence[str], folds: int = 5,
             inner_folds: int = 3, rule: str = "one_se", seed: int = 0, repeat: int = 0) -> list[FoldResult]:
    """Outer folds with nested selection; ``truth_fn(topic_idx) -> ({metric: (R,)}, {metric: n_topics (R,)})``.

    Folds come from ``random_streams.stream(seed, "calibration.crossfit", repeat)``."""
    from metaeval.errors import ConfigError
    from metaeval.random_streams import stream

    if rule not in RULES:
        raise ConfigError(f"selection rule {rule!r}; expected one of {', '.join(RULES)}")
    rng = stream(seed, "calibration.crossfit", repeat)
    plan = topic_folds(labelled, folds, rng)
    outer = _eval_folds(cands, plan, labelled, truth_fn, metrics, want_ci=True)
    names = [c.name for c in cands]
    for fr in outer:
        fr.repeat = repeat
        train = np.setdiff1d(labelled, fr.topics)
        fr.inner_topics = train
        check_disjoint(fr.inner_topics, fr.topics)
        k_in = min(inner_folds, len(train))
        if k_in < 2:
            fr.nested_choice = {m: "none" for m in metrics}
            continue
        inner_plan = topic_folds(train, k_in, rng)
        fr.inner_topics = np.unique(np.concatenate(inner_plan))
        check_disjoint(fr.inner_topics, fr.topics)
        inner = _eval_folds(cands, inner_plan, train, truth_fn, metrics, want_ci=False)
        for m in metrics:
            fr.nested_choice[m] = choose(fold_errors(inner, m, names), rule)[0]
    return outer


def repeated_crossfit(cands: Sequence[Candidate], labelled: np.ndarray, truth_fn, metrics: Sequence[str],
                      folds: int = 5, inner_folds: int = 3, rule: str = "one_se", seed: int = 0,
                      repeats: int = 5, workers: int | str | None = 1) -> list[list[FoldResult]]:
    """:func:`crossfit` ``repeats`` times over independent fold assignments (repeat ``i`` uses key ``i``).

    ``workers`` > 1 (or ``auto``: the available CPUs) runs the repeats in forked processes
    (:func:`metaeval.forked.fork_map`).  A repeat reads only its own fold stream, and the candidates must draw
    nothing at random in point-only applies and share no generator across repeats where they draw (the calibrate
    workflow's label-level candidates are point-only; score-level applies draw nothing), so the result is the same
    numbers, in the same order, as ``workers=1``."""
    from metaeval.errors import ConfigError
    from metaeval.forked import fork_map

    if repeats < 1:
        raise ConfigError(f"calibration.repeats={repeats}: need at least 1")
    return fork_map(lambda i: crossfit(cands, labelled, truth_fn, metrics, folds, inner_folds, rule, seed, repeat=i),
                    range(repeats), workers)


# --------------------------------------------------------------------------- splits at the applied size
def applied_split_sizes(n_labelled: int, n_applied: int, folds: int = 5) -> tuple[int, int]:
    """(fit topics, held-out topics) of one split of ``n_labelled`` topics that mimics fitting on ``n_labelled``
    and applying to ``n_applied``: the fit share is ``n_L / (n_L + n_U)`` (``1 - 1 / folds`` when nothing is
    applied, i.e. every judge topic is human-labelled), rounded, kept within [2, n_L - 1]."""
    from metaeval.errors import ConfigError

    if n_labelled < 3:
        raise ConfigError(f"{n_labelled} human-labelled topics: a split needs at least 3 (2 to fit, 1 to score)")
    share = n_labelled / (n_labelled + n_applied) if n_applied > 0 else 1.0 - 1.0 / max(int(folds), 2)
    a = int(min(max(int(round(n_labelled * share)), 2), n_labelled - 1))
    return a, n_labelled - a


def applied_splits(topics: np.ndarray, n_fit: int, n_splits: int,
                   rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n_splits`` random (fit, held-out) splits of ``topics``, ``n_fit`` topics to fit, the rest held out; each
    split checked disjoint."""
    topics = np.asarray(topics)
    out = []
    for _ in range(n_splits):
        perm = rng.permutation(topics)
        fit, held = np.sort(perm[:n_fit]), np.sort(perm[n_fit:])
        check_disjoint(fit, held)
        out.append((fit, held))
    return out


def corrected_resampled_se(d: np.ndarray, n_fit: int, n_held: int) -> float:
    """SE of the mean of ``d`` over repeated random splits, corrected for their overlap (Nadeau & Bengio 2003,
    "Inference for the generalization error", Machine Learning 52:239, the corrected resampled t):
    ``sqrt((1 / S + n_held / n_fit) s^2_d)``.  The plain ``s_d / sqrt(S)`` treats overlapping splits as
    independent and shrinks to zero as ``S`` grows; NaN with fewer than two finite values."""
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return float("nan")
    return float(np.sqrt((1.0 / d.size + n_held / max(n_fit, 1)) * d.var(ddof=1)))
