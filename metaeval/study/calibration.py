"""THE calibrate workflow, shared by sweep cells and ``metaeval calibrate``: one function, one ``calibration.json``.

``calibrate_study(reference, judge, settings, seed=...)``:

1. pairs labels by (topic, run, normalised nugget text) (:mod:`metaeval.calibration.pairing`) and reports the
   match coverage; label-level methods run only when coverage >= ``min_coverage`` (default 0.95), on matched
   pairs, else they are listed as refused with one line giving the counts;
2. scores both sides with :mod:`metaeval.scoring` (per answer, each on its own nuggets) for the score-level
   methods, which work for every strategy, auto_auto included;
3. runs ``folds``-fold leave-topics-out cross-fitting over the human-labelled topics with nested selection
   (:mod:`metaeval.calibration.crossfit`); raw (``none``) is always a candidate and wins unless a method beats
   it by more than one SE (rule ``one_se``);
4. builds the leaderboard: on human-labelled topics each topic is corrected by a model fitted without it
   (out-of-fold); on judge-only topics by the model fitted on all human-labelled topics; every interval lies
   inside [0, 1];
5. fits the chosen (and every usable) method on all human-labelled topics for ``calibration-model.json``,
   with the hashes of what it was fitted on (judge spec, prompt version, nugget set, label policy).

Returned keys (JSON-ready): ``schema, metric, reference, judge, settings, pairing, topics, candidates,
selection, leaderboard, recommendation`` (for the primary ``metric``), ``by_metric`` (the same five blocks per
metric) and ``model`` (the fitted bundle; write it to ``calibration-model.json`` and drop it from
``calibration.json`` with :func:`split_model`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

log = logging.getLogger(__name__)
SCHEMA = "metaeval.calibration/2"
MODEL_FORMAT = "metaeval-calibration-model"
SCORE_LEVEL = ("none", "ppi", "ppi_pp", "regression")
LABEL_LEVEL = ("posterior", "matrix", "matrix_unconstrained", "ordinal")
ALL_METHODS = SCORE_LEVEL + LABEL_LEVEL
DEFAULTS: dict[str, Any] = {"folds": 5, "inner_folds": 3, "methods": None, "metrics": None, "metric": "v_strict",
                            "level": 0.95, "min_coverage": 0.95, "n_boot": 1000, "selection": "one_se", "options": {}}


def resolve_settings(settings: dict[str, Any] | None) -> dict[str, Any]:
    """Defaults filled in, method and metric names checked (metrics case-insensitive: ``V_strict`` works)."""
    from metaeval.errors import ConfigError
    from metaeval.scoring import METRICS, normalize_metric

    s = {**DEFAULTS, **{k: v for k, v in (settings or {}).items() if v is not None}}
    methods = list(s["methods"] or ALL_METHODS)
    if "none" not in methods:
        methods.insert(0, "none")
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
    return {**s, "methods": methods, "metrics": metrics, "metric": metric, "folds": int(s["folds"]),
            "inner_folds": int(s["inner_folds"]), "level": float(s["level"]), "min_coverage": float(s["min_coverage"]),
            "n_boot": int(s["n_boot"])}


class _Data:
    """Dense (topic x run) score matrices over the judge's topics and runs, and the text-paired labels."""

    def __init__(self, reference: "LabelSet", judge: "LabelSet", metrics: Sequence[str]):
        from metaeval.calibration.pairing import pair_by_text
        from metaeval.scoring import score_answers

        self.pairing = pair_by_text(reference, judge)
        jp = self.pairing.judge
        self.qids, self.runs = jp.qids, jp.run_ids
        self.H = _matrix(score_answers(reference), self.qids, self.runs, metrics)
        self.J = _matrix(score_answers(judge), self.qids, self.runs, metrics)
        first = metrics[0]
        has_h = np.isfinite(self.H[first]).any(axis=1)
        has_j = np.isfinite(self.J[first]).any(axis=1)
        self.labelled = np.flatnonzero(has_h & has_j)
        self.judge_only = np.flatnonzero(~has_h & has_j)

    def truth(self, topics: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        t, n = {}, {}
        for m, H in self.H.items():
            sub = H[topics]
            cnt = np.isfinite(sub).sum(axis=0)
            with np.errstate(invalid="ignore", divide="ignore"):
                t[m] = np.where(cnt > 0, np.nansum(sub, axis=0) / np.maximum(cnt, 1), np.nan)
            n[m] = cnt
        return t, n


def _matrix(scores, qids, runs, metrics) -> dict[str, np.ndarray]:
    qpos = {q: i for i, q in enumerate(qids)}
    rpos = {r: i for i, r in enumerate(runs)}
    ti = scores["qid"].astype(str).map(qpos)
    ri = scores["run_id"].astype(str).map(rpos)
    ok = (ti.notna() & ri.notna()).to_numpy()
    ti, ri = ti[ok].to_numpy(int), ri[ok].to_numpy(int)
    out = {}
    for m in metrics:
        mat = np.full((len(qids), len(runs)), np.nan)
        mat[ti, ri] = scores[m].to_numpy(float)[ok]
        out[m] = mat
    return out


# --------------------------------------------------------------------------- candidates
def _score_candidate(name: str, data: _Data, metrics: Sequence[str], level: float):
    from metaeval.calibration.crossfit import Candidate, Prediction
    from metaeval.calibration.scorelevel import apply_score_method, fit_score_method

    def fit(train):
        return {m: fit_score_method(name, data.H[m][train], data.J[m][train]) for m in metrics}

    def apply(model, test, want_ci):
        out = {}
        for m in metrics:
            r = apply_score_method(model[m], data.J[m][test], level)
            out[m] = Prediction(r.est, r.lo, r.hi, r.se, r.answers)
        return out

    return Candidate(name, "score", fit, apply)


def _label_candidate(name: str, data: _Data, metrics: Sequence[str], level: float, options: dict, seed: int):
    from metaeval.calibration.crossfit import Candidate, Prediction
    from metaeval.calibration.methods import get_method
    from metaeval.calibration.scorelevel import bounded

    method = get_method(name)
    jp, human = data.pairing.judge, data.pairing.human
    pair_topic = jp.ans_topic[jp.ans]
    rng = np.random.default_rng([seed, 1])

    def fit(train, **extra):
        keep = np.zeros(len(jp.qids), dtype=bool)
        keep[train] = True
        return method.fit_pairs(jp.select_topics(train), human[keep[pair_topic]], **{**dict(options.get(name, {})), **extra})

    def apply(model, test, want_ci):
        sub = jp.select_topics(test)
        ap = method.apply_pairs(model, sub, metrics=metrics, level=level, rng=rng if want_ci else None)
        rows = np.searchsorted(np.sort(test), sub.ans_topic)
        out = {}
        for m in metrics:
            grid = np.full((len(test), len(jp.run_ids)), np.nan)
            grid[rows, sub.ans_run] = ap.answers[m]
            est = ap.run[m]
            se = ap.se.get(m, np.full_like(est, np.nan))
            lo, hi = bounded(est, (ap.hi[m] - ap.lo[m]) / 2.0) if m in ap.hi else (np.full_like(est, np.nan),) * 2
            out[m] = Prediction(np.clip(est, 0.0, 1.0), lo, hi, se, grid)
        return out

    # the ordinal model's covariance (observed information) only feeds its intervals: inner folds skip it
    fit_point = (lambda train: fit(train, covariance=False)) if name == "ordinal" else None
    return Candidate(name, "label", fit, apply, fit_point)


# --------------------------------------------------------------------------- the workflow
def _source(ls: "LabelSet") -> str:
    """The file a label set was read from (its name when it was made in memory), for error messages."""
    return str((ls.provenance or {}).get("path") or ls.name)


def calibrate_study(reference: "LabelSet", judge: "LabelSet", settings: dict[str, Any] | None, *, seed: int) -> dict[str, Any]:
    """Calibrate ``judge`` against ``reference`` (see the module docstring); JSON-ready dict."""
    from metaeval.calibration.crossfit import crossfit
    from metaeval.errors import ConfigError
    from metaeval.io.jsonl import to_jsonable

    s = resolve_settings(settings)
    metrics = s["metrics"]
    data = _Data(reference, judge, metrics)
    pairing = data.pairing.summary(s["min_coverage"])
    n_lab = len(data.labelled)
    if n_lab < 2:
        raise ConfigError(f"calibrate: {_source(reference)} and {_source(judge)} share {n_lab} topic(s) with answers on "
                          "both sides; need at least 2 human-labelled topics")
    folds = min(s["folds"], n_lab)
    cands, refused = [], {}
    for name in s["methods"]:
        if name in SCORE_LEVEL:
            cands.append(_score_candidate(name, data, metrics, s["level"]))
        elif pairing["label_level"] != "ok":
            refused[name] = pairing["refusal"]
        else:
            cands.append(_label_candidate(name, data, metrics, s["level"], s["options"], seed))
    outer = crossfit(cands, data.labelled, data.truth, metrics, folds=folds, inner_folds=s["inner_folds"],
                     rule=s["selection"], seed=seed)
    full = _FullFits(data.labelled)  # each candidate fitted on all human-labelled topics at most once
    by_metric = {}
    for m in metrics:
        by_metric[m] = _metric_block(m, data, cands, refused, outer, s, seed, full)
    model = _fit_model(data, cands, by_metric, s, reference, judge, full)
    topics = {"human_labelled": [data.qids[i] for i in data.labelled], "judge_only": [data.qids[i] for i in data.judge_only]}
    prim = by_metric[s["metric"]]
    out = {"schema": SCHEMA, "metric": s["metric"], "reference": reference.name, "judge": judge.name, "seed": seed,
           "settings": {k: s[k] for k in ("folds", "inner_folds", "methods", "metrics", "level", "min_coverage",
                                          "n_boot", "selection")} | {"folds_used": folds},
           "pairing": pairing, "topics": topics,
           **{k: prim[k] for k in ("candidates", "selection", "leaderboard", "recommendation")},
           "by_metric": by_metric, "model": model}
    return to_jsonable(out)


def split_model(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(calibration.json dict without the model, calibration-model.json dict)."""
    rest = {k: v for k, v in result.items() if k != "model"}
    return rest, result.get("model") or {}


class _FullFits:
    """Fits on every human-labelled topic, memoised per candidate (fitting is deterministic: no random draws),
    shared by the judge-only leaderboard columns of every metric and the saved model."""

    def __init__(self, labelled: np.ndarray):
        self.labelled = labelled
        self._done: dict[str, tuple[Any, Exception | None]] = {}

    def get(self, cand) -> Any:
        if cand.name not in self._done:
            try:
                self._done[cand.name] = (cand.fit(self.labelled), None)
            except Exception as exc:
                self._done[cand.name] = (None, exc)
        model, exc = self._done[cand.name]
        if exc is not None:
            raise exc
        return model


def _metric_block(metric, data, cands, refused, outer, s, seed, full=None) -> dict[str, Any]:
    from metaeval.calibration.crossfit import choose, fold_errors

    names = [c.name for c in cands]
    errs = fold_errors(outer, metric, names)
    usable = [c for c in names if all(c in f.preds for f in outer)]
    candidates: dict[str, Any] = {}
    for c in cands:
        if c.name not in usable:
            why = next(f.failed[c.name] for f in outer if c.name in f.failed)
            candidates[c.name] = {"level": c.level, "status": "failed", "reason": why}
            continue
        candidates[c.name] = {"level": c.level, "status": "ok", "reason": None,
                              "held_out": _held_out(outer, c.name, metric, errs, data)}
    for name, why in refused.items():
        candidates[name] = {"level": "label", "status": "refused", "reason": why}
    chosen, why = choose({c: errs[c] for c in usable}, s["selection"])
    nested = np.array([fold_mae_of(f, f.nested_choice.get(metric, "none"), metric) for f in outer])
    sel = {"method": chosen, "rule": s["selection"], "why": why, "beats_raw": chosen != "none",
           "folds": len(outer), "n_topics": int(len(data.labelled)),
           "held_out_mae": _mean_se(errs[chosen]), "raw_mae": _mean_se(errs["none"]),
           "nested_mae": _mean_se(nested), "nested_choices": [f.nested_choice.get(metric) for f in outer],
           "note": "held-out = mean over outer folds of the run-level MAE against the reference on the fold's topics "
                   "(fitted without them), +- the fold SE; nested = the whole selection procedure run inside each "
                   "outer training set and scored on the outer fold"}
    board = _leaderboard(metric, chosen, data, cands, outer, s, seed, full)
    return {"candidates": candidates, "selection": sel, "leaderboard": board,
            "recommendation": recommendation(metric, sel, candidates)}


def fold_mae_of(fr, name, metric) -> float:
    from metaeval.calibration.crossfit import fold_mae

    p = fr.preds.get(name, {}).get(metric)
    return fold_mae(p, fr.truth[metric]) if p is not None else float("nan")


def _mean_se(x: np.ndarray) -> dict[str, float | None]:
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if not x.size:
        return {"mean": None, "se": None}
    return {"mean": float(x.mean()), "se": float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else None}


def _held_out(outer, name, metric, errs, data, with_tau: bool = True) -> dict[str, Any]:
    """Outer-fold figures of one candidate (runs x folds); tau-b (run level; per-topic average and pooled over the
    per-answer values; ``metaeval.analysis.levels.levels_matrix``) on each fold's held-out topics, averaged over
    folds."""
    from metaeval.analysis.levels import levels_matrix

    err, cover, width, runs_cov, taus = [], [], [], [], {"run": [], "topic_avg": [], "pooled": []}
    for f in outer:
        p, t = f.preds[name][metric], f.truth[metric]
        ok = np.isfinite(p.est) & np.isfinite(t)
        err.append(p.est[ok] - t[ok])
        has = ok & np.isfinite(p.lo) & np.isfinite(p.hi)
        c = np.full(len(t), np.nan)
        c[has] = (p.lo[has] <= t[has]) & (t[has] <= p.hi[has])
        runs_cov.append(c)
        cover.append(c[has])
        width.append((p.hi - p.lo)[has])
        if with_tau and p.answers is not None and ok.sum() > 2:
            lv = levels_matrix(data.H[metric][f.topics], p.answers, x_run=t, y_run=p.est)
            for k in taus:
                taus[k].append(float(lv[k]))
    e = np.concatenate(err) if err else np.array([])
    cov = np.concatenate(cover) if cover else np.array([])
    per_run = _nanmean(np.stack(runs_cov), axis=0) if runs_cov and np.isfinite(np.stack(runs_cov)).any() else np.array([np.nan])
    d = errs[name] - errs["none"]
    return {"mae": _mean_se(errs[name]), "bias": float(e.mean()) if e.size else None,
            "rmse": float(np.sqrt(np.mean(e ** 2))) if e.size else None,
            "coverage": float(cov.mean()) if cov.size else None,
            "coverage_worst_run": float(np.nanmin(per_run)) if np.isfinite(per_run).any() else None,
            "mean_ci_width": float(np.concatenate(width).mean()) if cov.size else None,
            "diff_vs_raw": _mean_se(d),
            "tau": {k: (float(_nanmean(v)) if v and np.isfinite(v).any() else None) for k, v in taus.items()},
            "n_estimates": int(e.size)}


def _ranks(values: dict[str, float]) -> dict[str, int]:
    """Competition ranks, 1 = highest; equal scores share the best rank; NaN last."""
    key = {r: (-v if v == v else float("inf")) for r, v in values.items()}
    return {r: 1 + sum(key[o] < key[r] for o in values) for r in values}


def _leaderboard(metric, chosen, data, cands, outer, s, seed, full=None) -> dict[str, Any]:
    """Reference, raw and corrected run scores; corrected = out-of-fold on human-labelled topics."""
    from metaeval.analysis.resample import topic_weights
    from metaeval.calibration.scorelevel import bounded
    from metaeval.calibration.methods.base import z_value

    z = z_value(s["level"])
    H, J = data.H[metric], data.J[metric]
    lab, only = data.labelled, data.judge_only
    R = len(data.runs)
    # raw over every judge topic, topic-bootstrap percentile CI (inside [0, 1] by construction)
    jt = np.flatnonzero(np.isfinite(J).any(axis=1))
    Jt = J[jt]
    w = topic_weights(len(jt), s["n_boot"], np.random.default_rng([seed, 2]))
    okJ = np.isfinite(Jt)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (w @ np.where(okJ, Jt, 0.0)) / (w @ okJ)
    raw = _nanmean(Jt, axis=0) if len(jt) else np.full(R, np.nan)
    a = (1 - s["level"]) / 2
    raw_lo, raw_hi = np.nanquantile(reps, a, axis=0), np.nanquantile(reps, 1 - a, axis=0)
    ref = _nanmean(H[lab], axis=0) if len(lab) else np.full(R, np.nan)
    raw_lab = _nanmean(J[lab], axis=0)
    # out-of-fold corrected scores over human-labelled topics
    num, wsum, var = np.zeros(R), np.zeros(R), np.zeros(R)
    for f in outer:
        p = f.preds[chosen][metric]
        n = np.isfinite(J[f.topics]).sum(axis=0).astype(float)
        ok = np.isfinite(p.est) & (n > 0)
        num[ok] += n[ok] * p.est[ok]
        wsum[ok] += n[ok]
        var[ok] += n[ok] ** 2 * np.where(np.isfinite(p.se[ok]), p.se[ok] ** 2, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        oof = np.where(wsum > 0, num / wsum, np.nan)
        oof_se = np.sqrt(var) / wsum
    if chosen == "none":  # raw over the labelled topics, bootstrap CI over those topics
        wl = topic_weights(len(lab), s["n_boot"], np.random.default_rng([seed, 3]))
        Jl = J[lab]
        okl = np.isfinite(Jl)
        with np.errstate(invalid="ignore", divide="ignore"):
            rl = (wl @ np.where(okl, Jl, 0.0)) / (wl @ okl)
        oof_lo, oof_hi = np.nanquantile(rl, a, axis=0), np.nanquantile(rl, 1 - a, axis=0)
    else:
        oof_lo, oof_hi = bounded(oof, z * oof_se)
    # judge-only topics: the model fitted on every human-labelled topic
    cand = next(c for c in cands if c.name == chosen)
    est_u = lo_u = hi_u = None
    if len(only):
        pu = cand.apply(full.get(cand) if full is not None else cand.fit(lab), only, True)[metric]
        est_u, lo_u, hi_u = pu.est, pu.lo, pu.hi
    ref_rank = _ranks(dict(zip(data.runs, ref.tolist())))
    raw_rank = _ranks(dict(zip(data.runs, raw.tolist())))
    cor_rank = _ranks(dict(zip(data.runs, oof.tolist())))
    rows = []
    for r, run in enumerate(data.runs):
        row = {"run_id": run, "reference": _f(ref[r]), "reference_rank": ref_rank[run] if np.isfinite(ref[r]) else None,
               "raw": _f(raw[r]), "raw_ci": [_f(raw_lo[r]), _f(raw_hi[r])], "raw_rank": raw_rank[run],
               "raw_labelled": _f(raw_lab[r]),
               "corrected": _f(oof[r]), "corrected_ci": [_f(oof_lo[r]), _f(oof_hi[r])], "corrected_rank": cor_rank[run]}
        if est_u is not None:
            row.update({"corrected_judge_only": _f(est_u[r]), "corrected_judge_only_ci": [_f(lo_u[r]), _f(hi_u[r])]})
        rows.append(row)
    rows.sort(key=lambda x: (x["corrected_rank"], x["run_id"]))
    fin = np.isfinite(oof) & np.isfinite(ref)
    fin_raw = np.isfinite(raw_lab) & np.isfinite(ref)
    return {"metric": metric, "corrected_by": chosen, "out_of_fold": True,
            "human_labelled_topics": int(len(lab)), "judge_only_topics": int(len(only)),
            "mae_vs_reference": float(np.abs(oof - ref)[fin].mean()) if fin.any() else None,
            "raw_mae_vs_reference": float(np.abs(raw_lab - ref)[fin_raw].mean()) if fin_raw.any() else None,
            "columns": {"reference": "reference run score over the human-labelled topics",
                        "raw": "judge run score over every judge topic (topic-bootstrap percentile CI)",
                        "raw_labelled": "judge run score over the human-labelled topics",
                        "corrected": f"{chosen} over the human-labelled topics, each topic corrected by a model fitted "
                                     "without it (out-of-fold); CI inside [0, 1]",
                        "corrected_judge_only": f"{chosen} fitted on all human-labelled topics, applied to the judge-only topics"},
            "rows": rows}


def _nanmean(x, axis=None):
    """``np.nanmean`` without the all-NaN warning (NaN where nothing is finite)."""
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(x)
    n = ok.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(ok, x, 0.0).sum(axis=axis) / np.maximum(n, 1), np.nan)


def _f(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def recommendation(metric: str, sel: dict[str, Any], candidates: dict[str, Any]) -> str:
    from metaeval.scoring import METRIC_NAMES

    name = METRIC_NAMES.get(metric, metric)
    h, r, n = sel["held_out_mae"], sel["raw_mae"], sel["nested_mae"]
    scope = f"{sel['folds']}-fold over {sel['n_topics']} human-labelled topics"
    if sel["method"] == "none":
        ok = {k: v for k, v in candidates.items() if v["status"] == "ok" and k != "none"}
        best = min(ok, key=lambda k: ok[k]["held_out"]["mae"]["mean"] or np.inf) if ok else None
        b = f"; best method {best} {_ms(ok[best]['held_out']['mae'])}" if best else ""
        return f"{name}: keep the raw judge scores - {sel['why']}; held-out MAE raw {_ms(r)}{b} ({scope})"
    return (f"{name}: use {sel['method']} - {sel['why']}; held-out MAE {_ms(h)} vs raw {_ms(r)} ({scope}; "
            f"with the selection inside the folds {_ms(n)})")


def _ms(d: dict) -> str:
    if d.get("mean") is None:
        return "n/a"
    return f"{d['mean']:.4f}" + (f" +- {d['se']:.4f}" if d.get("se") is not None else "")


# --------------------------------------------------------------------------- the fitted model
def _hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def fingerprints(judge: "LabelSet", settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a fitted calibration depends on: judge spec, prompt version, nugget set (per topic), label policy.

    Judge spec and prompt version come from ``settings`` (``judge_spec``, ``prompt_version``) or the label set's
    provenance; ``None`` when neither says (a bare label file), and then they cannot be compared."""
    from metaeval.calibration.pairing import nugget_set_hashes
    from metaeval.scoring import ScoringPolicy

    prov = judge.provenance or {}
    s = settings or {}
    spec = s.get("judge_spec") or prov.get("judge_spec") or prov.get("judge")
    prompt = s.get("prompt_version") or prov.get("prompt_version") or prov.get("prompt")
    per_topic = nugget_set_hashes(judge)
    policy = {"scoring": ScoringPolicy().as_dict(), "pairing": "(qid, run_id, normalised nugget text)",
              "failed": "FAILED support = no credit"}
    return {"judge_spec": None if spec is None else _hash(spec), "prompt_version": None if prompt is None else _hash(prompt),
            "nugget_set": per_topic,
            "label_policy": _hash(policy)}


def _fit_model(data, cands, by_metric, s, reference, judge, full=None) -> dict[str, Any]:
    models = {}
    chosen = {m: b["selection"]["method"] for m, b in by_metric.items()}
    for c in cands:
        try:
            models[c.name] = full.get(c) if full is not None else c.fit(data.labelled)
        except Exception as exc:
            models[c.name] = {"failed": f"{type(exc).__name__}: {exc}"}
    return {"format": MODEL_FORMAT, "version": 2, "chosen": chosen, "level": s["level"],
            "fitted_on": {"reference": reference.name, "judge": judge.name,
                          "topics": [data.qids[i] for i in data.labelled], "runs": list(data.runs),
                          "pairing": data.pairing.summary(s["min_coverage"])},
            "fingerprints": fingerprints(judge, s),
            "models": models}


# --------------------------------------------------------------------------- applying a saved model
def check_fingerprints(model: dict[str, Any], judge: "LabelSet", settings: dict[str, Any] | None = None) -> list[str]:
    """What differs between the judge labels a model was fitted on and ``judge`` (empty list: nothing).

    Judge spec, prompt version and label policy must be equal; the nugget set must be equal on every topic both
    hold (topics the model never saw are what it is for)."""
    fitted = model.get("fingerprints") or {}
    now = fingerprints(judge, settings)
    diffs = [k for k in ("judge_spec", "prompt_version", "label_policy")
             if fitted.get(k) is not None and now[k] is not None and fitted.get(k) != now[k]]
    shared = set(fitted.get("nugget_set", {})) & set(now["nugget_set"])
    changed = sorted(q for q in shared if fitted["nugget_set"][q] != now["nugget_set"][q])
    if changed:
        diffs.append(f"nugget_set ({len(changed)} of {len(shared)} shared topics, e.g. {changed[0]})")
    return diffs


def apply_model(model: dict[str, Any], judge: "LabelSet", *, metrics: Sequence[str] | None = None,
                method: str | None = None, level: float | None = None, seed: int = 0, n_boot: int = 1000,
                settings: dict[str, Any] | None = None, allow_mismatch: bool = False) -> dict[str, Any]:
    """Apply a saved ``calibration-model.json`` to judge labels; refuses (ConfigError) when the judge spec,
    prompt version, nugget set or label policy differ, unless ``allow_mismatch`` (then ``warnings`` says so)."""
    from metaeval.analysis.resample import topic_weights
    from metaeval.calibration.methods import get_method
    from metaeval.calibration.pairs import pairs_from_labelset
    from metaeval.calibration.scorelevel import apply_score_method, bounded
    from metaeval.errors import ConfigError
    from metaeval.io.jsonl import to_jsonable
    from metaeval.scoring import normalize_metric, score_answers

    if model.get("format") != MODEL_FORMAT:
        raise ConfigError(f"not a {MODEL_FORMAT} file (format {model.get('format')!r}); refit with metaeval calibrate")
    diffs = check_fingerprints(model, judge, settings)
    warnings = [f"{k} unknown for the fitted or the new judge labels: not compared"
                for k in ("judge_spec", "prompt_version") if (model.get("fingerprints") or {}).get(k) is None
                or fingerprints(judge, settings)[k] is None]
    if diffs:
        line = f"calibration model was fitted on different judge labels: {', '.join(diffs)} differ"
        if not allow_mismatch:
            raise ConfigError(line + " (refit, or pass --allow-mismatch to apply anyway)")
        warnings.append(line)
    level = float(level or model.get("level", 0.95))
    chosen = model.get("chosen") or {}
    metrics = [normalize_metric(m) for m in (metrics or list(chosen))]
    jp = pairs_from_labelset(judge)
    J = _matrix(score_answers(judge), jp.qids, jp.run_ids, metrics)
    out_metrics = {}
    for m in metrics:
        name = method or chosen.get(m, "none")
        fitted = model["models"].get(name)
        if fitted is None or "failed" in fitted:
            raise ConfigError(f"the model file has no usable fitted {name!r} (have {', '.join(sorted(model['models']))})")
        if name in SCORE_LEVEL:
            if m not in fitted:
                raise ConfigError(f"the model's {name!r} was fitted for {', '.join(fitted)}, not {m}")
            r = apply_score_method(fitted[m], J[m], level)
            est, lo, hi = r.est, r.lo, r.hi
            if name == "none":  # raw: topic-bootstrap percentile interval
                w = topic_weights(J[m].shape[0], n_boot, np.random.default_rng([seed, 2]))
                ok = np.isfinite(J[m])
                with np.errstate(invalid="ignore", divide="ignore"):
                    reps = (w @ np.where(ok, J[m], 0.0)) / (w @ ok)
                a = (1 - level) / 2
                lo, hi = np.nanquantile(reps, a, axis=0), np.nanquantile(reps, 1 - a, axis=0)
        else:
            ap = get_method(name).apply_pairs(fitted, jp, metrics=[m], level=level, rng=np.random.default_rng([seed, 1]))
            est = np.clip(ap.run[m], 0.0, 1.0)
            lo, hi = bounded(ap.run[m], (ap.hi[m] - ap.lo[m]) / 2.0)
        raw = _nanmean(J[m], axis=0)
        rows = [{"run_id": run, "raw": _f(raw[r]), "corrected": _f(est[r]), "corrected_ci": [_f(lo[r]), _f(hi[r])]}
                for r, run in enumerate(jp.run_ids)]
        rows.sort(key=lambda x: (-(x["corrected"] if x["corrected"] is not None else -1), x["run_id"]))
        out_metrics[m] = {"method": name, "rows": rows,
                          "note": f"{name} fitted on {len(model['fitted_on'].get('topics', []))} human-labelled topics, "
                                  f"applied to {len(jp.qids)} judge topics"}
    fitted_topics = set(model["fitted_on"].get("topics", []))
    return to_jsonable({"schema": SCHEMA + "/applied", "judge": judge.name, "level": level, "warnings": warnings,
                        "topics": {"fitted_on_and_applied": sorted(fitted_topics & set(jp.qids)),
                                   "judge_only": sorted(set(jp.qids) - fitted_topics)},
                        "by_metric": out_metrics})
