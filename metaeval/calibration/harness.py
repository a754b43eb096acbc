"""Simulation study: which calibration methods survive judges that break their assumptions?

For each judge kind (``metaeval.simulation.JUDGE_KINDS``) and replication ``r = 1..R`` (one seeded Generator):

1. make a judge: ``fig6`` draws every label independently from one confusion matrix (default the paper's
   Figure 6: exactly what the label-level methods assume); ``run_bias`` gives each run its own strictness
   (the judge favours some systems); ``topic_difficulty`` gives each topic its own strictness (errors
   correlated within a topic); ``length_strictness`` makes the judge stricter on longer answers; ``resampled``
   keeps a real judge's labels (e.g. the offline lexical judge on NIST 21x45, labels paired with the human
   ones by nugget text), so its real, correlated errors are kept, and draws a fresh random split of the real
   topics per replication;
2. split the topics into calibration (75%) and held-out (25%) topics, a simple random split *without*
   replacement for every kind.  (Resampling topics with replacement inside each side, as an earlier version did
   for ``resampled``, duplicates topics: the duplicates shrink the training variance and the intervals with it,
   so PPI looked as if it under-covered a real judge - an artefact of the design, not of the method.);
3. fit every method on the calibration topics, apply it to the held-out topics' judge labels, and compare
   each run estimate with the truth, the human run score on the same held-out topics.

Read-out per kind and method over the (replication, run) estimates ``e = estimate - truth``: ``bias`` (mean e),
``mean_abs_bias`` (mean over runs of |mean over replications of e|, the run-level systematic error),
``bias_cut = 1 - mean_abs_bias / mean_abs_bias(raw)``, ``rmse``, ``coverage`` (share of intervals holding the
truth), ``coverage_worst_run`` (the lowest per-run coverage), ``mean_ci_width``; each with its Monte-Carlo SE
from a bootstrap over replications (200 resamples).  Intervals are the methods' own, intersected with [0, 1].
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from metaeval.calibration.pairs import Pairs, pairs_from_labelset
from metaeval.errors import ConfigError
from metaeval.simulation import DEFAULT_CONFUSION, JUDGE_KINDS, resolve_confusion, simulate_structured

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

log = logging.getLogger(__name__)


def _grid(p: Pairs, values: np.ndarray) -> np.ndarray:
    out = np.full((len(p.qids), len(p.run_ids)), np.nan)
    out[p.ans_topic, p.ans_run] = values
    return out


def _fit_apply(method: str, judge: Pairs, human: np.ndarray, train: np.ndarray, test: np.ndarray, metric: str,
               level: float, rng: np.random.Generator, H: np.ndarray, J: np.ndarray):
    from metaeval.calibration.methods import get_method
    from metaeval.calibration.scorelevel import bounded

    m = get_method(method)
    if m.level == "score":
        r = m.apply_scores(m.fit_scores(H[train], J[train]), J[test], level)
        return r.est, r.lo, r.hi
    keep = np.zeros(len(judge.qids), dtype=bool)
    keep[train] = True
    model = m.fit_pairs(judge.select_topics(train), human[keep[judge.ans_topic[judge.ans]]])
    ap = m.apply_pairs(model, judge.select_topics(test), metrics=[metric], level=level, rng=rng, draws=50)
    lo, hi = bounded(ap.run[metric], (ap.hi[metric] - ap.lo[metric]) / 2.0)
    return np.clip(ap.run[metric], 0, 1), lo, hi


def run_study(human: "LabelSet", kinds: Sequence[str] = JUDGE_KINDS, reps: int = 200, seed: int = 0,
              methods: Sequence[str] | None = None, metric: str = "v_strict", holdout: float = 0.25,
              level: float = 0.95, confusion: Any = DEFAULT_CONFUSION, real_judge: "LabelSet | None" = None,
              progress: Callable[[str, int], None] | None = None) -> dict[str, Any]:
    """Run the study (see the module docstring); JSON-ready dict ``{config, kinds: {kind: {method: figures}}}``.
    ``methods``: registered calibration methods (default every one, ``metaeval.calibration.methods.method_names``);
    raw (``none``) is always included."""
    from metaeval.calibration.methods import get_method, method_names
    from metaeval.calibration.pairing import pair_by_text

    bad = [k for k in kinds if k not in JUDGE_KINDS]
    if bad:
        raise ConfigError(f"judge kind {bad[0]!r}; expected one of {', '.join(JUDGE_KINDS)}")
    if "resampled" in kinds and real_judge is None:
        raise ConfigError("judge kind 'resampled' needs a real judge's labels (--real-judge FILE)")
    methods = list(dict.fromkeys(["none", *(method_names() if methods is None else methods)]))
    for m in methods:
        get_method(m)  # an unknown name is one ConfigError line naming the registered ones
    conf = resolve_confusion(confusion)
    hp = pairs_from_labelset(human)
    T = len(hp.qids)
    n_test = int(round(holdout * T))
    if not 1 <= n_test < T - 1:
        raise ConfigError(f"holdout share {holdout} leaves {n_test} held-out topic(s) of {T}")
    from metaeval.random_streams import stream

    rng = stream(seed, "simulation.calibration_harness")
    out: dict[str, Any] = {"kinds": {}}
    t0 = time.perf_counter()
    real = None
    if real_judge is not None and "resampled" in kinds:
        pr = pair_by_text(human, real_judge)
        real = (pr.judge, pr.human, pr.summary())
    for kind in kinds:
        rec = {m: {"est": [], "lo": [], "hi": [], "truth": []} for m in methods}
        for r in range(reps):
            if kind == "resampled":
                judge, h, _ = real
            else:
                pair_len = hp.ans_len[hp.ans]
                codes = simulate_structured(hp.sup, hp.pair_run(), hp.ans_topic[hp.ans], pair_len, kind, rng, conf)
                judge, h = hp.with_support(codes), hp.sup
            perm = rng.permutation(len(judge.qids))
            test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
            human_p = judge.with_support(h)
            H = _grid(human_p, human_p.observed_scores([metric])[metric])
            J = _grid(judge, judge.observed_scores([metric])[metric])
            Ht = H[test]
            cnt = np.isfinite(Ht).sum(axis=0)
            truth = np.where(cnt > 0, np.nansum(Ht, axis=0) / np.maximum(cnt, 1), np.nan)
            for m in methods:
                try:
                    est, lo, hi = _fit_apply(m, judge, h, train, test, metric, level, rng, H, J)
                except Exception as exc:  # recorded as NaN, counted in n_failed
                    log.info("%s failed in replication %d of %s: %s", m, r, kind, exc)
                    est = lo = hi = np.full(len(truth), np.nan)
                for key, v in (("est", est), ("lo", lo), ("hi", hi), ("truth", truth)):
                    rec[m][key].append(np.asarray(v, dtype=float))
            if progress:
                progress(kind, r + 1)
        arrays = {m: {k: np.stack(v) for k, v in d.items()} for m, d in rec.items()}
        out["kinds"][kind] = summarize_kind(arrays, stream(seed, "simulation.calibration_harness_mc", kind))
    out["config"] = {"reps": reps, "seed": seed, "kinds": list(kinds), "methods": methods, "metric": metric,
                     "holdout": holdout, "level": level, "confusion": np.round(conf, 6).tolist(),
                     "n_topics": T, "n_runs": len(hp.run_ids), "n_pairs": int(len(hp.sup)),
                     "real_judge": None if real is None else {"name": real_judge.name, "pairing": real[2]}}
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


def _figures(e: np.ndarray, cov: np.ndarray, width: np.ndarray, raw_e: np.ndarray) -> dict[str, float]:
    """Figures from (reps, runs) arrays (NaN = missing)."""
    import warnings

    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        run_bias = np.nanmean(e, axis=0)
        raw_bias = np.nanmean(raw_e, axis=0)
        mab, mab_raw = float(np.nanmean(np.abs(run_bias))), float(np.nanmean(np.abs(raw_bias)))
        per_run_cov = np.nanmean(cov, axis=0)
        return {"bias": float(np.nanmean(e)), "mean_abs_bias": mab,
                "bias_cut": float(1 - mab / mab_raw) if mab_raw > 0 else float("nan"),
                "rmse": float(np.sqrt(np.nanmean(e ** 2))),
                "coverage": float(np.nanmean(cov)) if np.isfinite(cov).any() else float("nan"),
                "coverage_worst_run": float(np.nanmin(per_run_cov)) if np.isfinite(per_run_cov).any() else float("nan"),
                "mean_ci_width": float(np.nanmean(width)) if np.isfinite(width).any() else float("nan")}


def summarize_kind(arrays: dict[str, dict[str, np.ndarray]], rng: np.random.Generator, n_boot: int = 200) -> dict[str, Any]:
    raw_e = arrays["none"]["est"] - arrays["none"]["truth"]
    res = {}
    reps = raw_e.shape[0]
    boot = rng.integers(0, reps, size=(n_boot, reps))
    for m, a in arrays.items():
        e = a["est"] - a["truth"]
        has = np.isfinite(a["lo"]) & np.isfinite(a["hi"]) & np.isfinite(a["truth"])
        cov = np.where(has, (a["lo"] <= a["truth"]) & (a["truth"] <= a["hi"]), np.nan)
        width = np.where(has, a["hi"] - a["lo"], np.nan)
        fig = _figures(e, cov, width, raw_e)
        bs = [_figures(e[b], cov[b], width[b], raw_e[b]) for b in boot]
        fig["mc_se"] = {k: float(np.nanstd([x[k] for x in bs], ddof=1)) for k in fig}
        fig["n_failed"] = int((~np.isfinite(a["est"]) & np.isfinite(a["truth"])).sum())
        res[m] = fig
    return res
