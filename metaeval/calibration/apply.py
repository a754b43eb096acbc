"""Fit calibrations on human-labelled topics, save them as JSON, apply them to judge-only label sets.

The model file (``calibration-model.json``) is a bundle, human-readable::

    {"format": "metaeval-calibration", "version": 1,
     "fitted_on": {"human": ..., "judge": ..., "topics": [...], "runs": [...], "n_pairs": ...},
     "models": {"matrix": {...}, "ppi": {...}, ...}}

``apply_models`` gives a corrected leaderboard per method and metric with CIs (each method's own interval), plus
the raw judge leaderboard with a topic-bootstrap percentile CI (resampling topics with replacement; the raw
judge has no analytic interval).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from metaeval.calibration.methods.base import Prediction, get_method, to_prediction
from metaeval.calibration.pairs import METRICS, align_pairs, pairs_from_labelset
from metaeval.errors import ConfigError, FormatError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet

FORMAT = "metaeval-calibration"


def fit_models(human: "LabelSet", judge: "LabelSet", methods: Sequence[str], metrics: Sequence[str] = METRICS,
               options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Fit every method on the pairs labelled by both sides; returns the JSON-ready bundle."""
    jp, h = align_pairs(human, judge)
    labelled = np.bincount(jp.ans_topic[jp.ans], weights=h >= 0, minlength=len(jp.qids)) > 0
    if not labelled.any():
        raise ConfigError(f"no (qid, run_id, nugget_id) of judge {judge.name!r} has a human label in {human.name!r}")
    keep = labelled[jp.ans_topic[jp.ans]]
    tj = jp.select_topics(np.flatnonzero(labelled))
    th = h[keep]
    models = {}
    for name in methods:
        opts = dict((options or {}).get(name, {}))
        if name == "ppi":
            opts.setdefault("metrics", list(metrics))
        models[name] = get_method(name).fit_pairs(tj, th, **opts)
    return {"format": FORMAT, "version": 1,
            "fitted_on": {"human": human.name, "judge": judge.name, "topics": [jp.qids[i] for i in np.flatnonzero(labelled)],
                          "runs": list(tj.run_ids), "n_pairs": int((th >= 0).sum())},
            "models": models}


def save_models(bundle: dict[str, Any], path: str | os.PathLike) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(bundle, fh, indent=1, allow_nan=False, default=_json_default)
        fh.write("\n")


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


def load_models(path: str | os.PathLike) -> dict[str, Any]:
    """Read a model bundle (or a single fitted model, which is wrapped)."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            obj = json.load(fh)
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, "", f"not valid JSON: {exc.msg}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read model file ({exc.strerror})") from exc
    if isinstance(obj, dict) and obj.get("format") == FORMAT:
        if not isinstance(obj.get("models"), dict) or not obj["models"]:
            raise FormatError(path, 1, "models", "expected a non-empty object of fitted models")
        for name, m in obj["models"].items():
            if not isinstance(m, dict) or m.get("method") != name:
                raise FormatError(path, 1, f"models.{name}.method", f"expected {name!r}")
        return obj
    if isinstance(obj, dict) and "method" in obj:
        return {"format": FORMAT, "version": 1, "fitted_on": {}, "models": {obj["method"]: obj}}
    raise FormatError(path, 1, "format", f"not a metaeval calibration model (expected format {FORMAT!r})")


def apply_models(bundle: dict[str, Any], judge: "LabelSet", metrics: Sequence[str] = METRICS, level: float = 0.95,
                 seed: int = 0, apply_options: dict[str, dict[str, Any]] | None = None) -> dict[str, Prediction]:
    """Apply every model of the bundle to a judge label set (``apply_options``: per-method keyword arguments,
    e.g. ``{"ppi": {"estimand": "population"}}``)."""
    jp = pairs_from_labelset(judge)
    rng = np.random.default_rng(seed)
    out = {}
    for name, model in bundle["models"].items():
        method = get_method(model["method"])
        use = [m for m in metrics if name != "ppi" or m in model.get("metrics", metrics)]
        opts = dict((apply_options or {}).get(name, {}))
        out[name] = to_prediction(name, jp, method.apply_pairs(model, jp, metrics=use, level=level, rng=rng, **opts), level)
    return out


def raw_leaderboard(judge: "LabelSet", metrics: Sequence[str] = METRICS, level: float = 0.95, n_boot: int = 1000,
                    seed: int = 0) -> "pd.DataFrame":
    """The judge's own run scores with topic-bootstrap percentile CIs (long: run_id, metric, estimate, ci_low, ci_high)."""
    import pandas as pd

    jp = pairs_from_labelset(judge)
    scores = jp.observed_scores(metrics)
    nr, nt = len(jp.run_ids), len(jp.qids)
    rng = np.random.default_rng(seed)
    w = rng.multinomial(nt, np.full(nt, 1.0 / nt), size=n_boot).astype(float)  # (B, T) topic multiplicities
    aw = w[:, jp.ans_topic]  # (B, A)
    rows = []
    for m in metrics:
        est = jp.run_means(scores[m])
        num = np.stack([np.bincount(jp.ans_run, weights=aw[b] * scores[m], minlength=nr) for b in range(n_boot)])
        den = np.stack([np.bincount(jp.ans_run, weights=aw[b], minlength=nr) for b in range(n_boot)])
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = num / den
        lo = np.nanquantile(reps, (1 - level) / 2, axis=0)
        hi = np.nanquantile(reps, 1 - (1 - level) / 2, axis=0)
        for r, run_id in enumerate(jp.run_ids):
            rows.append((run_id, m, float(est[r]), float(np.nanstd(reps[:, r], ddof=1)), float(lo[r]), float(hi[r])))
    return pd.DataFrame(rows, columns=["run_id", "metric", "estimate", "se", "ci_low", "ci_high"])


def leaderboard_records(runs: "pd.DataFrame", metric: str) -> list[dict[str, Any]]:
    df = runs[runs["metric"] == metric].sort_values(["estimate", "run_id"], ascending=[False, True])
    recs = []
    for rank, row in enumerate(df.itertuples(index=False), 1):
        recs.append({"rank": rank, "run_id": row.run_id, "estimate": _num(row.estimate), "se": _num(row.se),
                     "ci": [_num(row.ci_low), _num(row.ci_high)]})
    return recs


def _num(x: Any) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None
