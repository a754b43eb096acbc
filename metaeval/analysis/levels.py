"""Kendall's tau between a reference and a candidate at the paper's three levels (Pradeep et al. 2025, sec. 5).

On the common (topic, run) cells (see :mod:`metaeval.analysis.cells`), with reference scores ``x[t, r]`` and
candidate scores ``y[t, r]``:

* **run**: ``tau(xbar, ybar)`` where ``xbar_r`` / ``ybar_r`` are run means over the run's common topics - the
  system-ranking correlation usually reported in IR meta-evaluation;
* **topic_avg**: ``mean_t tau(x[t, :], y[t, :])`` over topics where the per-topic tau is defined; a topic is
  skipped (and counted in ``n_topics_skipped``) when it is undefined, e.g. tau-b with constant scores on a side;
* **pooled**: ``tau`` over all cells at once (every (topic, run) pair is one item).

All three are computed from topic multiplicity weights ``w`` (ones for the observed data), so the point
estimates and the topic-bootstrap replicates of :mod:`metaeval.analysis.resample` run through the same code:
run means become ``sum_t w_t x[t,r] / sum_t w_t``, the topic average a ``w``-weighted mean of per-topic taus, and
the pooled tau a quadratic form (:mod:`metaeval.analysis.pooled`).

Beside the three levels, two top-heavy run-level statistics that TREC AutoJudge users expect
(``autojudge-evaluate``): ``kendall@k`` (tau-b over the reference's top ``k`` runs, default 10) and ``tau_ap_b``
(Urbano & Marrero 2017), both on the run means, with the same bootstrap (:mod:`metaeval.analysis.kendall`).

:func:`levels_matrix` is the fast entry for callers that already hold dense ``(T, R)`` arrays (the calibration
cross-validation loop, simulations): no pandas, no bootstrap, pooled tau in O(N log N).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from metaeval.analysis.cells import Aligned, align, to_long
from metaeval.analysis.kendall import _div, get_variant, kendall, kendall_at_k, tau_ap_b_batch
from metaeval.analysis.pooled import PooledKernel
from metaeval.analysis.resample import CI_METHODS, topic_weights

LEVELS: tuple[str, ...] = ("run", "topic_avg", "pooled")
#: top-heavy run-level statistics reported beside the levels (name -> description).
TOP_HEAVY: dict[str, str] = {"kendall@k": "tau-b over the reference's top k runs", "tau_ap_b": "tau_AP-b of run means"}


def levels_matrix(x: np.ndarray, y: np.ndarray, x_run: np.ndarray | None = None, y_run: np.ndarray | None = None,
                  variant: str = "b") -> dict[str, float]:
    """The three levels from dense ``(T, R)`` reference / candidate matrices (NaN = missing cell).

    ``x_run`` / ``y_run`` (length ``R``) replace the run means at the run level (for methods that estimate run
    scores directly).  Same definitions and tie handling as :func:`tau_levels` (cells missing on either side
    are dropped everywhere; a topic whose tau is undefined is skipped by ``topic_avg``).  Returns
    ``{"run", "topic_avg", "pooled", "n_topics_used"}``.  Fast: no pandas; the pooled tau uses the
    O(N log N) path of :func:`metaeval.analysis.kendall.kendall` for tau-a/b.
    """
    v = get_variant(variant)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    bad = np.isnan(x) | np.isnan(y)
    xm, ym = np.where(bad, np.nan, x), np.where(bad, np.nan, y)
    ok = (~bad).astype(float)
    cnt = ok.sum(axis=0)
    rx = _div(np.where(bad, 0.0, x).sum(axis=0), cnt) if x_run is None else np.asarray(x_run, dtype=float)
    ry = _div(np.where(bad, 0.0, y).sum(axis=0), cnt) if y_run is None else np.asarray(y_run, dtype=float)
    per_topic = v.batch(xm, ym)
    used = ~np.isnan(per_topic)
    pooled = kendall(xm[~bad], ym[~bad], v.name) if v.kind == "pairs" else float(PooledKernel(xm, ym, "ap").tau(np.ones((1, len(x))), v.name)[0])
    return {"run": float(v.batch(rx, ry)), "topic_avg": float(per_topic[used].mean()) if used.any() else float("nan"),
            "pooled": float(pooled), "n_topics_used": int(used.sum())}


class LevelEngine:
    """Per-level tau for any ``(B, T)`` topic-weight matrix, for one reference/candidate pair of matrices."""

    def __init__(self, x: np.ndarray, y: np.ndarray, variant: str = "b"):
        self.variant = get_variant(variant)
        mask = ~(np.isnan(x) | np.isnan(y))
        self.mask = mask.astype(float)
        self.x0 = np.where(mask, x, 0.0)
        self.y0 = np.where(mask, y, 0.0)
        xm = np.where(mask, x, np.nan)
        ym = np.where(mask, y, np.nan)
        self.topic_tau = self.variant.batch(xm, ym)  # (T,)
        self.topic_ok = ~np.isnan(self.topic_tau)
        self._kernel: PooledKernel | None = None
        self._xm, self._ym = xm, ym

    @property
    def kernel(self) -> PooledKernel:
        if self._kernel is None:
            self._kernel = PooledKernel(self._xm, self._ym, self.variant.kind)
        return self._kernel

    def run(self, w: np.ndarray) -> np.ndarray:
        den = w @ self.mask
        return self.variant.batch(_div(w @ self.x0, den), _div(w @ self.y0, den))

    def run_means(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        den = w @ self.mask
        return _div(w @ self.x0, den), _div(w @ self.y0, den)

    def topic_avg(self, w: np.ndarray) -> np.ndarray:
        ok = self.topic_ok.astype(float)
        return _div(w @ np.where(self.topic_ok, self.topic_tau, 0.0), w @ ok)

    def pooled(self, w: np.ndarray) -> np.ndarray:
        return self.kernel.tau(w, self.variant.name)

    def levels(self, w: np.ndarray) -> dict[str, np.ndarray]:
        w = np.atleast_2d(np.asarray(w, dtype=float))
        return {"run": self.run(w), "topic_avg": self.topic_avg(w), "pooled": self.pooled(w)}

    def top_heavy(self, w: np.ndarray, k: int = 10) -> dict[str, np.ndarray]:
        """``kendall@k`` and ``tau_ap_b`` of the run means under each row of ``w``."""
        rx, ry = self.run_means(np.atleast_2d(np.asarray(w, dtype=float)))
        return self._top_heavy_of(rx, ry, k)

    @staticmethod
    def _top_heavy_of(rx: np.ndarray, ry: np.ndarray, k: int) -> dict[str, np.ndarray]:
        return {"kendall@k": np.atleast_1d(kendall_at_k(rx, ry, k)), "tau_ap_b": np.atleast_1d(tau_ap_b_batch(rx, ry))}

    def levels_and_top_heavy(self, w: np.ndarray, k: int = 10) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """``(levels(w), top_heavy(w, k))`` with the run means under ``w`` computed once (the same numbers)."""
        w = np.atleast_2d(np.asarray(w, dtype=float))
        rx, ry = self.run_means(w)
        lv = {"run": self.variant.batch(rx, ry), "topic_avg": self.topic_avg(w), "pooled": self.pooled(w)}
        return lv, self._top_heavy_of(rx, ry, k)


@dataclass(frozen=True)
class TauLevels:
    """Tau at the three levels for one metric, with the cell bookkeeping (and CIs when bootstrapped)."""

    metric: str
    variant: str
    run: float
    topic_avg: float
    pooled: float
    n_runs: int
    n_topics: int
    n_cells: int
    n_topics_used: int
    n_topics_skipped: int
    dropped: dict[str, int] = field(default_factory=dict)
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    boot_mean: dict[str, float] = field(default_factory=dict)
    ci_method: str = "centered"
    n_boot: int = 0
    seed: int | None = None
    alpha: float = 0.05
    top_heavy: dict[str, float] = field(default_factory=dict)
    top_heavy_ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    top_k: int = 10

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci"] = {k: [float(v[0]), float(v[1])] for k, v in self.ci.items()}
        d["top_heavy_ci"] = {k: [float(v[0]), float(v[1])] for k, v in self.top_heavy_ci.items()}
        return d


def _scalar(v: Any) -> float:
    """The first (only) element of a scalar or one-element array, as a float."""
    return float(np.asarray(v).reshape(-1)[0])


def levels_from_aligned(al: Aligned, variant: str = "b", n_boot: int = 0, seed: int = 0,
                        alpha: float = 0.05, candidate: int = 0, weights: np.ndarray | None = None,
                        ci_method: str = "centered", top_k: int = 10,
                        replicates: dict[str, np.ndarray] | None = None) -> TauLevels:
    """Point estimates (and bootstrap CIs when ``n_boot > 0`` or ``weights`` are given) for one candidate.

    ``seed``: the analysis seed; the resamples are ``topic_weights(T, n_boot, seed)``, i.e. drawn from
    ``random_streams.stream(seed, "analysis.topic_bootstrap")``, so another seed moves every interval;
    ``weights``: a ``(B, T)`` topic-multiplicity matrix to reuse (e.g. the same resamples for every metric);
    ``ci_method``: a name in :data:`metaeval.analysis.resample.CI_METHODS`; ``top_k``: the k of ``kendall@k``;
    ``replicates``: a dict that receives ``{level: (B,) replicates}`` when bootstrapped (kept by the paired
    comparisons between candidates, :mod:`metaeval.analysis.comparison`).
    """
    from metaeval.errors import ConfigError

    if ci_method not in CI_METHODS:
        raise ConfigError(f"unknown CI method {ci_method!r}; expected one of {', '.join(CI_METHODS)}")
    eng = LevelEngine(al.x, al.ys[candidate], variant)
    t_count = len(al.topics)
    one = np.ones((1, t_count))
    boot = n_boot > 0 or weights is not None
    rx, ry = eng.run_means(one)
    point = {"run": eng.variant.batch(rx, ry), "topic_avg": eng.topic_avg(one)}
    if boot or eng.variant.kind != "pairs":
        point["pooled"] = eng.pooled(one)
    else:  # point estimate only: O(N log N), no block kernel
        ok = ~(np.isnan(eng._xm) | np.isnan(eng._ym))
        point["pooled"] = np.array([kendall(eng._xm[ok], eng._ym[ok], eng.variant.name)])
    heavy_point = eng._top_heavy_of(rx, ry, top_k)
    ci: dict[str, tuple[float, float]] = {}
    heavy_ci: dict[str, tuple[float, float]] = {}
    boot_mean: dict[str, float] = {}
    if boot:
        w = weights if weights is not None else topic_weights(t_count, n_boot, seed)
        reps, heavy = eng.levels_and_top_heavy(w, top_k)
        if replicates is not None:
            replicates.update({lvl: reps[lvl] for lvl in LEVELS})
        jack, jack_heavy = eng.levels_and_top_heavy(1.0 - np.eye(t_count), top_k) if ci_method == "bca" else ({}, {})
        for lvl in LEVELS:
            ci[lvl] = CI_METHODS[ci_method](reps[lvl], alpha, _scalar(point[lvl]), jack.get(lvl))
            ok = reps[lvl][~np.isnan(reps[lvl])]
            boot_mean[lvl] = float(ok.mean()) if ok.size else float("nan")
        for name in TOP_HEAVY:
            heavy_ci[name] = CI_METHODS[ci_method](heavy[name], alpha, _scalar(heavy_point[name]), jack_heavy.get(name))
        n_boot = len(w)
    mask = ~(np.isnan(al.x) | np.isnan(al.ys[candidate]))
    used = int(eng.topic_ok.sum())
    return TauLevels(
        metric=al.metric, variant=eng.variant.name,
        run=_scalar(point["run"]), topic_avg=_scalar(point["topic_avg"]), pooled=_scalar(point["pooled"]),
        n_runs=int(mask.any(axis=0).sum()), n_topics=int(mask.any(axis=1).sum()), n_cells=int(mask.sum()),
        n_topics_used=used, n_topics_skipped=int(mask.any(axis=1).sum()) - used,
        dropped=dict(al.dropped), ci=ci, boot_mean=boot_mean, ci_method=ci_method, n_boot=int(n_boot),
        seed=seed if n_boot else None, alpha=alpha,
        top_heavy={k: _scalar(v) for k, v in heavy_point.items()}, top_heavy_ci=heavy_ci, top_k=int(top_k),
    )


def tau_levels(reference: Any, candidate: Any, metric: str = "v_strict", variant: str = "b", n_boot: int = 0,
               seed: int = 0, alpha: float = 0.05, policy: Any = None,
               ci_method: str = "centered") -> TauLevels:
    """Kendall's tau of ``candidate`` against ``reference`` at the run, per-topic-average and pooled levels.

    ``reference`` / ``candidate``: a LabelSet, a per-answer wide score table (``score_answers``) or a long table
    ``run_id, qid, metric, value``.  ``variant``: ``b`` (default), ``a``, ``ap``, ``ap_sym`` or ``ap_b``
    (:data:`metaeval.analysis.kendall.TAU_VARIANTS`).  ``n_boot > 0`` adds topic-bootstrap CIs (``ci_method``:
    ``percentile``, ``centered`` or ``bca``; :mod:`metaeval.analysis.resample` explains why the run-level
    percentile interval can miss the estimate).  ``policy``: the scoring policy used for LabelSet inputs.
    """
    al = align(to_long(reference, policy), [to_long(candidate, policy)], metric)
    return levels_from_aligned(al, variant, n_boot=n_boot, seed=seed, alpha=alpha, ci_method=ci_method)
