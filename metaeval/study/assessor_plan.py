"""The assessor plan (``plan.json``): how many human-labelled topics, which ones next, at what cost, and how
consistent the judge is with itself.  Every figure here is computed once; the report only renders it.

Inputs: the reference (human) labels on the pilot topics, the judge's labels on all topics (hard labels, or k
samples per call), settings.  The pilot = topics with both reference and judge answers; runs = runs present
in both (runs missing a pilot topic are dropped from the curves, counted in ``runs_dropped``).

Sections (see :mod:`metaeval.planning` for every formula):

* ``curves[metric]`` - precision vs the number of labelled topics (analytic PPI and topic resampling), with
  assessor hours per row; ``agreement`` compares the analytic width with bootstrap worlds of the pilot (an
  implementation check only: it cannot validate the prediction, see ``experiments/calibration_validity``);
* ``need`` - "for +/-h on <metric> run means you need about N topics" (median and worst run): the N the pilot can
  justify (upper end of the chi-square range of the pilot's variance), the point N, the range, warnings on runs
  with constant pilot differences, and the hours;
* ``next_topics`` - the unlabelled topics in the order to send to assessors (sequential Poisson pi-ps order);
* ``replay`` - the labelling loop replayed on the pilot (topics held back), each strategy vs random, with
  Monte-Carlo SEs (only when ``replay_reps > 0``);
* ``consistency`` - with k >= 2 judge samples: flip rate, tau spread over draws vs the topic bootstrap, and
  score-level calibration with soft (vote-fraction) vs hard judge scores, out-of-fold by topic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from metaeval.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

SCHEMA = "metaeval.plan/1"
DEFAULTS: dict[str, Any] = {"metric": "v_strict", "metrics": ["v_strict", "a_strict"], "target_half_width": 0.02,
                            "level": 0.95, "total_topics": None, "n_grid": None, "reps": 400, "gaps": [0.01, 0.02, 0.05],
                            "strategy": "auto", "replay_reps": 100, "replay_pilot": 5, "min_pairing": 0.95,
                            "crossfit_repeats": 10, "folds": 5, "bootstrap": 200}


def _settings(settings: dict[str, Any] | None) -> dict[str, Any]:
    s = dict(DEFAULTS)
    s.update({k: v for k, v in (settings or {}).items() if v is not None})
    if s["metric"] not in s["metrics"]:
        s["metrics"] = [s["metric"]] + [m for m in s["metrics"] if m != s["metric"]]
    return s


def plan_study(reference: "LabelSet", judge: "LabelSet | Sequence[LabelSet]", settings: dict[str, Any] | None = None, *,
               seed: int = 0, judge_sampler: Callable[[np.random.Generator], "LabelSet"] | None = None) -> dict[str, Any]:
    """Build the plan dict (schema ``metaeval.plan/1``).  ``judge``: one label set, or k label sets = k samples
    of the same judge (sample 0 is "the" hard judge).  ``judge_sampler(rng)`` redraws a simulated judge for each
    replay replication (for simulated judges only)."""
    from metaeval.io.jsonl import to_jsonable
    from metaeval.planning import active, budget, consistency, precision
    from metaeval.planning.labels import expected_scores, label_arrays, reverse_confusion, votes_from_codes
    from metaeval.planning.matrices import common_runs, score_matrix
    from metaeval.measures import display_name

    s = _settings(settings)
    samples = list(judge) if isinstance(judge, (list, tuple)) else [judge]
    hard = samples[0]
    runs = common_runs(reference, hard)
    pilot_q = sorted(set(reference.qids) & set(hard.qids))
    judge_q = hard.qids
    if len(pilot_q) < 3:
        raise ConfigError(f"{reference.name} and {hard.name} share {len(pilot_q)} topic(s); a pilot needs at least 3")
    total = int(s["total_topics"] or len(judge_q))
    if total < len(pilot_q):
        raise ConfigError(f"total_topics={total} is smaller than the {len(pilot_q)} pilot topics")
    from metaeval.random_streams import stream

    rng = stream(seed, "planning.plan")
    bud = budget.budget_settings(s)
    ref_pilot = reference.subset(qids=pilot_q, run_ids=runs)
    labels_per_topic = len(ref_pilot.labels) / len(pilot_q)

    # label-level: pairing and votes (k samples -> fractions)
    codes = None
    if len(samples) > 1:
        base, codes = consistency.sample_codes(samples)
        votes = votes_from_codes(codes)
    else:
        votes = None
    arr = label_arrays(hard, judge_q, runs, reference=reference, votes=votes)
    in_pilot = np.isin(arr.topic, [judge_q.index(q) for q in pilot_q])
    pairing = float((arr.human[in_pilot] >= 0).mean()) if in_pilot.any() else 0.0
    P, n_pairs = reverse_confusion(arr, np.array([judge_q.index(q) for q in pilot_q]))

    pilot_idx = np.array([judge_q.index(q) for q in pilot_q])
    curves, need, J_all = {}, {}, {}
    for m in s["metrics"]:
        _, _, H = score_matrix(reference, m, pilot_q, runs)
        _, _, J = score_matrix(hard, m, judge_q, runs)
        J_all[m] = J
        c = precision.precision_curves(H, J[pilot_idx], total_topics=total, n_grid=s["n_grid"], reps=int(s["reps"]),
                                       rng=rng, level=float(s["level"]), gaps=s["gaps"])
        for row in c["rows"]:
            row["hours"] = budget.hours(row["n"], labels_per_topic, bud["seconds_per_label"], bud["nugget_hours_per_topic"])
        curves[m] = c
        need[m] = _need(H, J[pilot_idx], s, total, display_name(m), labels_per_topic, bud, seed, runs)
    metric = s["metric"]

    # active selection: the unlabelled judge topics in order
    strategy = s["strategy"]
    if strategy == "auto":
        strategy = "confusion" if pairing >= float(s["min_pairing"]) else "runs"
    if strategy == "confusion" and pairing < float(s["min_pairing"]):
        raise ConfigError(f"strategy confusion needs nuggets paired by text on >= {s['min_pairing']:.0%} of pilot labels; "
                          f"{pairing:.1%} matched (judge made its own nuggets?) - use strategy=runs")
    E, V = expected_scores(arr, metric, P)
    _, Vv = expected_scores(arr, metric, None)
    u = active.sizes(strategy, J=J_all[metric], E=E, V=V, V_votes=Vv if codes is not None else None)
    ranked = active.rank_topics(u, judge_q, rng, exclude=pilot_q)
    for r in ranked:
        r["hours_cumulative"] = budget.hours(r["rank"], labels_per_topic, bud["seconds_per_label"], bud["nugget_hours_per_topic"])
    next_topics = {"strategy": strategy, "labelled": len(pilot_q), "unlabelled": len(ranked), "list": ranked,
                   "note": ("every judged topic already has human labels" if not ranked else
                            "label in this order; the calibrated score then weights each labelled topic by 1/pi "
                            "(Hajek), pi = its inclusion probability at the budget reached: metaeval plan --after plan.json")}

    replay_out = None
    if int(s["replay_reps"]) > 0 and len(pilot_q) - int(s["replay_pilot"]) >= 4:
        replay_out = replay_plan(reference.subset(qids=pilot_q), hard.subset(qids=pilot_q), metric,
                                 strategies=["random", strategy] + (["votes"] if codes is not None and strategy != "votes" else []) + ["greedy"],
                                 pilot=int(s["replay_pilot"]), reps=int(s["replay_reps"]), seed=seed,
                                 judge_sampler=judge_sampler, votes=None if codes is None else votes[_row_mask(hard, pilot_q)])

    cons = None
    if len(samples) > 1:
        cons = consistency_section(reference, samples, metric, s, rng)

    ag = _agreement(curves[metric])
    out = {"schema": SCHEMA, "metric": metric, "metric_name": display_name(metric), "level": s["level"],
           "target_half_width": s["target_half_width"], "reference": reference.name, "judge": hard.name,
           "samples": len(samples), "seed": seed,
           "pilot": {"topics": len(pilot_q), "qids": pilot_q, "judge_topics": len(judge_q), "total_topics": total,
                     "runs": len(runs), "labels_per_topic": labels_per_topic, "pairing_coverage": pairing,
                     "pairs_for_confusion": n_pairs},
           "budget": bud, "curves": curves, "need": need, "agreement": ag, "next_topics": next_topics,
           "replay": replay_out, "consistency": cons,
           "recommendation": need[metric]["line"]}
    return to_jsonable(out)


def _need(H: np.ndarray, J: np.ndarray, s: dict[str, Any], total: int, metric_name: str, labels_per_topic: float,
          bud: dict[str, Any], seed: int, runs: Sequence[str]) -> dict[str, Any]:
    """``precision.need_statement`` on the pilot (runs answering every pilot topic), with assessor hours and its
    warnings appended to the printed line, and ``separate_top``: the topics needed to tell the best pilot runs
    apart (``precision.separation_need``, at the same upper-end variance factor), with a line."""
    from metaeval.planning import budget, precision

    keep = np.isfinite(H).all(0) & np.isfinite(J).all(0)
    D = (H - J)[:, keep]
    nd = precision.need_statement(D.var(0, ddof=1), float(s["target_half_width"]), total, float(s["level"]),
                                  metric_name, pilot_topics=H.shape[0], deltas=D, seed=seed)
    kept = [r for r, k in zip(runs, keep) if k]
    sep = precision.separation_need(H[:, keep], J[:, keep], total, float(s["level"]), factor=nd["variance_factor"])
    for row in sep:
        row["a"], row["b"] = kept[row["a"]], kept[row["b"]]
    nd["separate_top"] = sep
    nd["separate_line"] = "to tell the best pilot runs apart (95% per pair, at the pilot's gaps): " + "; ".join(
        f"{r['a']} vs {r['b']} (gap {r['gap']:.3f}): " + ("never (tied on the pilot)" if r["justified"] is None else
                                                           f"about {r['justified']} topics (point {r['point']})")
        for r in sep)
    for key in ("median_run", "worst_run"):
        nd[f"hours_{key}"] = budget.hours(nd[key], labels_per_topic, bud["seconds_per_label"], bud["nugget_hours_per_topic"])
    nd["line"] += f" (~{nd['hours_median_run']:.0f} / {nd['hours_worst_run']:.0f} assessor hours)"
    for w in nd["warnings"]:
        nd["line"] += f"; warning: {w}"
    return nd


def _row_mask(ls: "LabelSet", qids: Sequence[str]) -> np.ndarray:
    return ls.labels["qid"].isin(set(qids)).to_numpy()


def _agreement(c: dict[str, Any]) -> dict[str, Any]:
    """Is the analytic (planning, ddof-1 pilot variance) width within 10% of the resampled one?  Rows with
    n < T, medians over runs.  The bootstrap world's variance is the pilot's ddof-0 one, so the expected ratio
    is sqrt(T_p / (T_p - 1)) (1.024 for a 21-topic pilot) plus Monte-Carlo error."""
    rows = [r for r in c["rows"] if r["n"] < c["total_topics"] and r["empirical_half"]["median"]]
    if not rows:
        return {"within_10pct": None, "line": "no row with n < T to compare"}
    a = [r["analytic_half"]["median"] / r["empirical_half"]["median"] for r in rows]
    p = [r["plugin_over_empirical"]["median"] for r in rows]
    p10 = [r["plugin_over_empirical"]["median"] for r in rows if r["n"] >= 10]
    cov = [r["plugin_coverage"]["median"] for r in rows]
    worst_a, worst_p = max(abs(x - 1) for x in a), max(abs(x - 1) for x in p)
    tp = c["pilot_topics"]
    line = (f"implementation check on bootstrap worlds of the pilot (not a validation of the prediction): "
            f"analytic PPI half-width / resampled: {min(a):.3f}-{max(a):.3f} "
            f"({'within' if worst_a <= 0.10 else 'NOT within'} 10%; expected sqrt({tp}/{tp - 1}) = {np.sqrt(tp / (tp - 1)):.3f} "
            f"from the pilot's ddof); plug-in interval (t, own s) / resampled: {min(p):.3f}-{max(p):.3f}"
            + (f", {min(p10):.3f}-{max(p10):.3f} from n = 10" if p10 else "")
            + f"; plug-in coverage {min(cov):.2f}-{max(cov):.2f} (medians over runs, n = {rows[0]['n']}..{rows[-1]['n']}, "
            f"{c['reps']} resampled worlds)")
    return {"within_10pct": worst_a <= 0.10, "plugin_within_10pct": worst_p <= 0.10, "analytic_ratio_range": [min(a), max(a)],
            "plugin_ratio_range": [min(p), max(p)], "plugin_ratio_range_n10": [min(p10), max(p10)] if p10 else None,
            "plugin_coverage_range": [min(cov), max(cov)], "line": line}


def replay_plan(reference: "LabelSet", judge: "LabelSet | Sequence[LabelSet]", metric: str, *, strategies: Sequence[str], pilot: int, reps: int,
                seed: int, budgets: Sequence[int] | None = None,
                judge_sampler: Callable[[np.random.Generator], "LabelSet | list[LabelSet]"] | None = None,
                votes: np.ndarray | None = None) -> dict[str, Any]:
    """Replay the labelling loop on topics with human labels (``planning.active.replay``) for ``strategies``
    (``greedy`` = confusion sizes, largest first, unweighted: the biased comparator).  ``votes`` (n, 3) are
    the judge's vote fractions aligned with ``judge.labels``; ``judge_sampler(rng)`` returns a fresh simulated
    judge (a label set, or k label sets = k draws) per replication.  The calibrated score always uses the hard
    judge (draw 0); votes only shape the sizes."""
    from metaeval.planning import active
    from metaeval.planning.labels import expected_scores, label_arrays, reverse_confusion
    from metaeval.planning.matrices import common_runs, score_matrix

    first = judge[0] if isinstance(judge, (list, tuple)) else judge
    runs = common_runs(reference, first)
    qids = sorted(set(reference.qids) & set(first.qids))
    _, _, H = score_matrix(reference, metric, qids, runs)

    def build(hard_arr, vote_arr):
        J, _ = expected_scores(hard_arr, metric, None)       # the hard judge (draw 0) scores
        _, Vv = expected_scores(vote_arr, metric, None)      # self-disagreement of the k draws (0 when k = 1)

        def conf(pil, pool, rng):
            P, _ = reverse_confusion(hard_arr, pil)
            E, V = expected_scores(vote_arr, metric, P)
            return active.sizes("confusion", J=J[pool], E=E[pool], V=V[pool])

        fns = {"random": lambda pil, pool, rng: np.ones(len(pool)),
               "confusion": conf, "greedy": conf,
               "runs": lambda pil, pool, rng: active.sizes("runs", J=J[pool]),
               "votes": lambda pil, pool, rng: active.sizes("votes", J=J[pool], V_votes=Vv[pool])}
        return J, {k: fns[k] for k in strategies}

    from dataclasses import replace as _replace

    from metaeval.planning.consistency import sample_codes
    from metaeval.planning.labels import votes_from_codes
    from metaeval.simulation import labels_to_codes

    key_cols = ("qid", "run_id", "nugget_id")
    base_judge = first
    base_arr = label_arrays(base_judge, qids, runs, reference=reference)

    def arrays(j: "LabelSet | Sequence[LabelSet]", v: np.ndarray | None):
        if isinstance(j, (list, tuple)):
            j, v = j[0], votes_from_codes(sample_codes(j)[1])
        same = len(j.labels) == len(base_judge.labels) and all(
            (j.labels[k].to_numpy() == base_judge.labels[k].to_numpy()).all() for k in key_cols)
        if not same:  # other rows: pair again by text
            return (label_arrays(j, qids, runs, reference=reference),
                    label_arrays(j, qids, runs, reference=reference, votes=v))
        keep = base_judge.labels["qid"].isin(set(qids)).to_numpy() & base_judge.labels["run_id"].isin(set(runs)).to_numpy()
        hard = votes_from_codes(labels_to_codes(j.labels["support"].astype(object).to_numpy()))[keep]
        return _replace(base_arr, votes=hard), _replace(base_arr, votes=hard if v is None else np.asarray(v)[keep])

    if judge_sampler is not None:
        draw = lambda rng: build(*arrays(judge_sampler(rng), None))  # noqa: E731
        J0, fns0 = None, {k: None for k in strategies}
    else:
        draw = None
        J0, fns0 = build(*arrays(judge, votes))
    res = active.replay(H, J0, fns0, pilot=pilot, budgets=budgets, reps=reps, seed=seed, judge_draw=draw)
    res["metric"] = metric
    res["judge_redrawn"] = judge_sampler is not None
    res["topics"] = len(qids)
    res["lines"] = _replay_lines(res)
    return res


def _replay_lines(res: dict[str, Any]) -> list[str]:
    lines = []
    for s, rows in res["strategies"].items():
        if s == "random":
            continue
        wins = [r for r in rows if r["mse_minus_random"] + 2 * r["mse_minus_random_se"] < 0]
        loses = [r for r in rows if r["mse_minus_random"] - 2 * r["mse_minus_random_se"] > 0]
        rel = [r["relative_mse"] for r in rows if r.get("relative_mse") is not None]
        verdict = ("beats random (MSE lower by more than 2 MC SE)" if len(wins) == len(rows) else
                   "is worse than random" if len(loses) == len(rows) else
                   f"beats random at {len(wins)} of {len(rows)} budgets, worse at {len(loses)}")
        lines.append(f"{s}: MSE relative to random {min(rel):.2f}-{max(rel):.2f} over budgets "
                     f"{rows[0]['n']}..{rows[-1]['n']} of a {res['pool']}-topic pool; {verdict} ({res['reps']} replays)")
    return lines


def consistency_section(reference: "LabelSet", samples: Sequence["LabelSet"], metric: str, s: dict[str, Any],
                        rng: np.random.Generator) -> dict[str, Any]:
    """Flip rate, tau spread over draws vs the topic bootstrap, soft vs hard score-level calibration: the same
    figures a sampled sweep cell gets (``metaeval.study.consistency.cell_consistency``), on the pilot topics."""
    from metaeval.study.consistency import cell_consistency

    return cell_consistency(samples, reference, metric, bootstrap=int(s["bootstrap"]), folds=int(s["folds"]),
                            repeats=int(s["crossfit_repeats"]), seed=int(rng.integers(2**31)))


def calibrated_after_plan(plan: dict[str, Any], reference: "LabelSet", judge: "LabelSet", metric: str | None = None) -> dict[str, Any]:
    """The calibrated leaderboard once assessors have labelled topics in the plan's order: stratified PPI with
    the plan's pilot as one stratum and Hajek weights for the rest (``planning.active.stratified_ppi``).

    ``reference``: human labels on the pilot and the newly labelled topics; ``judge``: the judge's labels on all
    topics.  Says whether the labelled topics are a prefix of the plan's list (the weights assume it)."""
    from metaeval.io.jsonl import to_jsonable
    from metaeval.planning.active import stratified_ppi
    from metaeval.planning.matrices import common_runs, score_matrix

    metric = metric or plan["metric"]
    runs = common_runs(reference, judge)
    qids = judge.qids
    pilot_q = set(plan["pilot"]["qids"])
    order = [r["qid"] for r in plan["next_topics"]["list"]]
    size = {r["qid"]: r["size"] for r in plan["next_topics"]["list"]}
    unknown = [q for q in qids if q not in pilot_q and q not in size]
    if unknown:
        raise ConfigError(f"{len(unknown)} judge topic(s) are neither in the plan's pilot nor in its list (e.g. {unknown[0]}); "
                          "was the plan made for these labels?")
    _, _, H = score_matrix(reference, metric, qids, runs)
    _, _, J = score_matrix(judge, metric, qids, runs)
    have_h = set(reference.qids)
    H[[q not in have_h for q in qids]] = np.nan
    keep = np.isfinite(J).all(0) & np.isfinite(H[[q in have_h for q in qids]]).all(0)
    labelled_new = [q for q in order if q in have_h]
    prefix = labelled_new == order[: len(labelled_new)]
    est = stratified_ppi(H[:, keep], J[:, keep], np.array([q in pilot_q for q in qids]),
                         np.array([size.get(q, 0.0) for q in qids]))
    rows = sorted(({"run_id": r, "calibrated": float(e), "judge": float(np.mean(J[:, i]))}
                   for r, e, i in zip(np.array(runs)[keep], est, np.flatnonzero(keep))), key=lambda x: -x["calibrated"])
    return to_jsonable({"metric": metric, "pilot_topics": len(pilot_q), "new_topics": len(labelled_new),
                        "in_plan_order": prefix, "runs_left_out": int((~keep).sum()), "rows": rows,
                        "note": ("labelled topics follow the plan's order" if prefix else
                                 "labelled topics are NOT the first ones of the plan's list: the Hajek weights assume they "
                                 "are, so this estimate may be biased")})
