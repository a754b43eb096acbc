"""``calibrate_study``: the calibrate workflow, shared by sweep cells and ``metaeval calibrate``.

1. pairs labels by (topic, run, normalised nugget text) (:mod:`metaeval.calibration.pairing`); label-level
   methods run only when the match coverage is >= ``min_coverage`` (default 0.95), else they are refused with
   the counts;
2. scores both sides (:mod:`metaeval.scoring`) into (topic x run) matrices (:mod:`.data`);
3. cross-fits every candidate ``repeats`` times over ``folds`` leave-topics-out folds of the human-labelled
   topics, with nested selection inside each outer training set
   (:func:`metaeval.calibration.crossfit.repeated_crossfit`; folds from stream ``calibration.crossfit``; the
   repeats run in ``workers`` forked processes, default the available CPUs, with the same numbers as one);
4. per metric: held-out error, coverage, tau and wins of every candidate, and the decision (:mod:`.selection`);
5. the leaderboard: an estimate of the human leaderboard over the whole track with intervals (:mod:`.leaderboard`);
   the judge's own score and its interval come from the one raw leaderboard
   (:func:`metaeval.study.leaderboard.raw_leaderboards`, seeded by ``analysis_seed``), so ``calibration.seed``
   moves only calibration and ``analysis.seed`` the raw intervals;
6. every usable candidate fitted on all human-labelled topics, with fingerprints (:mod:`.model`).

Returned keys (JSON-ready): ``schema, metric, reference, judge, seed, analysis_seed, settings, pairing, topics,
candidates, selection, leaderboard, recommendation`` (the primary ``metric``), ``by_metric`` (the same blocks per
metric) and ``model`` (drop it from ``calibration.json`` with :func:`split_model`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from metaeval.study.calibration.settings import SCHEMA, SCORE_LEVEL, resolve_settings

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet


def _source(ls: "LabelSet") -> str:
    """The file a label set was read from (its name when it was made in memory), for error messages."""
    return str((ls.provenance or {}).get("path") or ls.name)


class FullFits:
    """Fits on every human-labelled topic, memoised per candidate (fitting draws nothing at random), shared by the
    leaderboard of every metric and the saved model."""

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


def calibrate_study(reference: "LabelSet", judge: "LabelSet", settings: dict[str, Any] | None, *, seed: int,
                    analysis_seed: int = 0) -> dict[str, Any]:
    """Calibrate ``judge`` against ``reference`` (see the module docstring); JSON-ready dict."""
    from metaeval.calibration.crossfit import repeated_crossfit
    from metaeval.calibration.methods import display_names
    from metaeval.errors import ConfigError
    from metaeval.io.jsonl import to_jsonable
    from metaeval.study.calibration.data import CalibrationData, label_candidate, score_candidate
    from metaeval.study.calibration.model import fit_model
    from metaeval.study.leaderboard import raw_leaderboards

    s = resolve_settings(settings)
    metrics = s["metrics"]
    data = CalibrationData(reference, judge, metrics)
    pairing = data.pairing.summary(s["min_coverage"])
    n_lab = len(data.labelled)
    if n_lab < 2:
        raise ConfigError(f"calibrate: {_source(reference)} and {_source(judge)} share {n_lab} topic(s) with answers on "
                          "both sides; need at least 2 human-labelled topics")
    folds = min(s["folds"], n_lab)
    cands, refused = [], {}
    for name in s["methods"]:
        if name in SCORE_LEVEL:
            cands.append(score_candidate(name, data, metrics, s["level"]))
        elif pairing["label_level"] != "ok":
            refused[name] = pairing["refusal"]
        else:
            cands.append(label_candidate(name, data, metrics, s["level"], s["options"], seed))
    repeats = repeated_crossfit(cands, data.labelled, data.truth, metrics, folds=folds, inner_folds=s["inner_folds"],
                                rule=s["selection"], seed=seed, repeats=s["repeats"], workers=s["workers"])
    full = FullFits(data.labelled)
    raw = raw_leaderboards(judge, None, metrics, n_boot=s["n_boot"], seed=analysis_seed, level=s["level"])["metrics"]
    by_metric = {m: metric_block(m, data, cands, refused, repeats, s, full, {r["run_id"]: r for r in raw[m]})
                 for m in metrics}
    model = fit_model(data, cands, by_metric, s, reference, judge, full)
    topics = {"human_labelled": [data.qids[i] for i in data.labelled], "judge_only": [data.qids[i] for i in data.judge_only]}
    prim = by_metric[s["metric"]]
    out = {"schema": SCHEMA, "metric": s["metric"], "reference": reference.name, "judge": judge.name, "seed": seed,
           "analysis_seed": analysis_seed,
           "settings": {k: s[k] for k in ("folds", "inner_folds", "repeats", "win_share", "min_topics", "methods", "metrics", "level",
                                          "min_coverage", "n_boot", "selection")} | {"folds_used": folds},
           "pairing": pairing, "topics": topics, "method_names": display_names(s["methods"]),
           **{k: prim[k] for k in ("candidates", "selection", "leaderboard", "recommendation")},
           "by_metric": by_metric, "model": model}
    return to_jsonable(out)


def metric_block(metric, data, cands, refused, repeats, s, full, judge_rows) -> dict[str, Any]:
    """``candidates, selection, leaderboard, recommendation`` for one metric."""
    from metaeval.study.calibration.leaderboard import calibrated_leaderboard
    from metaeval.study.calibration.selection import decide, held_out, mean_se, nested_errors, recommendation, repeat_winners

    usable = [c for c in cands if all(c.name in f.preds for folds in repeats for f in folds)]
    candidates: dict[str, Any] = {}
    for c in cands:
        if c not in usable:
            why = next(f.failed[c.name] for folds in repeats for f in folds if c.name in f.failed)
            candidates[c.name] = {"level": c.level, "status": "failed", "reason": why}
        else:
            candidates[c.name] = {"level": c.level, "status": "ok", "reason": None,
                                  "held_out": held_out(repeats, c, metric, data, s["level"])}
    for name, why in refused.items():
        candidates[name] = {"level": "label", "status": "refused", "reason": why}
    names = [c.name for c in usable]
    nested, choices = nested_errors(repeats, metric)
    raw_errs = [np.array([h for h in _fold_errs(folds, "none", metric)]) for folds in repeats]
    nest = {"mae": mean_se(nested), "diff_vs_raw": mean_se([a - b for a, b in zip(nested, raw_errs)])}
    if "ppi_pp" not in names:  # the fallback failed to fit: nothing else gives a topic-clustered interval everywhere
        from metaeval.errors import ConfigError

        raise ConfigError(f"calibration: ppi_pp could not be fitted ({candidates['ppi_pp'].get('reason')})")
    dec = decide(candidates, repeat_winners(repeats, names, metric), nest, s["win_share"], len(data.labelled),
                 s["min_topics"])
    sel = {**dec, "rule": f"repeated cross-fitting, win share >= {s['win_share']:.0%}, nested one-SE, "
                          f">= {s['min_topics']} human-labelled topics",
           "repeats": len(repeats), "folds": len(repeats[0]), "n_topics": int(len(data.labelled)),
           "beats_raw": dec["method"] != "none" and dec["verdict"] == "stable",
           "nested_mae": nest["mae"], "nested_diff_vs_raw": nest["diff_vs_raw"],
           "raw_mae": candidates["none"]["held_out"]["mae"],
           "held_out_mae": candidates[dec["method"]]["held_out"]["mae"],
           "nested_choices": {c: sum(ch.count(c) for ch in choices) for c in names if any(c in ch for ch in choices)},
           "note": "held-out = outer folds (fitted without the fold's topics), repeated over independent fold "
                   "assignments; nested = the whole selection procedure run inside each outer training set and scored "
                   "on the outer fold; +- = mean over repeats of the fold SE"}
    board = calibrated_leaderboard(metric, sel, data, usable, full, judge_rows)
    return {"candidates": candidates, "selection": sel, "leaderboard": board,
            "recommendation": recommendation(metric, sel, candidates)}


def _fold_errs(folds, name, metric):
    from metaeval.study.calibration.selection import fold_mae_of

    return [fold_mae_of(f, name, metric) for f in folds]


def split_model(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(calibration.json dict without the model, calibration-model.json dict)."""
    rest = {k: v for k, v in result.items() if k != "model"}
    return rest, result.get("model") or {}
