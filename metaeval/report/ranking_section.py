"""The report's sections on how the judge ranks the runs, against the reference (human) ranking:

* ``tau``: Kendall's tau at the run, per-topic (mean) and pooled levels with topic-bootstrap CIs, and the
  per-topic forest plot;
* ``scatter``: judge vs reference run scores;
* ``bias``: per-run bias (judge minus reference run score) with paired topic-bootstrap CIs;
* ``leaderboards``: the judge's raw run ranking beside the reference's.

Every figure is the study's (``summary.json`` analysis, ``study/study.json``, ``runs.csv``); nothing is resampled.
"""

from __future__ import annotations

from typing import Any, Sequence

from metaeval.report import plots, tables
from metaeval.report.context import Context, dash
from metaeval.report.model import Detail, Figure, Section, Table, Text, fmt, fmt_ci
from metaeval.study.records import TopicTau, encode


def tau(ctx: Context) -> Section:
    metrics = list(dict.fromkeys(m for c in ctx.active if c.analysis is not None for m in c.analysis.metrics))
    rows = tables.tau(ctx.active, metrics)
    ctx.data["tau"] = rows
    look = tables.tau_lookup(rows)

    def est(cid: str, metric: str, level: str) -> dict[str, Any]:
        return look.get((cid, metric, level), {})

    main = [[cid] + [fmt_ci(est(cid, ctx.metric, lv).get("tau"), [est(cid, ctx.metric, lv).get("ci_low"),
                                                                  est(cid, ctx.metric, lv).get("ci_high")])
                     for lv in tables.LEVELS] for cid in ctx.ids if (cid, ctx.metric, "run") in look]
    allm = [[cid] + [fmt(est(cid, m, "run").get("tau")) for m in metrics]
            for cid in ctx.ids if (cid, metrics[0] if metrics else "", "run") in look]
    bar = ctx.th.get("min_run_tau_low")
    blocks: list = [
        Table(["cell"] + [tables.LEVEL_NAMES[lv] for lv in tables.LEVELS], main,
              f"Kendall tau ({ctx.variant}) on {ctx.metric_name} with 95% topic-bootstrap CIs", [False, True, True, True]),
        Table(["cell"] + metrics, allm, "run-level tau on every metric", [False] + [True] * len(metrics)),
    ]
    if main:
        blocks.append(Figure("tau_levels", "Tau at three levels", caption=
                             f"Kendall tau on {ctx.metric_name} at the run, per-topic (mean) and pooled levels; bars: 95% CI"
                             + (f"; dotted: the verdict's threshold {bar}." if bar is not None else "."),
                             svg=plots.later(plots.tau_levels, rows, [r[0] for r in main], ctx.metric, bar)))
    blocks += _per_topic(ctx, look)
    return Section("tau", "Kendall's tau at three levels", blocks)


def _per_topic(ctx: Context, look: dict) -> list:
    """The forest plot of per-topic tau (``study.json`` ``per_topic_tau``) with the mean and its CI, and its table."""
    per, means = {}, {}
    for cid, sc in ctx.study_cells().items():
        tt = sc.per_topic_tau.get(ctx.metric) if sc is not None else None
        if not tt:
            continue
        per[cid] = tt
        r = look.get((cid, ctx.metric, "topic_avg"), {})
        means[cid] = (r.get("tau"), [r.get("ci_low"), r.get("ci_high")])
    ctx.data["per_topic_tau"] = {cid: [encode(t) for t in tt] for cid, tt in per.items()}
    if not per:
        return []
    return [Figure("forest", "Per-topic tau (forest plot)", caption=
                   "Each point is one topic's tau between reference and judge scores of the runs; orange: mean over "
                   "topics where tau is defined, band: its 95% topic-bootstrap CI; grey band: tau undefined on "
                   "that topic (one side gives every run the same score), not drawn as a value.",
                   svg=plots.later(plots.forest, {cid: _tau_frame(v) for cid, v in per.items()}, means, ctx.metric)),
            Detail("per-topic tau table", [Table(["topic"] + list(per), _per_topic_rows(per),
                                                 f"per-topic Kendall tau on {ctx.metric_name} ('undefined': constant scores)",
                                                 [False] + [True] * len(per))], open=False)]


def scatter(ctx: Context) -> Section:
    ref, metric = ctx.res.reference_runs, ctx.metric
    points, taus = {}, {}
    if ref is not None:
        for c in ctx.active:
            runs = ctx.res.runs(c.cell)
            if runs is None:
                continue
            p = ref[["run_id", metric]].merge(runs[["run_id", metric]], on="run_id", suffixes=("_ref", "_judge"))
            points[c.cell] = p.rename(columns={f"{metric}_ref": "reference", f"{metric}_judge": "judge"})
            b = c.tau(metric, "run")
            taus[c.cell] = (b.tau, list(b.ci) if c.analysis is not None and metric in c.analysis.metrics else None)
    ctx.data["run_scores"] = {cid: p.to_dict(orient="records") for cid, p in points.items()}
    if not points:
        return Section("scatter", "Judge vs reference run scores", [Text("no reference run scores available", "note")])
    return Section("scatter", "Judge vs reference run scores", [
        Figure("scatter", "Judge vs reference run scores", caption=
               f"One point per run: mean {metric} over topics by the reference (x) and the judge (y); dashed: y = x; "
               "run-level tau-b with its 95% CI.", svg=plots.later(plots.scatter, points, taus, metric))])


def bias(ctx: Context) -> Section | None:
    """Per-run bias, judge minus reference run score, with the study's paired topic-bootstrap CIs."""
    per = {cid: sc.bias.metrics.get(ctx.metric) for cid, sc in ctx.study_cells().items()
           if sc is not None and sc.bias is not None}
    per = {k: v for k, v in per.items() if v is not None and v.runs}
    ctx.data["bias"] = {cid: encode(b) for cid, b in per.items()}
    if not per:
        return None
    rows = []
    for cid, b in per.items():
        neg = sum(1 for r in b.runs if r.ci[1] is not None and r.ci[1] < 0)
        pos = sum(1 for r in b.runs if r.ci[0] is not None and r.ci[0] > 0)
        rows.append([cid, fmt_ci(b.mean.bias, list(b.mean.ci)), str(len(b.runs)), str(neg), str(pos)])
    detail = [Table(["run", "reference", "judge", "bias [95% CI]", "topics"],
                    [[r.run_id, fmt(r.reference), fmt(r.judge), fmt_ci(r.bias, list(r.ci)), str(r.n_topics)]
                     for r in b.runs], cid, [False, True, True, True, True]) for cid, b in per.items()]
    return Section("bias", "Per-run bias (judge minus reference)", [
        Figure("bias", "Per-run bias", caption=
               f"Judge minus reference run score on {ctx.metric_name} (mean over the topics both scored), runs ordered by "
               f"the reference's score; bars: 95% paired topic-bootstrap CI ({dash(ctx.n_boot)} resamples; both sides "
               "resampled on the same topics).", svg=plots.later(plots.bias, ctx.data["bias"], ctx.metric)),
        Table(["cell", "mean bias [95% CI]", "runs", "runs judged lower", "runs judged higher"], rows,
              f"mean per-run bias on {ctx.metric_name}; 'judged lower/higher': runs whose CI excludes 0",
              [False, True, True, True, True]),
        Detail("per-run bias tables", detail, open=False)])


def leaderboards(ctx: Context) -> Section:
    lbs = []
    for cid, sc in ctx.study_cells().items():
        lb = sc.leaderboard if sc is not None else None
        lbs.append({"cell": cid, "metric": ctx.metric, "level": lb.level if lb else None,
                    "n_boot": lb.n_boot if lb else None, "source": "study",
                    "rows": list(lb.metrics.get(ctx.metric) or ()) if lb else []})
    ctx.data["leaderboards"] = lbs
    blocks: list = [Text(f"Run ranking on {ctx.metric_name} per cell: the judge's raw run means with a topic-bootstrap "
                         f"95% CI ({dash(ctx.n_boot)} resamples, analysis.bootstrap; for a calibrated cell the interval is "
                         "its calibration.json raw column, drawn with calibration.seed, otherwise with analysis.seed "
                         f"{dash(ctx.seed)}) beside the reference (human) run score. Nothing here is fitted: the "
                         "calibrated, cross-fitted leaderboard is in the calibration section.")]
    for lb in lbs:
        cols = ["rank", "run", "reference", "ref. rank", "judge raw [95% CI]", "rank shift"]
        rows = [[str(r["raw_rank"]), r["run_id"], fmt(r.get("reference")), dash(r.get("reference_rank")),
                 fmt_ci(r.get("raw"), r.get("raw_ci")), dash(r.get("rank_shift"))] for r in lb["rows"]]
        inner: list = [Table(cols, rows, f"{lb['cell']}", [True, False, True, True, True, True])] if rows else \
            [Text("no leaderboard for this cell in study/study.json", "note")]
        src = "calibration.json raw column" if lb["source"] == "calibration.json" else "study raw leaderboard"
        blocks.append(Detail(f"{lb['cell']} - raw ({src})", inner, open=False))
    return Section("leaderboards", "Leaderboards (raw judge vs reference)", blocks)


def _per_topic_rows(per: dict[str, Sequence[TopicTau]]) -> list[list[str]]:
    qids = sorted({str(r.qid) for recs in per.values() for r in recs})
    look = {cid: {str(r.qid): r.tau for r in recs} for cid, recs in per.items()}
    return [[q] + [("undefined" if look[cid].get(q) is None and q in look[cid] else fmt(look[cid].get(q)))
                   for cid in per] for q in qids]


def _tau_frame(records: Sequence[TopicTau]):
    """``qid, tau`` (NaN where undefined) from the study's per-topic tau records, for the forest plot."""
    import pandas as pd

    return pd.DataFrame({"qid": [r.qid for r in records],
                         "tau": [float("nan") if r.tau is None else float(r.tau) for r in records]})
