"""Assemble a report from a results folder: every section's tables and figures from what the study wrote
(``summary.json``, ``study/study.json``, ``analysis/``, per-cell ``runs.csv``).  Nothing is loaded from the dataset,
scored, fitted or resampled here."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from metaeval.errors import ConfigError
from metaeval.report import plots, tables, verdict as verdict_mod
from metaeval.report.load import Results, load_results
from metaeval.report.model import Detail, Figure, Items, Report, Section, Table, Text, fmt, fmt_ci
from metaeval.report.provenance import collect
from metaeval.report.viewer import unit_link

log = logging.getLogger(__name__)

FORMAT = "metaeval-report"


def build_report(results_dir: str | Path, thresholds: dict[str, Any] | str | Path | None = None,
                 metric: str | None = None, worst_topics: int = 3) -> Report:
    """Build the report of a sweep's results folder.

    ``thresholds``: a mapping (over the defaults) or a thresholds file path; ``metric`` defaults to the
    thresholds' metric (``v_strict``) and must be one the study computed; ``worst_topics``: how many of the
    study's worst topics per cell to show.
    """
    th = dict(verdict_mod.DEFAULTS)
    if isinstance(thresholds, dict):
        th.update(thresholds)
    elif thresholds is not None:
        th = verdict_mod.load_thresholds(thresholds)
    metric = metric or th["metric"]
    res = load_results(results_dir)
    known = res.study.get("metrics") or []
    if known and metric not in known:
        raise ConfigError(f"metric {metric!r}: the study of {res.path} computed {', '.join(known)}")
    return _Builder(res, th, metric, worst_topics).build()


class _Builder:
    def __init__(self, res: Results, th: dict[str, Any], metric: str, worst: int):
        self.res, self.th, self.metric, self.worst = res, th, metric, worst
        self.n_boot, self.seed = res.study.get("bootstrap"), res.study.get("seed")
        self.data: dict[str, Any] = {"format": FORMAT, "version": 1, "results_dir": str(res.path), "metric": metric}
        self.active = res.active
        self.ids = [c["cell"] for c in self.active]
        self.variant = str((res.config.get("analysis") or {}).get("tau", "b"))  # the analysis' tau variant
        self.pages: dict[str, str] = {}  # the transcript viewers, by path relative to the results folder

    def build(self) -> Report:
        verdict = verdict_mod.evaluate(self.res.cells, self.th)
        self.data["verdict"] = verdict
        sections = [self.s_summary(verdict), self.s_verdict(verdict), self.s_tau(), self.s_consistency(), self.s_bias(), self.s_scatter(),
                    self.s_agreement(), self.s_descriptive(), self.s_leaderboards(), self.s_calibration(),
                    self.s_disagreements(), self.s_usage(), self.s_injection(), self.s_plan(), self.s_provenance()]
        sections = [s for s in sections if s is not None]  # no empty sections
        self.data["problems"] = list(dict.fromkeys(self.res.problems))
        if self.data["problems"]:
            sections.append(Section("problems", "Problems while building the report",
                                    [Text(p, "note") for p in self.data["problems"]]))
        title = f"Calibration report: {self.res.summary.get('experiment') or self.res.path.name}" \
            + (" (synthetic data)" if self._synthetic() else "")
        rep = Report(title, sections, self.data, verdict, pages=self.pages)
        self.data["figures"] = [f.name for f in rep.figures]
        return rep

    def _synthetic(self) -> str:
        """The warning for a synthetic dataset (the demo: its registry description, as the study stored it), or ''."""
        prov = (self.res.summary.get("dataset") or {}).get("provenance") or {}
        if not prov.get("synthetic"):
            return ""
        self.data["synthetic"] = True
        return "Synthetic data: " + (prov.get("description") or "not real assessments.")

    # ------------------------------------------------------------------ sections
    def s_summary(self, v: dict[str, Any]) -> Section:
        """First: the verdict with its reasons, then one plain-language sentence per cell (H9)."""
        bar = self.th.get("min_run_tau_low")
        bar = 0.8 if bar is None else float(bar)
        lines = verdict_mod.plain_summary(self.res.cells, self.res.study.get("cells") or {}, self.metric, bar)
        self.data["summary"] = {"verdict": verdict_mod.headline(v), "cells": lines}
        blocks: list = [Text(verdict_mod.headline(v), "pass" if v["passed"] else "fail")]
        synthetic = self._synthetic()
        if synthetic:
            blocks.insert(0, Text(synthetic, "note"))
        if lines:
            blocks.append(Items(lines))
        blocks.append(Text(f"On {self.metric}; every interval is a 95% topic-bootstrap CI ({_s(self.n_boot)} resamples); "
                           f"'fine' means the lower bound is at least {bar:g} (the verdict's bar for run-level tau).", "note"))
        return Section("summary", "Summary", blocks)

    def s_verdict(self, v: dict[str, Any]) -> Section:
        th = v["thresholds"]
        rules = ", ".join(f"{verdict_mod.CHECKS[k][0]} {verdict_mod.CHECKS[k][3]} {fmt(x)}" for k, x in th.items() if k != "metric")
        keys = [k for k in th if k != "metric"]
        cols = ["cell", "verdict"] + [f"{verdict_mod.CHECKS[k][0]}{' (' + th['metric'] + ')' if 'tau' in k else ''} "
                                      f"{verdict_mod.CHECKS[k][3]} {fmt(th[k])}" for k in keys]
        rows = []
        for c in v["cells"]:
            if c["status"] in ("skipped", "withheld"):  # withheld: too many FAILED labels, no figures
                rows.append([c["cell"], c["status"].upper()] + ["-"] * len(keys))
                continue
            by = {x["check"]: x for x in c["checks"]}
            rows.append([c["cell"], c["status"].upper()] +
                        [("undefined" if by[k]["value"] is None else fmt(by[k]["value"])) + (" ok" if by[k]["passed"] else " FAILS")
                         for k in keys])
        head = "ALL CELLS PASS. " if v["passed"] else f"{v['n_failed']} cell(s) FAIL. "
        return Section("verdict", "Verdict", [
            Text(head + f"Thresholds on {th['metric']}: {rules or 'none active'}. "
                 "`metaeval report --strict` exits 1 when any cell fails.", "p"),
            Table(cols, rows, "pass/fail per grid cell (why a cell was skipped: the grid cells section)",
                  [False, False] + [True] * len(keys))])

    def s_provenance(self) -> Section:
        import json

        prov = collect(self.res.summary)
        self.data["provenance"] = prov
        ds = prov["dataset"]
        git = prov.get("git")
        command = self._command()
        self.data["command"] = command
        blocks: list = [
            Text(f"Command: {command}" if command else "Command: not recorded (no overrides.yaml in the results folder).",
                 "pre" if command else "note"),
            Text(f"Experiment {prov['experiment']!s} on dataset {ds['name']!s} ({ds['topics']} topics, {ds['runs']} runs, "
                 f"{ds['answers']} answers). Source: {ds.get('source') or '-'}. Git commit: "
                 + (f"{git['commit']}{' (uncommitted changes)' if git.get('dirty') else ''}" if git else "not a git checkout")
                 + f". Wall time {fmt(prov.get('elapsed_s'), 1)} s."),
            Detail("dataset files, prompts, packages, seeds", [Table(["file", "md5", "sha256", "size"], [[_s(f["filename"]), _s(f["md5"]), _s(f["sha256"]), _s(f["size"])]
                                                       for f in ds["files"]], "dataset files", [False, False, False, True]),
            Table(["cell", "template", "version", "sha"], [[p["cell"], p["template"], p["version"], p["sha"]] for p in prov["prompts"]]
                  or [["-", "-", "-", "no prompt templates (offline judges)"]], "prompt templates used"),
            Table(["package", "version"], [[k, _s(v)] for k, v in prov["packages"].items()], "package versions (at report time)"),
            Table(["seed", "value"], [[k, _s(v)] for k, v in prov["seeds"].items()], "seeds")], open=False),
            Detail("configuration (as composed)", [Text(json.dumps(prov["config"], indent=2, default=str), "pre")], open=False),
        ]
        if prov.get("stopped"):
            blocks.insert(2, Text(f"The sweep stopped early: {prov['stopped']}", "note"))
        return Section("provenance", "Provenance", blocks)

    def _command(self) -> str | None:
        """``metaeval sweep <overrides>`` from the results folder's ``overrides.yaml`` (the overrides composed into
        config.yaml; options that do not change results, e.g. ``--no-progress``, are not recorded)."""
        import shlex

        path = self.res.layout.overrides_yaml
        if not path.exists():
            return None
        try:
            import yaml

            ov = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        except Exception as exc:  # noqa: BLE001 - shown, never hidden
            self.res.problems.append(f"{path}: unreadable ({type(exc).__name__}: {exc})")
            return None
        if not isinstance(ov, list):
            return None
        return "metaeval sweep " + " ".join(shlex.quote(str(o)) for o in ov)

    def s_usage(self) -> Section:
        rows = tables.usage(self.res.cells)
        self.data["usage"] = rows
        ran = [r for r in rows if "skipped" not in r]
        skipped = [Text("Skipped: " + "; ".join(f"{r['cell']} ({r['skipped']})" for r in rows if "skipped" in r) + ".", "note")] \
            if any("skipped" in r for r in rows) else []
        return Section("usage", "Grid cells: calls, tokens, cost, failures",
                       [(tables.to_table(ran, tables.USAGE_COLUMNS, "per grid cell (judge calls = judge invocations; "
                                             "model requests = requests sent to a model, re-asks and retries included)")),
                        *skipped])

    def s_leaderboards(self) -> Section:
        lbs = []
        for c in self.active:
            lb = (self.res.study_cell(c["cell"]).get("leaderboard") or {})
            lbs.append({"cell": c["cell"], "metric": self.metric, "level": lb.get("level"), "n_boot": lb.get("n_boot"),
                        "source": (lb.get("source") or {}).get(self.metric, "study"),
                        "rows": (lb.get("metrics") or {}).get(self.metric) or []})
        self.data["leaderboards"] = lbs
        blocks: list = [Text(f"Run ranking on {self.metric} per cell: the judge's raw run means with a topic-bootstrap "
                             f"95% CI ({_s(self.n_boot)} resamples, analysis.bootstrap; for a calibrated cell the interval is "
                             "its calibration.json raw column, drawn with calibration.seed, otherwise with analysis.seed "
                             f"{_s(self.seed)}) beside the reference (human) run score. Nothing here is fitted: the "
                             "calibrated, cross-fitted leaderboard is in the calibration section.")]
        for lb in lbs:
            cols = ["rank", "run", "reference", "ref. rank", "judge raw [95% CI]", "rank shift"]
            rows = [[str(r["raw_rank"]), r["run_id"], fmt(r.get("reference")), _s(r.get("reference_rank")),
                     fmt_ci(r.get("raw"), r.get("raw_ci")), _s(r.get("rank_shift"))] for r in lb["rows"]]
            inner: list = [Table(cols, rows, f"{lb['cell']}", [True, False, True, True, True, True])] if rows else \
                [Text("no leaderboard for this cell in study/study.json", "note")]
            src = "calibration.json raw column" if lb["source"] == "calibration.json" else "study raw leaderboard"
            blocks.append(Detail(f"{lb['cell']} - raw ({src})", inner, open=False))
        return Section("leaderboards", "Leaderboards (raw judge vs reference)", blocks)

    def s_tau(self) -> Section:
        metrics = list(dict.fromkeys(m for c in self.active for m in ((c.get("analysis") or {}).get("metrics") or {})))
        rows = tables.tau(self.active, metrics)
        self.data["tau"] = rows
        look = tables.tau_lookup(rows)
        main = [[cid] + [fmt_ci(look.get((cid, self.metric, lv), {}).get("tau"),
                                [look.get((cid, self.metric, lv), {}).get("ci_low"), look.get((cid, self.metric, lv), {}).get("ci_high")])
                         for lv in tables.LEVELS] for cid in self.ids if (cid, self.metric, "run") in look]
        allm = [[cid] + [fmt(look.get((cid, m, "run"), {}).get("tau")) for m in metrics] for cid in self.ids if (cid, metrics[0] if metrics else "", "run") in look]
        blocks: list = [
            Table(["cell"] + [tables.LEVEL_NAMES[lv] for lv in tables.LEVELS], main,
                  f"Kendall tau ({self.variant}) on {self.metric} with 95% topic-bootstrap CIs", [False, True, True, True]),
            Table(["cell"] + metrics, allm, "run-level tau on every metric", [False] + [True] * len(metrics)),
        ]
        if main:
            blocks.append(Figure("tau_levels", "Tau at three levels", caption=
                                 f"Kendall tau on {self.metric} at the run, per-topic (mean) and pooled levels; bars: 95% CI"
                                 + (f"; dotted: the verdict's threshold {self.th['min_run_tau_low']}." if self.th.get("min_run_tau_low") is not None else "."),
                                 svg=plots.tau_levels(rows, [r[0] for r in main], self.metric, self.th.get("min_run_tau_low"))))
        # per-topic tau, forest plot
        per, means = {}, {}
        for c in self.active:
            tt = (self.res.study_cell(c["cell"]).get("per_topic_tau") or {}).get(self.metric)
            if not tt:
                continue
            per[c["cell"]] = tt
            r = look.get((c["cell"], self.metric, "topic_avg"), {})
            means[c["cell"]] = (r.get("tau"), [r.get("ci_low"), r.get("ci_high")])
        self.data["per_topic_tau"] = per
        if per:
            blocks.append(Figure("forest", "Per-topic tau (forest plot)", caption=
                                 "Each point is one topic's tau between reference and judge scores of the runs; orange: mean over "
                                 "topics where tau is defined, band: its 95% topic-bootstrap CI; grey band: tau undefined on "
                                 "that topic (one side gives every run the same score), not drawn as a value.",
                                 svg=plots.forest({cid: _tau_frame(v) for cid, v in per.items()}, means, self.metric)))
            blocks.append(Detail("per-topic tau table", [Table(["topic"] + list(per), _per_topic_rows(per),
                                                               f"per-topic Kendall tau on {self.metric} ('undefined': constant scores)",
                                                               [False] + [True] * len(per))], open=False))
        return Section("tau", "Kendall's tau at three levels", blocks)

    def s_scatter(self) -> Section:
        ref = self.res.reference_runs
        points, taus = {}, {}
        if ref is not None:
            for c in self.active:
                runs = self.res.runs(c["cell"])
                if runs is None:
                    continue
                p = ref[["run_id", self.metric]].merge(runs[["run_id", self.metric]], on="run_id", suffixes=("_ref", "_judge"))
                points[c["cell"]] = p.rename(columns={f"{self.metric}_ref": "reference", f"{self.metric}_judge": "judge"})
                b = (((c.get("analysis") or {}).get("metrics") or {}).get(self.metric) or {}).get("run") or {}
                taus[c["cell"]] = (b.get("tau"), b.get("ci"))
        self.data["run_scores"] = {cid: p.to_dict(orient="records") for cid, p in points.items()}
        if not points:
            return Section("scatter", "Judge vs reference run scores", [Text("no reference run scores available", "note")])
        return Section("scatter", "Judge vs reference run scores", [
            Figure("scatter", "Judge vs reference run scores", caption=
                   f"One point per run: mean {self.metric} over topics by the reference (x) and the judge (y); dashed: y = x; "
                   "run-level tau-b with its 95% CI.", svg=plots.scatter(points, taus, self.metric))])

    def s_agreement(self) -> Section:
        rows = tables.strictness(self.active)
        self.data["strictness"] = rows
        if not rows:
            return Section("agreement", "Label agreement and strictness",
                           [Text("No cell labels the reference's own nuggets, so there are no label pairs to compare.", "note")])
        blocks: list = [
            Figure("confusion", "Confusion matrices", caption=
                   "Reference (human) support labels in rows, judge labels in columns: counts and row percentages "
                   "(Pradeep et al. 2025, Figure 6 style). FAILED labels are excluded and counted below.",
                   svg=plots.confusion(rows)),
            (tables.to_table(tables.strictness_table_records(rows), tables.STRICTNESS_COLUMNS,
                                 "net strictness = P(judge lower) - P(judge higher) on not < partial < support; Stuart-Maxwell: "
                                 "marginal homogeneity of the two label distributions")),
        ]
        blocks += self._by_importance()
        for r in rows:
            shifts = [[s["reference"], s["candidate"], str(s["count"]), f"{s['pct_of_all']:.1f}%",
                       f"{s['pct_of_reference_label']:.1f}%", s["direction"]] for s in r["shifts"]]
            failed = r.get("failed") or {}
            blocks.append(Detail(f"label shifts: {r['cell']}", [
                Table(["reference", "judge", "count", "% of all", "% of reference label", "judge is"], shifts,
                      f"changed labels, largest first (FAILED: reference {failed.get('reference', 0)}, judge {failed.get('candidate', 0)})",
                      [False, False, True, True, True, False])], open=False))
        return Section("agreement", "Label agreement and strictness", blocks)

    def _by_importance(self) -> list:
        """Strictness by the reference's nugget importance (the study's ``strictness_by_importance``)."""
        per = {c["cell"]: (self.res.study_cell(c["cell"]).get("strictness_by_importance") or {}).get("strata")
               for c in self.active}
        per = {k: v for k, v in per.items() if v}
        self.data["strictness_by_importance"] = per
        if not per:
            return []
        rows = []
        for cid, strata in per.items():
            for name in ("all", "vital", "okay"):
                r = strata.get(name)
                if not r:
                    rows.append([cid, name, "0", "-", "-", "-"])
                    continue
                ci = r.get("ci") or [None, None]
                rows.append([cid, name, str(r["n_pairs"]), "undefined" if r["index"] is None else
                             f"{r['index']:+.3f} [{fmt(ci[0])}, {fmt(ci[1])}]", _pct(r.get("support_to_partial")),
                             _pct(r.get("support_to_not"))])
        return [Figure("strictness_importance", "Strictness by nugget importance", caption=
                       "Net strictness P(judge lower) - P(judge higher) over all doubly labelled pairs and separately for "
                       "the reference's vital and okay nuggets; bars: 95% topic-clustered CI (CR1, t with G-1 df).",
                       svg=plots.strictness_importance(per)),
                Detail("strictness by importance, table", [
                    Table(["cell", "nuggets", "pairs", "net strictness [95% CI, CR1 t]", "support -> partial", "support -> not"], rows,
                          "strictness by the reference's nugget importance (support -> x: share of the assessors' support "
                          "labels the judge gave x)", [False, False, True, True, True, True])],
                       open=False)]

    def s_bias(self) -> Section | None:
        """Per-run bias, judge minus reference run score, with the study's paired topic-bootstrap CIs."""
        per = {c["cell"]: ((self.res.study_cell(c["cell"]).get("bias") or {}).get("metrics") or {}).get(self.metric)
               for c in self.active}
        per = {k: v for k, v in per.items() if v and v.get("runs")}
        self.data["bias"] = per
        if not per:
            return None
        rows = []
        for cid, b in per.items():
            m = b.get("mean") or {}
            neg = sum(1 for r in b["runs"] if r["ci"][1] is not None and r["ci"][1] < 0)
            pos = sum(1 for r in b["runs"] if r["ci"][0] is not None and r["ci"][0] > 0)
            rows.append([cid, fmt_ci(m.get("bias"), m.get("ci")), str(len(b["runs"])), str(neg), str(pos)])
        detail = [Table(["run", "reference", "judge", "bias [95% CI]", "topics"],
                        [[r["run_id"], fmt(r["reference"]), fmt(r["judge"]), fmt_ci(r["bias"], r["ci"]), str(r["n_topics"])]
                         for r in b["runs"]], cid, [False, True, True, True, True]) for cid, b in per.items()]
        return Section("bias", "Per-run bias (judge minus reference)", [
            Figure("bias", "Per-run bias", caption=
                   f"Judge minus reference run score on {self.metric} (mean over the topics both scored), runs ordered by "
                   f"the reference's score; bars: 95% paired topic-bootstrap CI ({_s(self.n_boot)} resamples; both sides "
                   "resampled on the same topics).", svg=plots.bias(per, self.metric)),
            Table(["cell", "mean bias [95% CI]", "runs", "runs judged lower", "runs judged higher"], rows,
                  f"mean per-run bias on {self.metric}; 'judged lower/higher': runs whose CI excludes 0",
                  [False, True, True, True, True]),
            Detail("per-run bias tables", detail, open=False)])

    def s_descriptive(self) -> Section:
        recs = tables.descriptive(self.res.analysis_table("descriptive.csv"))
        self.data["descriptive"] = recs
        if not recs:
            return Section("descriptive", "Descriptive statistics per label source", [Text("analysis/descriptive.csv missing", "note")])
        return Section("descriptive", "Descriptive statistics per label source", [
            (tables.to_table(recs, tables.DESCRIPTIVE_COLUMNS, "Pradeep et al. 2025, Table 4 style; percentages of nuggets "
                                 "(importance) and of nugget-answer labels (support)")),
            Figure("label_mix", "Support-label distribution", caption="Share of each support label per label source.",
                   svg=plots.label_mix(recs))])

    def s_calibration(self) -> Section:
        """The calibration workflow's own section (``metaeval.report.calibration_section``) from each cell's
        ``calibration.json`` as the study stored it in the summary."""
        from metaeval.report.calibration_section import calibration_section

        cals = {c["cell"]: c.get("calibration") for c in self.active if c.get("calibration") is not None}
        self.data["calibration"] = cals
        if not cals:
            return Section("calibration", "Calibration on held-out topics",
                           [Text("No calibration: it needs cells whose judge labels the reference's nuggets (human_* "
                                 "strategies), and calibration.enabled.", "note")])
        sec = calibration_section(cals)
        for b in sec.blocks:  # one closed block per cell: the page stays short
            if isinstance(b, Detail):
                b.open = False
        return sec

    def s_disagreements(self) -> Section:
        out, blocks = [], []
        blocks.append(Text(f"For each cell, the {self.worst} topics with the lowest per-topic tau on {self.metric}; within them "
                           "the answers whose rank moves most and the nugget labels behind it. 'open' links to the cell's "
                           "transcript viewer (cells/<cell>/transcripts.html: prompt and raw reply beside the parsed and "
                           "the human labels, filterable by topic, run, label and disagreement)."))
        for c in self.active:
            cid = c["cell"]
            stored = self.res.study_cell(cid).get("disagreements") or {}
            if self.metric not in stored and stored:
                blocks.append(Text(f"{cid}: the study lists disagreements on {', '.join(stored)} only "
                                   f"(the first of analysis.metrics), not on {self.metric}.", "note"))
            d = dict(stored.get(self.metric) or {"topics": []})
            d["topics"] = list(d.get("topics") or [])[: self.worst]
            d["cell"] = cid
            page = self._viewer(cid)
            d["viewer"] = page
            out.append(d)
            inner: list = []
            for t in d["topics"]:
                qid = t["qid"]
                link = (lambda run, dis=False: unit_link(page, qid, run, disagree=dis)) if page else (lambda run, dis=False: "")
                inner.append(Text(f"Topic {qid} (tau {fmt(t['tau'])}, {t['n_runs']} runs): {t['query']}", "p"))
                inner.append(Table(["run", "reference", "judge", "ref. rank", "judge rank", "transcript"],
                                   [[a["run_id"], fmt(a["reference"]), fmt(a["judge"]), str(a["reference_rank"]),
                                     str(a["judge_rank"]), "open" if page else "-"] for a in t["answers"]],
                                   "answers whose within-topic rank moves most", [False, True, True, True, True, False],
                                   links=[link(a["run_id"]) for a in t["answers"]]))
                if "pairs" in t:
                    rows = [[p["run_id"], p["nugget"], p["importance"], p["human"],
                             p["judge"] + (f" ({p['judge_raw']})" if p.get("judge_raw") else ""), _reply(p),
                             p["answer_excerpt"], "open" if page else "-"] for p in t["pairs"]]
                    inner.append(Table(["run", "nugget", "importance", "human", "judge", "what the judge said",
                                        "answer excerpt", "transcript"],
                                       rows or [["-", "no label differs on this topic", "", "", "", "", "", "-"]],
                                       "nugget labels that differ (answers above first, then largest difference, vital first)",
                                       links=[link(p["run_id"], True) for p in t["pairs"]] if rows else []))
                for nl in t.get("nugget_lists", []):
                    inner += _nugget_lists(nl, link(nl["run_id"]))
            if not inner:
                inner.append(Text("no topic with a defined per-topic tau", "note"))
            elif d.get("n_topics_undefined"):
                inner.append(Text(f"{d['n_topics_undefined']} topic(s) have undefined tau (constant scores) and are not ranked here.", "note"))
            blocks.append(Detail(f"{cid}", inner, open=False))
        self.data["disagreements"] = out
        return Section("disagreements", "Where judge and reference disagree most", blocks)

    def _viewer(self, cid: str) -> str:
        """Render the cell's transcript viewer (from the study's transcript_view.json) into ``self.pages``; returns
        its URL relative to the report, or "" when the study wrote no view (no transcripts)."""
        rel = self.res.study_cell(cid).get("transcript_view")
        path = self.res.layout.transcript_view(cid)
        if not rel or not path.exists():
            return ""
        from metaeval.report.viewer import viewer_html

        try:
            view = self.res.layout.read_json(path)
        except Exception as exc:  # noqa: BLE001 - shown, never hidden
            self.res.problems.append(f"{path}: unreadable ({type(exc).__name__}: {exc})")
            return ""
        page = self.res.layout.transcript_viewer(cid).relative_to(self.res.layout.root).as_posix()
        synthetic = " (synthetic data)" if self._synthetic() else ""
        self.pages[page] = viewer_html(view, f"Transcripts of {cid}: {self.res.summary.get('experiment') or ''}{synthetic}")
        return page

    def s_consistency(self) -> Section | None:
        """Sampled cells (``sweep.samples``): flip rate, tau over draws beside the topic bootstrap, soft vs hard
        calibration, from each cell's ``consistency`` as the study stored it; no section without samples."""
        from metaeval.report.consistency_section import consistency_blocks

        cells = {c["cell"]: c["consistency"] for c in self.active if c.get("consistency")}
        if not cells:
            return None
        self.data["consistency"] = cells
        return Section("consistency", "Judge self-consistency (k samples)", consistency_blocks(cells))

    def s_plan(self) -> Section | None:
        """The assessor plan (``metaeval plan --results DIR`` writes ``study/plan.json``), rendered by
        ``metaeval.report.plan_section``; no section when there is no plan."""
        path = self.res.layout.study_dir / "plan.json"
        if not path.exists():
            return None
        from metaeval.report.model import Rendered
        from metaeval.report.plan_section import render_html, render_markdown

        try:
            plan = self.res.layout.read_json(path)
            block = Rendered(render_html(plan), render_markdown(plan))
        except Exception as exc:  # noqa: BLE001 - shown, never hidden
            self.res.problems.append(f"{path}: cannot render the plan ({type(exc).__name__}: {exc})")
            return None
        self.data["plan"] = plan
        return Section("plan", "Assessor plan", [block])

    def s_injection(self) -> Section | None:
        """Prompt-injection probe results saved beside the sweep (``metaeval probe --out DIR/probe/NAME.json``)."""
        folder = self.res.path / "probe"
        rows = _injection_rows(folder) if folder.is_dir() else []
        self.data["injection"] = rows
        if not rows:  # no empty section (`metaeval probe --judge NAME --out DIR/probe/NAME.json` adds it)
            return None
        return Section("injection", "Prompt-injection probe", [
            Text("Share of (answer, nugget) labels that change when an injection phrasing is added to the answer, "
                 "over all phrasings; upward = toward support. The control adds a neutral sentence: the flips any "
                 "added text causes."),
            Table(["probe file", "judge", "prompt", "answers", "pairs", "flip", "upward", "downward", "control flip"], rows,
                  "metaeval probe results", [False, False, False, True, True, True, True, True, True]),
        ])


def _pct(x: Any) -> str:
    return "n/a" if x is None else f"{100 * float(x):.1f}%"


def _injection_rows(folder: Path) -> list[list[str]]:
    """One row per ``metaeval probe`` result in ``RESULTS_DIR/probe/*.json``."""
    import json

    rows = []
    for path in sorted(folder.glob("*.json")):
        try:
            r = json.loads(path.read_text(encoding="utf-8"))
            o = r["overall"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        controls = r.get("controls") or []
        ctrl = r["per_probe"].get(controls[0], {}) if controls else {}
        prompt = (r.get("prompt") or {}).get("name") or "-"
        rows.append([path.stem, str(r.get("judge_kind", "")), prompt, str(r.get("n_answers", "")), str(o.get("n_pairs", "")),
                     _pct(o.get("flip_rate")), _pct(o.get("upward_rate")), _pct(o.get("downward_rate")),
                     _pct(ctrl.get("flip_rate")) if ctrl else "-"])
    return rows


def _reply(p: dict[str, Any], width: int = 240) -> str:
    """The judge's raw reply for a disagreeing pair (from the cell's transcripts), or why there is none."""
    if "judge_model_call" not in p:
        return "-"  # a study written before transcripts were indexed
    if not p.get("judge_model_call"):
        return "no model call (offline judge)"
    r = " ".join(str(p.get("judge_reply") or "").split())
    r = r if len(r) <= width else r[: width - 1] + "…"
    extra = [f"item {p['judge_position']}" if p.get("judge_position") else "",
             f"{p['judge_reasks']} re-ask(s)" if p.get("judge_reasks") else ""]
    extra = [e for e in extra if e]
    return r + (f" ({', '.join(extra)})" if extra else "")


def _per_topic_rows(per: dict[str, list[dict[str, Any]]]) -> list[list[str]]:
    qids = sorted({str(r["qid"]) for recs in per.values() for r in recs})
    look = {cid: {str(r["qid"]): r.get("tau") for r in recs} for cid, recs in per.items()}
    return [[q] + [("undefined" if look[cid].get(q) is None and q in look[cid] else fmt(look[cid].get(q)))
                   for cid in per] for q in qids]


def _s(x: Any) -> str:
    return "-" if x is None else str(x)


def _nugget_lists(nl: dict[str, Any], link: str) -> list:
    """An auto_auto answer: the human nuggets with the assessors' labels and the judge's own nuggets with its labels,
    as two separate lists (they are different nuggets: no row of one matches a row of the other), with the share
    each side marks as supported."""
    def table(items: list[dict[str, Any]], who: str) -> Table:
        sup = sum(1 for x in items if x.get("label") == "support")
        return Table(["nugget", "importance", "label"], [[x.get("nugget", ""), x.get("importance", ""), x.get("label", "")]
                                                         for x in items] or [["-", "", ""]],
                     f"{who}: {len(items)} nuggets, {sup} supported", [False, False, False])

    return [Text(f"Run {nl['run_id']}: the judge made its own nuggets, so the two lists below are not aligned row by "
                 f"row; compare what each side finds supported. Answer: {nl['answer_excerpt']}", "p"),
            table(nl["human"], "human nuggets, assessors' labels"), table(nl["judge"], "judge's own nuggets, its labels"),
            Table(["run", "transcript"], [[nl["run_id"], "open" if link else "-"]], "the judge's calls for this answer",
                  [False, False], links=[link])]


def _tau_frame(records: list[dict[str, Any]]):
    """``qid, tau`` (NaN where undefined) from the study's per-topic tau records, for the forest plot."""
    import pandas as pd

    return pd.DataFrame({"qid": [r["qid"] for r in records],
                         "tau": [float("nan") if r.get("tau") is None else float(r["tau"]) for r in records]})
