"""The fitted calibration model (``calibration-model.json``): what it depends on, and applying it to new judge labels.

A model records the fingerprints of the judge labels it was fitted on (judge spec, prompt version, per-topic nugget
sets, label policy).  :func:`apply_model` refuses when they differ from the new labels' - including a model fitted
with a recorded judge spec applied to labels whose spec is not given (it cannot be compared, so it is not assumed
equal) and topic ids renamed between fit and apply (a fitted topic's nugget set under another id) - unless
``allow_mismatch``, which turns the refusal into a warning.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from metaeval.io.jsonl import finite_or_none as _f
from metaeval.study.calibration_workflow.data import nanmean, score_matrix
from metaeval.study.calibration_workflow.defaults import MODEL_FORMAT, SCHEMA, SCORE_LEVEL

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet


def _hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def fingerprints(judge: "LabelSet", settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a fitted calibration depends on: judge spec, prompt version, nugget set (per topic), label policy.

    Judge spec and prompt version come from ``settings`` (``judge_spec``, ``prompt_version``) or the label set's
    provenance; ``None`` when neither says (a bare label file)."""
    from metaeval.calibration.pairing import nugget_set_hashes
    from metaeval.scoring import ScoringPolicy

    prov = judge.provenance or {}
    s = settings or {}
    spec = s.get("judge_spec") or prov.get("judge_spec") or prov.get("judge")
    prompt = s.get("prompt_version") or prov.get("prompt_version") or prov.get("prompt")
    policy = {"scoring": ScoringPolicy().as_dict(), "pairing": "(qid, run_id, normalised nugget text)",
              "failed": "FAILED support = no credit"}
    return {"judge_spec": None if spec is None else _hash(spec), "prompt_version": None if prompt is None else _hash(prompt),
            "nugget_set": nugget_set_hashes(judge), "label_policy": _hash(policy)}


def fit_model(data, cands, by_metric, s, reference, judge, full) -> dict[str, Any]:
    """Every candidate fitted on all human-labelled topics, the choice per metric, and the fingerprints."""
    models = {}
    for c in cands:
        try:
            models[c.name] = full.get(c)
        except Exception as exc:
            models[c.name] = {"failed": f"{type(exc).__name__}: {exc}"}
    return {"format": MODEL_FORMAT, "version": 3,
            "chosen": {m: b["selection"]["method"] for m, b in by_metric.items()},
            "intervals_by": {m: b["selection"]["intervals_by"] for m, b in by_metric.items()}, "level": s["level"],
            "fitted_on": {"reference": reference.name, "judge": judge.name,
                          "topics": [data.qids[i] for i in data.labelled], "runs": list(data.runs),
                          "pairing": data.pairing.summary(s["min_coverage"])},
            "fingerprints": fingerprints(judge, s), "models": models}


def check_fingerprints(model: dict[str, Any], judge: "LabelSet", settings: dict[str, Any] | None = None) -> list[str]:
    """What differs between the judge labels a model was fitted on and ``judge`` (empty list: nothing).

    * judge spec and prompt version: a value recorded at fit time must be given again and be equal (a missing one
      is a difference: "not given" cannot be shown to be the same judge);
    * label policy: equal;
    * nugget set: equal on every topic both hold; and a fitted topic's nugget set found under another topic id
      (ids renamed) is a difference too.  Topics the model never saw, with nuggets it never saw, are what it is for.
    """
    fitted = model.get("fingerprints") or {}
    now = fingerprints(judge, settings)
    diffs = []
    for k in ("judge_spec", "prompt_version"):
        if fitted.get(k) is not None and now[k] is None:
            diffs.append(f"{k} (recorded at fit time, not given for these labels)")
        elif fitted.get(k) is not None and fitted.get(k) != now[k]:
            diffs.append(k)
    if fitted.get("label_policy") is not None and fitted.get("label_policy") != now["label_policy"]:
        diffs.append("label_policy")
    old, new = fitted.get("nugget_set") or {}, now["nugget_set"]
    shared = set(old) & set(new)
    changed = sorted(q for q in shared if old[q] != new[q])
    if changed:
        diffs.append(f"nugget_set ({len(changed)} of {len(shared)} shared topics, e.g. {changed[0]})")
    by_hash = {h: q for q, h in old.items()}
    renamed = sorted((by_hash[h], q) for q, h in new.items() if h in by_hash and by_hash[h] != q and q not in old)
    if renamed:
        diffs.append(f"nugget_set (topic ids renamed: {len(renamed)} fitted topics appear under new ids, "
                     f"e.g. {renamed[0][0]} -> {renamed[0][1]})")
    return diffs


def apply_model(model: dict[str, Any], judge: "LabelSet", *, metrics: Sequence[str] | None = None,
                method: str | None = None, level: float | None = None, seed: int = 0, n_boot: int = 1000,
                settings: dict[str, Any] | None = None, allow_mismatch: bool = False) -> dict[str, Any]:
    """Apply a saved ``calibration-model.json`` to judge labels (ConfigError on a fingerprint difference unless
    ``allow_mismatch``, then ``warnings`` says so).

    By default each metric gets what the procedure chose (the model's ``chosen``, :mod:`.procedure`): its point
    estimate of the human run score on these topics (``raw`` / ``composite``: the judge's own score, since on new
    topics the composite is the raw judge), with the interval of ``intervals_by`` (PPI++'s) widened to contain
    the point, as the study's leaderboard shows it.  An explicit ``method`` overrides: that method's point with its
    own interval (score-level: topic-clustered; label-level: a point estimate only; ``raw`` / ``composite`` /
    ``none``: the judge's own score).  The judge's score always keeps its topic-bootstrap interval
    (``judge_score_ci``, seed ``seed``)."""
    from metaeval.calibration.methods import get_method
    from metaeval.calibration.pairs import pairs_from_labelset
    from metaeval.calibration.scorelevel import apply_score_method
    from metaeval.errors import ConfigError
    from metaeval.io.jsonl import to_jsonable
    from metaeval.scoring import normalize_metric, score_answers
    from metaeval.study.leaderboard import raw_leaderboards

    if model.get("format") != MODEL_FORMAT:
        raise ConfigError(f"not a {MODEL_FORMAT} file (format {model.get('format')!r}); refit with metaeval calibrate")
    diffs = check_fingerprints(model, judge, settings)
    now = fingerprints(judge, settings)
    warnings = [f"{k} not recorded at fit time: not compared" for k in ("judge_spec", "prompt_version")
                if (model.get("fingerprints") or {}).get(k) is None and now[k] is not None]
    if diffs:
        line = f"calibration model was fitted on different judge labels: {', '.join(diffs)} differ"
        if not allow_mismatch:
            raise ConfigError(line + " (refit, give the same --judge-spec/--prompt-version, or pass --allow-mismatch)")
        warnings.append(line)
    level = float(level or model.get("level", 0.95))
    chosen = model.get("chosen") or {}
    intervals_by = model.get("intervals_by") or {}
    metrics = [normalize_metric(m) for m in (metrics or list(chosen or intervals_by))]
    jp = pairs_from_labelset(judge)
    J = score_matrix(score_answers(judge), jp.qids, jp.run_ids, metrics)
    raw = raw_leaderboards(judge, None, metrics, n_boot=n_boot, seed=seed, level=level)["metrics"]

    def usable(name: str, m: str) -> dict[str, Any]:
        fitted = model["models"].get(name)
        if fitted is None or "failed" in fitted:
            raise ConfigError(f"the model file has no usable fitted {name!r} (have {', '.join(sorted(model['models']))})")
        if name in SCORE_LEVEL and m not in fitted:
            raise ConfigError(f"the model's {name!r} was fitted for {', '.join(fitted)}, not {m}")
        return fitted

    def score_level(name: str, m: str):
        from metaeval.random_streams import stream

        return apply_score_method(usable(name, m)[m], J[m], level,
                                  rng=stream(seed, "calibration.bootstrap_t", "apply", m))

    out_metrics = {}
    for m in metrics:
        name = method or chosen.get(m) or intervals_by.get(m) or "ppi_pp"
        ci_by = None if method else intervals_by.get(m)  # default: the chosen point, the procedure's intervals
        if ci_by == name:
            ci_by = None
        raw_like = name in ("none", "raw", "composite")  # on new topics the composite is the raw judge
        fitted = None if raw_like else usable(name, m)
        jrow = {r["run_id"]: r for r in raw[m]}
        judge_mean = nanmean(J[m], axis=0)
        lo = hi = None
        if raw_like:
            est = judge_mean
        elif name in SCORE_LEVEL:
            r = score_level(name, m)
            est, lo, hi = r.est, r.lo, r.hi
        else:
            ap = get_method(name).apply_pairs(fitted, jp, metrics=[m], level=level, rng=None)
            est = np.clip(ap.run[m], 0.0, 1.0)
        if ci_by is not None:  # the interval method's interval for the human score, widened to contain the point
            r = score_level(ci_by, m)
            with np.errstate(invalid="ignore"):
                lo, hi = np.fmin(r.lo, est), np.fmax(r.hi, est)
        rows = []
        shown = not raw_like or ci_by is not None  # a human estimate with its interval is shown
        for i, run in enumerate(jp.run_ids):
            row = {"run_id": run, "judge_score": _f(judge_mean[i]), "judge_score_ci": jrow.get(run, {}).get("raw_ci")}
            if shown:
                row.update({"human_estimate": _f(est[i]),
                            "human_estimate_ci": None if lo is None else [_f(lo[i]), _f(hi[i])]})
            rows.append(row)
        key = "human_estimate" if shown else "judge_score"
        rows.sort(key=lambda x: (-(x[key] if x[key] is not None else -1), x["run_id"]))
        if ci_by is not None:
            from metaeval.study.calibration_workflow.selection import INTERVALS_NAME

            what = (f"the chosen method's ({name}) estimate of the human run score on these topics"
                    + (" (the judge's own scores)" if raw_like else "")
                    + f"; the interval method differs from the point method: intervals by {ci_by} "
                      f"({INTERVALS_NAME}), widened to contain the point")
        elif raw_like:
            what = "the judge's own scores (raw kept; judge_score_ci is an interval for the judge's score)"
        else:
            what = (f"{name} estimate of the human run score on these topics"
                    + ("" if lo is not None else " (point estimates only: label-level intervals ignore topic clustering)"))
        out_metrics[m] = {"method": name, "intervals_by": ci_by or (name if lo is not None else None),
                          "chosen": chosen.get(m), "overridden": bool(method), "rows": rows,
                          "note": f"{what}; fitted on {len(model['fitted_on'].get('topics', []))} human-labelled topics, "
                                  f"applied to {len(jp.qids)} judge topics"}
    fitted_topics = set(model["fitted_on"].get("topics", []))
    return to_jsonable({"schema": SCHEMA + "/applied", "judge": judge.name, "level": level, "warnings": warnings,
                        "topics": {"fitted_on_and_applied": sorted(fitted_topics & set(jp.qids)),
                                   "judge_only": sorted(set(jp.qids) - fitted_topics)},
                        "by_metric": out_metrics})
