"""``calibrate_study``: the calibrate workflow, shared by sweep cells and ``metaeval calibrate``.

1. pairs labels by (topic, run, normalised nugget text) (:mod:`metaeval.calibration.pairing`); label-level
   methods run only when the match coverage is >= ``min_coverage`` (default 0.95), else they are refused with
   the counts;
2. scores both sides (:mod:`metaeval.scoring`) into (topic x run) matrices (:mod:`.data`);
3. makes the one decision (:mod:`.procedure`): every candidate (raw, composite, the corrections) on ``repeats``
   random splits of the human-labelled topics at the applied size, the rule per metric, and the nested
   evaluation of the same procedure (splits from stream ``calibration.splits``; the splits and the nested runs,
   with any of the caller's own tasks, run in *one* map over ``workers`` forked processes, default the available
   CPUs, with the same numbers as one: :func:`calibrate_alongside`); a cell that cannot yield a choice (too few
   human-labelled topics or runs) computes no split;
4. per metric: held-out error, tau and coverage of every candidate and the selection record (:mod:`.selection`);
5. the leaderboard: an estimate of the human leaderboard over the whole track with intervals (:mod:`.leaderboard`);
   the judge's own score and its interval come from the one raw leaderboard
   (:func:`metaeval.study.leaderboard.raw_leaderboards`, seeded by ``analysis_seed``), so ``calibration.seed``
   moves only calibration and ``analysis.seed`` the raw intervals;
6. every usable candidate fitted on all human-labelled topics, with fingerprints (:mod:`.model`);
7. the rank sets of the calibrated leaderboard (:mod:`metaeval.study.ranksets`, stream ``calibration.rank_sets``
   of the calibration ``seed``).

Returned keys (JSON-ready): ``schema, metric, reference, judge, seed, analysis_seed, settings, pairing, topics,
candidates, selection, leaderboard, recommendation`` (the primary ``metric``), ``by_metric`` (the same blocks per
metric) and ``model`` (drop it from ``calibration.json`` with :func:`split_model`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from metaeval.study.calibration_workflow.defaults import SCHEMA, SCORE_LEVEL, resolve_settings

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet


def _source(ls: "LabelSet") -> str:
    """The file a label set was read from (its name when it was made in memory), for error messages."""
    return str((ls.provenance or {}).get("path") or ls.name)


class FullFits:
    """Fits on every human-labelled topic, memoised per candidate (fitting draws nothing at random), shared by the
    leaderboard of every metric and the saved model."""

    def __init__(self, labelled):
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
    return calibrate_alongside(reference, judge, settings, seed=seed, analysis_seed=analysis_seed)[0]


def calibrate_alongside(reference: "LabelSet", judge: "LabelSet", settings: dict[str, Any] | None, *, seed: int,
                        analysis_seed: int = 0, alongside=()) -> tuple[dict[str, Any], list]:
    """:func:`calibrate_study`, with the caller's independent tasks ``alongside`` (functions of no argument) run
    in the same map of forked processes as the splits and the nested runs
    (:func:`~metaeval.study.calibration_workflow.procedure.decide_and_nest`): ``(calibration, their results)``.
    A task that raises stops the map: wrap it to return its exception when the calibration should go on.  When the
    calibration fails before the map (too few topics, unreadable labels) the exception is raised and ``alongside``
    has not run."""
    from metaeval.calibration.methods import display_names
    from metaeval.errors import ConfigError
    from metaeval.io.jsonl import to_jsonable
    from metaeval.study.calibration_workflow.data import CalibrationData, label_candidate, score_candidate
    from metaeval.study.calibration_workflow.model import fit_model
    from metaeval.study.calibration_workflow.procedure import decide_and_nest
    from metaeval.study.leaderboard import raw_leaderboards
    from metaeval.study.ranksets import rank_set_intervals, rank_sets_block

    s = resolve_settings(settings)
    metrics = s["metrics"]
    data = CalibrationData(reference, judge, metrics)
    pairing = data.pairing.summary(s["min_coverage"])
    n_lab = len(data.labelled)
    if n_lab < 2:
        raise ConfigError(f"calibrate: {_source(reference)} and {_source(judge)} share {n_lab} topic(s) with answers on "
                          "both sides; need at least 2 human-labelled topics")
    cands, refused = [], {}
    for name in s["methods"]:
        if name in SCORE_LEVEL:
            cands.append(score_candidate(name, data, metrics, s["level"], seed, s["n_boot_t"]))
        elif pairing["label_level"] != "ok":
            refused[name] = pairing["refusal"]
        else:
            cands.append(label_candidate(name, data, metrics, s["level"], s["options"], seed))
    # the rank sets' bootstrap needs no leaderboard: it goes out with the splits (its own stream, the same numbers)
    rank_task = lambda: rank_set_intervals(data, s["metric"], level=s["level"], seed=seed)  # noqa: E731
    decision, nest, extra = decide_and_nest(cands, data, s, seed, s["workers"], [rank_task, *alongside])
    intervals, extra = extra[0], extra[1:]
    full = FullFits(data.labelled)
    raw = raw_leaderboards(judge, None, metrics, n_boot=s["n_boot"], seed=analysis_seed, level=s["level"])["metrics"]
    by_metric = {m: metric_block(m, data, cands, refused, decision, nest, s, full, {r["run_id"]: r for r in raw[m]})
                 for m in metrics}
    model = fit_model(data, cands, by_metric, s, reference, judge, full)
    topics = {"human_labelled": [data.qids[i] for i in data.labelled], "judge_only": [data.qids[i] for i in data.judge_only]}
    prim = by_metric[s["metric"]]
    out = {"schema": SCHEMA, "metric": s["metric"], "reference": reference.name, "judge": judge.name, "seed": seed,
           "analysis_seed": analysis_seed,
           "settings": {k: s[k] for k in ("folds", "repeats", "nested_splits", "min_topics", "methods", "metrics",
                                          "level", "min_coverage", "n_boot", "n_boot_t")}
           | {"folds_used": decision.n_fit, "splits": s["repeats"], "fit_topics": decision.n_fit,
              "held_out_topics": decision.n_held},
           "pairing": pairing, "topics": topics, "method_names": display_names(s["methods"]),
           **{k: prim[k] for k in ("candidates", "selection", "leaderboard", "recommendation")},
           "by_metric": by_metric, "model": model}
    out["rank_sets"] = rank_sets_block(data, s["metric"], prim["leaderboard"], level=s["level"], seed=seed,
                                       intervals=intervals)
    return to_jsonable(out), extra


def metric_block(metric, data, cands, refused, decision, nest, s, full, judge_rows) -> dict[str, Any]:
    """``candidates, selection, leaderboard, recommendation`` for one metric, all from the one ``decision``."""
    from metaeval.study.calibration_workflow.leaderboard import calibrated_leaderboard
    from metaeval.study.calibration_workflow.selection import held_out, recommendation, selection_record

    ev = decision.evaluation
    candidates: dict[str, Any] = {}
    for c in cands:
        if ev is not None and c.name in ev.failed:
            candidates[c.name] = {"level": c.level, "status": "failed", "reason": ev.failed[c.name]}
        elif ev is None:
            candidates[c.name] = {"level": c.level, "status": "not evaluated",
                                  "reason": decision.choice[metric]["why"]}
        else:
            candidates[c.name] = {"level": c.level, "status": "ok", "reason": None,
                                  "held_out": held_out(ev, c.name, metric, s["level"], c.level)}
    for name, why in refused.items():
        candidates[name] = {"level": "label", "status": "refused", "reason": why}
    if candidates.get("ppi_pp", {}).get("status") == "failed":  # nothing else gives the intervals shown
        from metaeval.errors import ConfigError

        raise ConfigError(f"calibration: ppi_pp could not be fitted ({candidates['ppi_pp'].get('reason')})")
    sel = selection_record(metric, decision, nest, candidates, s, len(data.labelled), len(data.judge_only))
    usable = [c for c in cands if candidates[c.name]["status"] in ("ok", "not evaluated")]
    board = calibrated_leaderboard(metric, sel, data, usable, full, judge_rows)
    return {"candidates": candidates, "selection": sel, "leaderboard": board,
            "recommendation": recommendation(metric, sel, candidates)}


def split_model(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(calibration.json dict without the model, calibration-model.json dict)."""
    rest = {k: v for k, v in result.items() if k != "model"}
    return rest, result.get("model") or {}
