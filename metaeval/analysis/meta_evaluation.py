"""``analyze``: the whole meta-evaluation of one or more candidates against a reference, as DataFrames + JSON.

Per candidate and metric: tau at the three levels with topic-bootstrap CIs (:mod:`.levels`), the top-heavy
run-level ``kendall@k`` and ``tau_ap_b`` with CIs, run-pair flips (:mod:`.runpairs`), diagnostics (per-run
rankings on both sides and flags, :mod:`.diagnostics`); per candidate, when both sides are label sets: label
agreement with its nugget-text coverage (:mod:`.agreement`) and descriptive statistics (:mod:`.descriptive`);
between the candidates of ``pairs`` (default every two): paired topic-bootstrap differences of tau and label
agreement with Holm-adjusted p-values (:mod:`.comparison`; each candidate's replicates are computed once and kept,
so the pairs cost a subtraction each).  Metric names are matched
case-insensitively (``V_strict`` = ``v_strict``; ``NDCG_cut_10`` = ``ndcg_cut_10``).
Inputs are LabelSets, score DataFrames, or paths (:func:`load_input`).

**In parts** (what the study fans out, ``metaeval.study.fanout``): :func:`reference_side` loads and scores the
reference once; :func:`analyze_candidate` computes everything of one candidate that needs no other candidate (its
JSON block, its table rows, the replicates its paired comparisons reuse, its support-label counts), in any
process; :func:`combine` adds what needs them all (the paired comparisons, the reference's descriptive statistics
on the shared topics and runs) and returns the result.  :func:`analyze` is these three in one process, so the
parts give the same numbers: every candidate draws from the same seeded streams, whatever else is analysed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from metaeval.analysis.cells import align, metrics_of, to_long
from metaeval.analysis.diagnostics import comparison_diagnostics, defaulted_cells
from metaeval.analysis.levels import LEVELS, levels_from_aligned
from metaeval.analysis.runpairs import run_flips
from metaeval.errors import ConfigError
from metaeval.io.jsonl import to_jsonable


def load_input(path: str | os.PathLike, format: str | None = None) -> Any:
    """A path -> LabelSet (assignment file), long score table (score or nuggetizer metrics file) or long table
    (folder of ``trec_eval -q`` / ir_measures files, one per run); files go through the format registry's one
    dispatcher (``metaeval.io.read_evaluable``; ``format`` overrides detection)."""
    from metaeval.errors import FormatError
    from metaeval.io import read_evaluable

    p = Path(path)
    if p.is_dir():
        from metaeval.io.trec_eval import read_trec_eval_dir

        return read_trec_eval_dir(p)
    if not p.exists():
        raise FormatError(str(p), 0, "", "no such file or folder")
    return read_evaluable(p, format)


def _name(obj: Any, path: Any, k: int) -> str:
    if path is not None:
        return Path(path).name.split(".")[0]
    return getattr(obj, "name", None) or f"candidate_{k}"


@dataclass
class AnalysisResult:
    """Tidy tables for notebooks and the JSON document ``metaeval analyze`` writes."""

    tau: pd.DataFrame
    cells: pd.DataFrame
    flips: pd.DataFrame
    flip_pairs: pd.DataFrame
    paired: pd.DataFrame
    agreement: pd.DataFrame
    confusion: pd.DataFrame
    descriptive: pd.DataFrame
    top_heavy: pd.DataFrame = field(default_factory=pd.DataFrame)
    rankings: pd.DataFrame = field(default_factory=pd.DataFrame)
    json: dict[str, Any] = field(default_factory=dict)

    def write(self, out_dir: str | os.PathLike) -> list[Path]:
        """Write ``analysis.json`` and one CSV per non-empty table into ``out_dir``; returns the paths."""
        import json

        from metaeval.io.atomic import atomic_open, atomic_write_text

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "analysis.json"]
        atomic_write_text(paths[0], json.dumps(to_jsonable(self.json), indent=2, allow_nan=False) + "\n")
        for name in ("tau", "cells", "flips", "flip_pairs", "paired", "agreement", "confusion", "descriptive",
                     "top_heavy", "rankings"):
            df = getattr(self, name)
            if len(df):
                with atomic_open(out / f"{name}.csv", "w") as fh:
                    df.to_csv(fh, index=False)
                paths.append(out / f"{name}.csv")
        return paths


def _describe_shared(labels: Any, topics: Any, runs: Any, other: str) -> dict[str, Any]:
    """Table 4 statistics of ``labels`` on the given topics and runs (those shared with ``other``), with a note."""
    from metaeval.analysis.descriptive import describe_labels

    topics, runs = sorted(set(topics)), sorted(set(runs))
    n_t, n_r = len(labels.qids), len(labels.run_ids)
    sub = labels if (n_t <= len(topics) and n_r <= len(runs)) else labels.subset(qids=topics, run_ids=runs)
    return {**describe_labels(sub), "shared_note": f"on the {len(topics)} topics and {len(runs)} runs shared with "
                                                   f"{other} (this side has {n_t} topics, {n_r} runs)"}


def _agreement_row(name: str, ag: dict[str, Any]) -> dict[str, Any]:
    keys = ("n", "exact_agreement", "cohen_kappa", "weighted_kappa", "krippendorff_alpha", "strictness_index",
            "stuart_maxwell_stat", "stuart_maxwell_p")
    row = {"candidate": name, "labels": "support", **{k: ag[k] for k in keys},
           "pairs_matched": ag.get("coverage", {}).get("matched"), "pairs_total": ag.get("coverage", {}).get("total"),
           "coverage_note": ag.get("coverage", {}).get("note")}
    row.update({"cohen_kappa_low": ag["cohen_kappa_ci"][0], "cohen_kappa_high": ag["cohen_kappa_ci"][1],
                "weighted_kappa_low": ag["weighted_kappa_ci"][0], "weighted_kappa_high": ag["weighted_kappa_ci"][1],
                "strictness_low": ag["strictness_ci"][0], "strictness_high": ag["strictness_ci"][1]})
    cl = ag.get("clustered") or {}
    for key in ("cohen_kappa", "weighted_kappa", "strictness"):  # topic-bootstrap intervals (clustered by topic)
        lo, hi = cl.get(f"{key}_ci_topic", [float("nan"), float("nan")])
        row.update({f"{key}_topic_low": lo, f"{key}_topic_high": hi})
    return row


@dataclass(frozen=True)
class _Options:
    """The statistical choices of one ``analyze`` call (see :func:`analyze`)."""

    variant: str = "b"
    n_boot: int = 1000
    seed: int = 0
    alpha: float = 0.05
    ci_method: str = "centered"
    flip_test: str = "t"
    top_k: int = 10
    min_topics: int = 10


@dataclass
class _Inputs:
    """Reference and candidates loaded, named and scored once."""

    ref: Any
    ref_name: str
    ref_path: Any
    cands: list[Any]
    names: list[str]
    paths: list[Any]
    ref_scores: Any
    cand_scores: list[Any]
    ref_long: pd.DataFrame
    cand_longs: list[pd.DataFrame]

    def one(self, k: int) -> "_Inputs":
        """These inputs with candidate ``k`` only."""
        return replace(self, cands=[self.cands[k]], names=[self.names[k]], paths=[self.paths[k]],
                       cand_scores=[self.cand_scores[k]], cand_longs=[self.cand_longs[k]])


@dataclass
class _Rows:
    """The tidy tables' rows, accumulated over candidates and metrics."""

    tau: list = field(default_factory=list)
    cells: list = field(default_factory=list)
    flips: list = field(default_factory=list)
    flip_pairs: list = field(default_factory=list)
    top_heavy: list = field(default_factory=list)
    rankings: list = field(default_factory=list)
    #: (candidate index, metric) -> {level: Replicated}: the tau replicates the paired comparisons reuse
    replicates: dict = field(default_factory=dict)


def _load(reference: Any, candidates: Any, names: Sequence[str] | None, policy: Any) -> _Inputs:
    """Load paths, name every side (distinct candidate names) and score label sets once (their counts say which
    scores defaulted)."""
    cand_list = list(candidates) if isinstance(candidates, (list, tuple)) else [candidates]
    if not cand_list:
        raise ConfigError("no candidate to analyse")
    ref = reference_side(reference, policy)
    paths = [c if isinstance(c, (str, os.PathLike)) else None for c in cand_list]
    cands = [load_input(c) if p is not None else c for c, p in zip(cand_list, paths)]
    cnames = list(names) if names else [_name(c, p, k + 1) for k, (c, p) in enumerate(zip(cands, paths))]
    if len(set(cnames)) != len(cnames):
        cnames = [f"{n}#{k + 1}" for k, n in enumerate(cnames)]
    cand_scores = [_scored(c, policy) for c in cands]
    return replace(ref, cands=cands, names=cnames, paths=paths, cand_scores=cand_scores,
                   cand_longs=[to_long(c, policy) for c in cand_scores])


def _scored(obj: Any, policy: Any) -> Any:
    """A label set's per-answer scores (other inputs are scores already)."""
    from metaeval.scoring import score_answers
    from metaeval.types import LabelSet

    return score_answers(obj, policy) if isinstance(obj, LabelSet) else obj


def _common_metrics(inp: _Inputs, metrics: Sequence[str] | None) -> list[str]:
    """The metrics every side has (or the requested ones, matched case-insensitively; an absent one is an error)."""
    from metaeval.measures import normalize_metric

    cand_metrics = [{str(m).lower() for m in pd.unique(cl["metric"])} for cl in inp.cand_longs]
    common = [m for m in metrics_of(inp.ref_long) if all(str(m).lower() in have for have in cand_metrics)]
    if metrics:
        by_lower = {m.lower(): m for m in common}
        wanted = [by_lower.get(normalize_metric(m), by_lower.get(str(m).strip().lower(), m)) for m in metrics]
        missing = [m for m in wanted if m not in common]
        if missing:
            raise ConfigError(f"metric(s) {', '.join(missing)} not on every side; available: {', '.join(common)}")
        common = list(dict.fromkeys(wanted))
    if not common:
        raise ConfigError("reference and candidates share no metric")
    return common


def _metric_block(inp: _Inputs, k: int, metric: str, opt: _Options, rows: _Rows) -> tuple[dict[str, Any], Any]:
    """Candidate ``k`` on ``metric``: tau levels, top-heavy taus, flips and diagnostics (JSON block; table rows
    appended to ``rows``); also returns the aligned cells."""
    cname = inp.names[k]
    try:
        al = align(inp.ref_long, [inp.cand_longs[k]], metric)
    except ConfigError as exc:  # name both sides: which files share nothing
        where = f"reference {inp.ref_path or inp.ref_name} vs candidate {inp.paths[k] or cname}"
        suggested = _shared_runs_check(inp, k, 0)["suggested_run_map"]
        hint = ("; runs whose names nearly match: " + " ".join(f"--run-map {c}={r}" for c, r in list(suggested.items())[:5])
                if suggested else "")
        raise ConfigError(f"{where}: {exc}{hint}") from None
    reps: dict = {}
    tl = levels_from_aligned(al, opt.variant, n_boot=opt.n_boot, seed=opt.seed, alpha=opt.alpha,
                             ci_method=opt.ci_method, top_k=opt.top_k, replicates=reps)
    if reps:
        from metaeval.analysis.comparison import Replicated

        rows.replicates[(k, metric)] = {lvl: Replicated(getattr(tl, lvl), reps[lvl], tuple(al.topics)) for lvl in LEVELS}
    fsum, fpairs = run_flips(al, test=opt.flip_test, alpha=opt.alpha, seed=opt.seed)
    diag, ranks = comparison_diagnostics(
        al, min_topics=opt.min_topics, n_topics_skipped=tl.n_topics_skipped,
        defaulted={"reference": defaulted_cells(inp.ref_scores, metric),
                   "candidate": defaulted_cells(inp.cand_scores[k], metric)})
    rows.rankings.append(ranks.assign(candidate=cname))
    nan2 = (float("nan"), float("nan"))
    mblock = {lvl: {"tau": getattr(tl, lvl), "ci": list(tl.ci.get(lvl, nan2)),
                    "boot_mean": tl.boot_mean.get(lvl)} for lvl in LEVELS}
    mblock["topic_avg"].update(n_topics=tl.n_topics_used, n_topics_skipped=tl.n_topics_skipped)
    mblock["cells"] = {"n_runs": tl.n_runs, "n_topics": tl.n_topics, "n_cells": tl.n_cells, "dropped": tl.dropped}
    mblock["flips"] = fsum
    mblock["top_heavy"] = {name: {"tau": val, "ci": list(tl.top_heavy_ci.get(name, nan2)),
                                  **({"k": tl.top_k} if name == "kendall@k" else {})}
                           for name, val in tl.top_heavy.items()}
    mblock["diagnostics"] = diag
    for name, val in tl.top_heavy.items():
        lo, hi = tl.top_heavy_ci.get(name, nan2)
        rows.top_heavy.append({"candidate": cname, "metric": metric, "statistic": name,
                               "k": tl.top_k if name == "kendall@k" else None, "tau": val, "ci_low": lo,
                               "ci_high": hi, "n_runs": tl.n_runs, "n_topics": tl.n_topics})
    for lvl in LEVELS:
        lo, hi = tl.ci.get(lvl, nan2)
        rows.tau.append({"candidate": cname, "metric": metric, "level": lvl, "variant": tl.variant,
                         "tau": getattr(tl, lvl), "ci_low": lo, "ci_high": hi,
                         "boot_mean": tl.boot_mean.get(lvl, float("nan")), "n_runs": tl.n_runs,
                         "n_topics": tl.n_topics_used if lvl == "topic_avg" else tl.n_topics, "n_cells": tl.n_cells})
    rows.cells.append({"candidate": cname, "metric": metric, "n_runs": tl.n_runs, "n_topics": tl.n_topics,
                       "n_cells": tl.n_cells, "n_topics_skipped": tl.n_topics_skipped,
                       **{f"dropped_{s}": v for s, v in tl.dropped.items()}})
    rows.flips.append({"candidate": cname, "metric": metric, **fsum})
    rows.flip_pairs.append(fpairs.assign(candidate=cname))
    return mblock, al


def _candidate_block(inp: _Inputs, k: int, common: list[str], opt: _Options, rows: _Rows) -> tuple[dict[str, Any], Any]:
    """Candidate ``k``'s JSON block: every metric, label agreement and descriptive statistics when both sides are
    label sets; also returns the aligned cells of its last metric (their topics and runs)."""
    from metaeval.analysis.agreement import label_agreement
    from metaeval.types import LabelSet

    block: dict[str, Any] = {"name": inp.names[k], "metrics": {}}
    for metric in common:
        block["metrics"][metric], al = _metric_block(inp, k, metric, opt, rows)
    block["cells"] = dict(block["metrics"][common[0]]["cells"])
    block.update(_shared_runs_check(inp, k, block["cells"]["n_runs"]))
    cand = inp.cands[k]
    block["labels"] = None
    if isinstance(inp.ref, LabelSet) and isinstance(cand, LabelSet):
        try:
            block["labels"] = label_agreement(inp.ref, cand, opt.alpha, n_boot=opt.n_boot, seed=opt.seed)
        except ConfigError as exc:  # different nugget sets (e.g. judge-created nuggets): no label-level agreement
            block["labels_note"] = str(exc)
    block["descriptive"] = None
    if isinstance(cand, LabelSet):  # on the topics and runs shared with the reference only
        block["descriptive"] = _describe_shared(cand, al.topics, al.runs, "reference")
    return block, al


#: fewer runs than this shared with the reference: a run-level Kendall tau (and its CI) says nothing - with 3 runs
#: tau takes only 4 values (+-1, +-1/3), with 2 runs only +-1
MIN_SHARED_RUNS = 4


def _shared_runs_check(inp: _Inputs, k: int, n_shared: int) -> dict[str, Any]:
    """``warnings`` when candidate ``k`` shares fewer than ``MIN_SHARED_RUNS`` runs with the reference, and
    ``suggested_run_map`` (``{candidate run: reference run}``, :func:`metaeval.io.runmap.suggest_run_map`) for its
    unshared runs whose names nearly match the reference's."""
    from metaeval.io.runmap import suggest_run_map

    suggested = suggest_run_map(inp.ref_long["run_id"].unique(), inp.cand_longs[k]["run_id"].unique())
    warnings = []
    if n_shared < MIN_SHARED_RUNS:
        warnings.append(f"only {n_shared} run(s) shared with the reference: with fewer than {MIN_SHARED_RUNS} runs "
                        "the run-level tau and its CI are meaningless" + ("; --run-map can rename near-matching runs"
                                                                          if suggested else ""))
    return {"warnings": warnings, "suggested_run_map": suggested}


@dataclass
class CandidatePart:
    """One candidate's share of an analysis (:func:`analyze_candidate`): its JSON block and table rows, the
    replicates its paired comparisons reuse, and what :func:`combine` needs of it without the candidate itself:
    the topics and runs it shares with the reference (last metric's aligned cells), its long score table (to
    re-draw its replicates on a shared topic universe) and its support-label counts per topic (``counts``, for
    the label-agreement pairs; None unless asked for)."""

    name: str
    metrics: list[str]
    block: dict[str, Any]
    rows: _Rows
    topics: set
    runs: set
    long: pd.DataFrame
    counts: Any = None


def _part(inp: _Inputs, common: list[str], opt: _Options, with_counts: bool) -> CandidatePart:
    """The part of the only candidate of ``inp``."""
    rows = _Rows()
    block, al = _candidate_block(inp, 0, common, opt, rows)
    counts = None
    if with_counts and (block.get("labels") or {}).get("coverage", {}).get("statistics"):
        from metaeval.analysis.comparison import agreement_counts

        counts = agreement_counts(inp.ref, inp.cands[0])
    return CandidatePart(inp.names[0], list(common), block, rows, set(al.topics), set(al.runs), inp.cand_longs[0],
                         counts)


def reference_side(reference: Any, policy: Any = None, scores: Any = None) -> _Inputs:
    """The reference loaded (a path) and scored once, for :func:`analyze_candidate` and :func:`combine`
    (``scores``: its per-answer scores under ``policy`` when the caller has them)."""
    ref_path = reference if isinstance(reference, (str, os.PathLike)) else None
    ref = load_input(reference) if ref_path is not None else reference
    ref_name = _name(ref, ref_path, 0) if ref_path is not None or hasattr(ref, "name") else "reference"
    ref_scores = _scored(ref, policy) if scores is None else scores
    return _Inputs(ref, ref_name, ref_path, [], [], [], ref_scores, [], to_long(ref_scores, policy), [])


def analyze_candidate(reference: _Inputs, candidate: Any, name: str, metrics: Sequence[str] | None = None, *,
                      policy: Any = None, with_counts: bool = False, scores: Any = None,
                      **options: Any) -> CandidatePart:
    """Candidate ``candidate`` (a LabelSet, scores or a path) named ``name`` against ``reference``
    (:func:`reference_side`) on ``metrics`` (default: every metric both have), with :func:`analyze`'s statistical
    ``options`` (``variant``, ``n_boot``, ``seed``, ``alpha``, ``ci_method``, ``flip_test``, ``top_k``,
    ``min_topics``); ``with_counts``: keep its support-label counts for label-agreement pairs; ``scores``: its
    per-answer scores under ``policy`` when the caller has them.  Needs no other candidate, so it may run in any
    process (see the module docstring)."""
    path = candidate if isinstance(candidate, (str, os.PathLike)) else None
    cand = load_input(candidate) if path is not None else candidate
    scores = _scored(cand, policy) if scores is None else scores
    inp = replace(reference, cands=[cand], names=[str(name)], paths=[path], cand_scores=[scores],
                  cand_longs=[to_long(scores, policy)])
    return _part(inp, _common_metrics(inp, metrics), _Options(**options), with_counts)


def _paired(ref: _Inputs, parts: Sequence[CandidatePart], common: list[str], opt: _Options, pairs: Any) -> pd.DataFrame:
    """The paired comparisons of the candidates in ``pairs`` (:func:`metaeval.analysis.comparison.resolve_pairs`)
    on every metric's tau levels and, where both sides are label sets with agreement statistics, on the label
    agreement; empty without a bootstrap or a pair.  Replicates: each candidate's own (kept by
    :func:`_metric_block`), re-drawn once on the shared topic universe for a candidate on other topics."""
    from metaeval.analysis.comparison import (Replicated, SharedWeights, agreement_replicates, finish, on_shared,
                                              pair_rows, resolve_pairs)
    from metaeval.analysis.levels import LevelEngine

    names = [p.name for p in parts]
    index_pairs = resolve_pairs(pairs, names)
    if opt.n_boot <= 0 or not index_pairs:
        return finish([])
    used = sorted({k for pair in index_pairs for k in pair})
    out: list[dict[str, Any]] = []
    for metric in common:
        kept = [parts[k].rows.replicates.get((0, metric), {}) for k in used]

        def recompute(j: int, w: Any, metric: str = metric, kept: list = kept) -> dict:
            al = align(ref.ref_long, [parts[used[j]].long], metric)
            lv = LevelEngine(al.x, al.ys[0], opt.variant).levels(w)
            return {lvl: Replicated(r.value, lv[lvl], ("<shared>",)) for lvl, r in kept[j].items()}

        shared = dict(zip(used, on_shared(kept, recompute, opt.n_boot, opt.seed)))
        for a, b in index_pairs:
            out += pair_rows(names[a], names[b], shared[a], shared[b], metric, "tau", opt.alpha)
    labelled = [k for k in used if (parts[k].block.get("labels") or {}).get("coverage", {}).get("statistics")]
    if labelled:
        missing = [names[k] for k in labelled if parts[k].counts is None]
        if missing:
            raise ValueError(f"combine: no support-label counts for {', '.join(missing)} (analyze_candidate(..., "
                             "with_counts=True) for a candidate in a pair)")
        counts = {k: parts[k].counts for k in labelled}
        universe = SharedWeights([t for topics, _ in counts.values() for t in topics], opt.n_boot, opt.seed)
        col = {t: i for i, t in enumerate(universe.topics)}
        agree = {}
        for k, (topics, c) in counts.items():
            full = np.zeros((len(universe.topics),) + c.shape[1:])
            full[[col[t] for t in topics]] = c
            agree[k] = agreement_replicates(universe.topics, full, universe.w)
        for a, b in index_pairs:
            if a in agree and b in agree:
                out += pair_rows(names[a], names[b], agree[a], agree[b], "labels", None, opt.alpha)
    return finish(out, opt.alpha)


def combine(reference: _Inputs, parts: Sequence[CandidatePart], *, policy: Any = None, pairs: Any = "all",
            **options: Any) -> AnalysisResult:
    """The analysis of the candidates whose parts are ``parts`` (:func:`analyze_candidate`, in candidate order;
    the same metrics each) against ``reference`` (:func:`reference_side`), with the same ``options`` and
    ``policy`` the parts were computed with: their paired comparisons (``pairs``, as for :func:`analyze`) and the
    reference's descriptive statistics added."""
    from metaeval.analysis.agreement import confusion_frame
    from metaeval.types import LabelSet

    if not parts:
        raise ConfigError("no candidate to analyse")
    common = parts[0].metrics
    if any(p.metrics != common for p in parts):
        raise ConfigError("the candidates were analysed on different metrics: "
                          + "; ".join(f"{p.name}: {', '.join(p.metrics)}" for p in parts))
    opt = _Options(**options)
    blocks = {p.name: p.block for p in parts}
    paired_df = _paired(reference, parts, common, opt, pairs)
    ref_desc = None
    if isinstance(reference.ref, LabelSet):  # on the topics and runs every candidate shares with it
        ref_desc = _describe_shared(reference.ref, set.intersection(*(p.topics for p in parts)),
                                    set.intersection(*(p.runs for p in parts)),
                                    "every candidate" if len(parts) > 1 else "the candidate")
    desc_rows = ([{"role": "reference", **ref_desc}] if ref_desc is not None else []) + [
        {"role": "candidate", **b["descriptive"]} for b in blocks.values() if b["descriptive"] is not None]
    agreements = {n: b["labels"] for n, b in blocks.items() if b["labels"] is not None}
    doc: dict[str, Any] = {
        "reference": reference.ref_name, "candidates": blocks, "metrics_analysed": common, "variant": opt.variant,
        "n_boot": opt.n_boot, "seed": opt.seed, "alpha": opt.alpha, "ci_method": opt.ci_method,
        "flip_test": opt.flip_test,
        "scoring_policy": policy.as_dict() if hasattr(policy, "as_dict") else None,
        "reference_descriptive": ref_desc,
        "paired": paired_df.to_dict(orient="records") if len(paired_df) else [],
    }
    doc["warnings"] = [f"{n}: {w}" for n, b in blocks.items() for w in b["warnings"]]
    if len(blocks) == 1:  # the single-candidate layout: the block's keys at the top level too
        only = next(iter(blocks.values()))
        doc.update({k: only[k] for k in ("metrics", "cells", "labels")})
        doc["descriptive"] = {"reference": doc["reference_descriptive"], "candidate": only["descriptive"]}

    def rows(attr: str) -> list:
        return [r for p in parts for r in getattr(p.rows, attr)]

    def frames(items: list) -> pd.DataFrame:
        return pd.concat(items, ignore_index=True) if items else pd.DataFrame()

    return AnalysisResult(
        tau=pd.DataFrame(rows("tau")), cells=pd.DataFrame(rows("cells")), flips=pd.DataFrame(rows("flips")),
        flip_pairs=frames(rows("flip_pairs")), paired=paired_df,
        agreement=pd.DataFrame([_agreement_row(n, a) for n, a in agreements.items()]),
        confusion=frames([confusion_frame(a, n) for n, a in agreements.items()]),
        descriptive=pd.DataFrame(desc_rows), top_heavy=pd.DataFrame(rows("top_heavy")),
        rankings=frames(rows("rankings")), json=to_jsonable(doc),
    )


def analyze(reference: Any, candidates: Any, metrics: Sequence[str] | None = None, variant: str = "b",
            n_boot: int = 1000, seed: int = 0, alpha: float = 0.05, ci_method: str = "centered",
            policy: Any = None, flip_test: str = "t", names: Sequence[str] | None = None, top_k: int = 10,
            min_topics: int = 10, pairs: Any = "all") -> AnalysisResult:
    """Meta-evaluate ``candidates`` (one or a list) against ``reference``; see the module docstring.

    ``metrics``: defaults to every metric both sides have (the six nugget metrics for label sets).
    ``variant``: tau variant (``b``, ``a``, ``ap``, ``ap_sym``, ``ap_b``); ``n_boot``: topic-bootstrap replicates (0 = no
    CIs, no paired test); ``seed``: the analysis seed - every interval and Monte Carlo p-value of the result draws
    from its named stream (``random_streams.stream(seed, "analysis.<what>")``); ``ci_method``: ``percentile``,
    ``centered`` or ``bca``; ``flip_test``: reference's paired test over topics (``t`` or ``permutation``);
    ``top_k``: the k of ``kendall@k``; ``min_topics``: below this many common topics the diagnostics flag
    ``too_few_topics``; ``pairs``: the candidates compared with each other (``paired``: paired topic-bootstrap
    differences, :mod:`metaeval.analysis.comparison`): ``"all"`` (default), ``"none"`` or ``[(name_a, name_b),
    ...]``.
    """
    from metaeval.analysis.comparison import resolve_pairs

    options = dict(variant=variant, n_boot=n_boot, seed=seed, alpha=alpha, ci_method=ci_method, flip_test=flip_test,
                   top_k=top_k, min_topics=min_topics)
    opt = _Options(**options)
    inp = _load(reference, candidates, names, policy)
    common = _common_metrics(inp, metrics)
    in_pairs = {k for pair in resolve_pairs(pairs, inp.names) for k in pair} if n_boot > 0 else set()
    parts = [_part(inp.one(k), common, opt, k in in_pairs) for k in range(len(inp.names))]
    return combine(inp, parts, policy=policy, pairs=pairs, **options)
