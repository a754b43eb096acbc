"""The report's sections on how the judge ranks the runs, against the reference (human) ranking:

* ``tau``: Kendall's tau at the run, per-topic (mean) and pooled levels with topic-bootstrap CIs, and the
  per-topic forest plot;
* ``scatter``: judge vs reference run scores;
* ``bias``: per-run bias (judge minus reference run score) with paired topic-bootstrap CIs;
* ``leaderboards``: the judge's raw run ranking beside the reference's.

Every figure is the study's (``summary.json`` analysis, ``study/study.json``, ``runs.csv``); nothing is resampled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from metaeval.report import plots, tables
from metaeval.report.context import Context, dash
from metaeval.report.model import Config, Detail, Est, Figure, Ident, Num, Paper, Section, Table, Text, fmt, fmt_ci
from metaeval.study.records import MetricBias, TopicTau, encode

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.report.render_latex import Names


def tau(ctx: Context) -> Section:
    metrics = list(dict.fromkeys(m for c in ctx.active if c.analysis is not None for m in c.analysis.metrics))
    rows = tables.tau(ctx.active, metrics)
    ctx.data["tau"] = rows
    look = tables.tau_lookup(rows)

    def est(cid: str, metric: str, level: str) -> dict[str, Any]:
        return look.get((cid, metric, level), {})

    main_t = tau_table(rows, ctx.metric, ctx.ids, caption=f"Kendall tau ({ctx.variant}) on {ctx.metric_name} with "
                       "95% topic-bootstrap CIs")
    main = main_t.rows
    allm = [[cid] + [fmt(est(cid, m, "run").get("tau")) for m in metrics]
            for cid in ctx.ids if (cid, metrics[0] if metrics else "", "run") in look]
    bar = ctx.th.get("min_run_tau_low")
    blocks: list = [
        main_t,
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
    detail = [Table(["run", "reference", "judge", "bias [95% CI]", "topics"],
                    [[r.run_id, fmt(r.reference), fmt(r.judge), fmt_ci(r.bias, list(r.ci)), str(r.n_topics)]
                     for r in b.runs], cid, [False, True, True, True, True]) for cid, b in per.items()]
    return Section("bias", "Per-run bias (judge minus reference)", [
        Figure("bias", "Per-run bias", caption=
               f"Judge minus reference run score on {ctx.metric_name} (mean over the topics both scored), runs ordered by "
               f"the reference's score; bars: 95% paired topic-bootstrap CI ({dash(ctx.n_boot)} resamples; both sides "
               "resampled on the same topics).", svg=plots.later(plots.bias, ctx.data["bias"], ctx.metric)),
        bias_table(per, caption=f"mean per-run bias on {ctx.metric_name}; 'judged lower/higher': runs whose CI "
                                "excludes 0"),
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
        inner: list = [board_table(lb)] if lb["rows"] else \
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



# ------------------------------------------------------------------ the tables, defined once (report and paper)
def tau_table(rows: list[dict[str, Any]], metric: str, ids: list[str], names: "Names | None" = None,
              caption: str = "") -> Table:
    """Kendall's tau per configuration at the three levels, each with its 95% topic-bootstrap CI (``tables.tau``
    records); ``names`` (the paper's, :class:`~metaeval.report.render_latex.Names`) adds the paper caption."""
    look = tables.tau_lookup(rows)
    body = [[Config(cid)] + [Est(look[(cid, metric, lv)].get("tau"), [look[(cid, metric, lv)].get("ci_low"),
                                                                      look[(cid, metric, lv)].get("ci_high")])
                             if (cid, metric, lv) in look else "n/a" for lv in tables.LEVELS]
            for cid in ids if (cid, metric, "run") in look]
    paper = None
    if names is not None:
        from metaeval.report.render_latex import CITE_NUGGETS

        paper = Paper("tau", f"Kendall's $\\tau$, judge vs.\\ human {names.metric_tex} rankings \\citep{{{CITE_NUGGETS}}}, "
                      f"{names.data_phrase}; 95\\% CI below.",
                      f"Kendall's tau-b between the rankings by the judge's and by the human labels' "
                      f"{names.metric_plain} on {names.data_plain}: run = runs ranked by their mean score over topics; "
                      "topic = runs ranked within each topic, tau averaged over the topics where it is defined; pooled "
                      "= tau over all (topic, run) cells (the three levels of Pradeep et al., 2025). Below each "
                      "estimate its 95% topic-bootstrap confidence interval (topics resampled with replacement).")
    return Table(["cell"] + [tables.LEVEL_NAMES[lv] for lv in tables.LEVELS], body, caption, [False, True, True, True],
                 tex_columns=["", "run", "topic", "pooled"], paper=paper)


def bias_table(per: Mapping[str, MetricBias], names: "Names | None" = None, caption: str = "") -> Table:
    """Mean per-run bias (judge minus human) per configuration with its CI, and the runs significantly lower or
    higher (their own paired topic-bootstrap CI excludes 0); ``per``: cell -> the study's bias on the metric."""
    body, n_runs = [], []
    for cid, b in per.items():
        m, runs = b.mean, b.runs
        low = sum(1 for r in runs if r.ci[1] is not None and r.ci[1] < 0)
        high = sum(1 for r in runs if r.ci[0] is not None and r.ci[0] > 0)
        body.append([Config(cid), Est(m.bias, m.ci, signed=True), str(len(runs)), str(low), str(high)])
        n_runs.append(f"{names.plain(cid) if names else cid}: {len(runs)}")
    paper = None
    if names is not None:
        paper = Paper("bias", f"Judge minus human {names.metric_tex} per run, {names.data_phrase}: mean (95\\% CI "
                              "below), runs significantly lower or higher.",
                      f"Per-run bias of each judge, judge minus human run score on {names.metric_plain} on "
                      f"{names.data_plain}: the mean over runs with its 95% paired topic-bootstrap CI below it, and how "
                      "many runs the judge scores significantly lower or higher (their own CI excludes 0)"
                      + (f"; runs per configuration: {'; '.join(n_runs)}." if body else "."))
    return Table(["cell", "mean bias [95% CI]", "runs", "runs judged lower", "runs judged higher"], body, caption,
                 [False, True, True, True, True], tex_columns=["", "bias", "", "lower", "higher"],
                 where=["", "", "report", "", ""], paper=paper)


def board_table(lb: Mapping[str, Any], names: "Names | None" = None) -> Table:
    """A cell's raw leaderboard (``report.json`` ``leaderboards``): the judge's run ranking with its interval beside
    the reference's; the paper orders the runs by the reference."""
    from metaeval.report.render_latex import STACK_MAX_ROWS

    rows = list(lb["rows"])
    body = [[str(r["raw_rank"]) if "raw_rank" in r else "-", Ident(r["run_id"]), Num(r.get("reference")),
             dash(r.get("reference_rank")), Est(r.get("raw"), r.get("raw_ci")), dash(r.get("rank_shift"))]
            for r in rows]
    paper = None
    if names is not None:
        cell = lb["cell"]
        stacked = len(rows) <= STACK_MAX_ROWS
        where = "below" if stacked else "beside"
        paper = Paper(f"leaderboard_{cell}",
                      f"{names.metric_tex} per run, {names.phrase(cell)}, {names.data_phrase}: human, judge (95\\% CI "
                      f"{where}).",
                      f"Run leaderboard on {names.metric_plain}, {names.plain(cell)}, on {names.data_plain}, runs "
                      "ordered by the reference: human = mean human score over topics; judge = the judge's mean score "
                      f"with its 95% topic-bootstrap interval {where} it. Not calibrated: calibration needs the judge to "
                      "label the human nuggets.", layout="board", stacked=stacked,
                      rows=sorted(range(len(rows)), key=lambda i: (rows[i].get("reference") is None,
                                                                   -(rows[i].get("reference") or 0))))
    return Table(["rank", "run", "reference", "ref. rank", "judge raw [95% CI]", "rank shift"], body,
                 f"{lb['cell']}", [True, False, True, True, True, True], tex_columns=["", "", "human", "", "judge", ""],
                 where=["report", "", "", "report", "", "report"], paper=paper)
