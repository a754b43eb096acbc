"""Per-topic tau and where judge and reference disagree most (computed by the study, rendered by the report).

``per_topic_tau``: for each topic t, Kendall's tau (the analysis' variant, tau-b by default) between the
reference's and the judge's per-answer scores of the runs on that topic, ``tau(x[t, :], y[t, :])`` - the items
the analysis' ``topic_avg`` level averages; undefined (NaN) when one side is constant on the topic or fewer than
two runs answered it.

``disagreements``: the ``k`` topics with the lowest defined per-topic tau, and within each

* the answers whose within-topic rank (:func:`metaeval.analysis.ranks.rank_array`, 1 = best) moves most between
  reference and judge;
* where the judge labels the reference's own nuggets: the (nugget, answer) pairs labelled differently - those of
  the answers whose rank moved most first, then the largest label distance (not_support < partial_support <
  support; FAILED counts as the largest), vital first, with the answer sentence sharing most words with the nugget;
* where the judge made its own nuggets: both nugget lists with their labels for those answers.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from metaeval.types import FAILED_CODE, SUPPORT_CODE

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet

_WORD = re.compile(r"[a-z0-9]+")


def joined_scores(ref_scores: "pd.DataFrame", judge_scores: "pd.DataFrame", metric: str) -> "pd.DataFrame":
    """``qid, run_id, reference, judge`` for the answers both sides scored."""
    j = ref_scores[["qid", "run_id", metric]].merge(judge_scores[["qid", "run_id", metric]], on=["qid", "run_id"],
                                                    suffixes=("_ref", "_judge"))
    return j.rename(columns={f"{metric}_ref": "reference", f"{metric}_judge": "judge"})


def per_topic_tau(ref_scores: "pd.DataFrame", judge_scores: "pd.DataFrame", metric: str, variant: str = "b") -> "pd.DataFrame":
    """``qid, tau, n_runs`` (tau NaN where undefined), sorted by qid; see :func:`per_topic_taus`."""
    return per_topic_taus(ref_scores, judge_scores, [metric], variant)[metric]


def per_topic_taus(ref_scores: "pd.DataFrame", judge_scores: "pd.DataFrame", metrics: Sequence[str],
                   variant: str = "b") -> dict[str, "pd.DataFrame"]:
    """Per metric, ``qid, tau, n_runs`` for the topics both sides scored.  All topics at once: the (topic x run)
    matrices of both sides go through the analysis' batch tau (``metaeval.analysis.kendall.get_variant``), with
    runs missing on either side left out of their topic (``n_runs`` counts the runs used)."""
    import pandas as pd

    from metaeval.analysis.kendall import get_variant

    rq, rr = ref_scores["qid"].astype(str).to_numpy(), ref_scores["run_id"].astype(str).to_numpy()
    jq, jr = judge_scores["qid"].astype(str).to_numpy(), judge_scores["run_id"].astype(str).to_numpy()
    qids = sorted(set(rq) & set(jq))
    runs = sorted(set(rr) | set(jr))
    qi, ri = pd.Index(qids), pd.Index(runs)
    pos = {side: (qi.get_indexer(q), ri.get_indexer(r)) for side, q, r in (("ref", rq, rr), ("judge", jq, jr))}
    batch = get_variant(variant).batch
    out = {}
    for metric in metrics:
        mats = []
        for side, df in (("ref", ref_scores), ("judge", judge_scores)):
            q, r = pos[side]
            ok = q >= 0
            m = np.full((len(qids), len(runs)), np.nan)
            m[q[ok], r[ok]] = df[metric].to_numpy(float)[ok]
            mats.append(m)
        xm, ym = mats
        bad = np.isnan(xm) | np.isnan(ym)
        xm[bad], ym[bad] = np.nan, np.nan
        n = (~bad).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = np.asarray(batch(xm, ym), dtype=float) if len(qids) else np.zeros(0)
        out[metric] = pd.DataFrame({"qid": qids, "tau": np.where(n >= 2, tau, np.nan), "n_runs": n.astype(int)})
    return out


def tau_records(tt: "pd.DataFrame") -> list[dict[str, Any]]:
    return [{"qid": q, "tau": (None if t != t else t), "n_runs": int(n)} for q, t, n in tt.itertuples(index=False)]


def excerpt(answer: str, nugget: str, width: int = 320) -> str:
    """The answer sentence sharing most words (3+ letters) with the nugget; the answer's start if none does."""
    words = {w for w in _WORD.findall(nugget.lower()) if len(w) > 2}
    sents = [s.strip() for s in re.split(r"(?<=[.!?])\s+", answer or "") if s.strip()]
    best, score = "", 0
    for s in sents:
        k = len(words & set(_WORD.findall(s.lower())))
        if k > score:
            best, score = s, k
    text = best or (answer or "")
    return text if len(text) <= width else text[: width - 1].rstrip() + "\u2026"


def _dist(a: str, b: str) -> int:
    ra, rb = SUPPORT_CODE.get(a), SUPPORT_CODE.get(b)
    if ra is not None and rb is not None:
        return abs(ra - rb)
    return 3  # FAILED on one side


def _support_code(label: str) -> int:
    return SUPPORT_CODE.get(label, FAILED_CODE)


def disagreements(tt: "pd.DataFrame", ref_scores: "pd.DataFrame", judge_scores: "pd.DataFrame",
                  ref: "LabelSet | None", judge: "LabelSet", metric: str, *, shared: bool,
                  queries: dict[str, str] | None = None, k: int = 3, per_topic: int = 6) -> dict[str, Any]:
    """The ``k`` worst topics of one cell on ``metric`` with the answers and labels behind them."""
    from metaeval.analysis.ranks import rank_array

    out: dict[str, Any] = {"metric": metric, "k": k, "topics": [], "n_topics_undefined": int(tt["tau"].isna().sum())}
    defined = tt.dropna(subset=["tau"]).sort_values(["tau", "qid"])
    if not len(defined):
        return out
    j = joined_scores(ref_scores, judge_scores, metric)
    answers: dict[tuple[str, str], str] = {}
    if ref is not None:
        answers = {(str(q), str(r)): t for q, r, t in zip(ref.answers["qid"], ref.answers["run_id"], ref.answers["answer_text"])}
    for row in defined.head(k).itertuples(index=False):
        g = j[j["qid"] == row.qid].copy()
        g["reference_rank"] = rank_array(g["reference"].to_numpy(float), nan="last").astype(int)
        g["judge_rank"] = rank_array(g["judge"].to_numpy(float), nan="last").astype(int)
        g["rank_moved"] = (g["judge_rank"] - g["reference_rank"]).abs()
        g = g.sort_values(["rank_moved", "run_id"], ascending=[False, True])
        top_runs = list(g["run_id"].head(3))
        entry: dict[str, Any] = {"qid": row.qid, "query": (queries or {}).get(row.qid, ""), "tau": row.tau,
                                 "n_runs": int(row.n_runs),
                                 "answers": [{"run_id": r.run_id, "reference": r.reference, "judge": r.judge,
                                              "reference_rank": int(r.reference_rank), "judge_rank": int(r.judge_rank)}
                                             for r in g.head(5).itertuples(index=False)]}
        if ref is not None and shared:
            entry["pairs"] = _label_pairs(ref, judge, row.qid, answers, per_topic, focus=top_runs)
        elif ref is not None:
            entry["nugget_lists"] = [_nugget_lists(ref, judge, row.qid, run, answers) for run in top_runs]
        out["topics"].append(entry)
    return out


def _label_pairs(ref, judge, qid: str, answers: dict, limit: int, focus: list[str] = ()) -> list[dict[str, Any]]:
    """Differing labels on one topic: pairs of the ``focus`` answers first, then by label distance, vital first."""
    keys = ["qid", "run_id", "nugget_id"]
    r = ref.labels[ref.labels["qid"] == qid][keys + ["nugget", "importance", "support"]]
    c = judge.labels[judge.labels["qid"] == qid][keys + ["nugget", "support", "support_raw"]]
    m = r.merge(c, on=keys, suffixes=("_ref", "_judge"))
    m = m[(m["nugget_ref"] == m["nugget_judge"]) & (m["support_ref"].astype(str) != m["support_judge"].astype(str))]
    rows = []
    for x in m.itertuples(index=False):
        h, jl = str(x.support_ref), str(x.support_judge)
        rows.append({"run_id": x.run_id, "nugget_id": int(x.nugget_id), "nugget": x.nugget_ref,
                     "importance": str(x.importance), "human": h, "judge": jl,
                     "judge_raw": None if jl != "FAILED" else str(x.support_raw),
                     "direction": "judge lower" if _support_code(jl) < _support_code(h) else "judge higher",
                     "distance": _dist(h, jl), "_text": x.nugget_ref})
    pos = {r: i for i, r in enumerate(focus)}
    rows.sort(key=lambda d: (pos.get(d["run_id"], len(pos)), -d["distance"], d["importance"] != "vital", d["run_id"], d["nugget_id"]))
    rows = rows[:limit]
    for d in rows:  # excerpts only for the rows shown
        d["answer_excerpt"] = excerpt(answers.get((qid, d["run_id"]), ""), d.pop("_text"))
    return rows


def _nugget_lists(ref, judge, qid: str, run_id: str, answers: dict, limit: int = 15) -> dict[str, Any]:
    """Both sides' nuggets for one answer, vital first (the strict vital score counts only those)."""
    def lst(ls):
        g = ls.labels[(ls.labels["qid"] == qid) & (ls.labels["run_id"] == run_id)].copy()
        g["_okay"] = g["importance"].astype(str) != "vital"
        g = g.sort_values(["_okay", "nugget_id"])
        return [{"nugget": n, "importance": str(i), "label": str(s)} for n, i, s in
                zip(g["nugget"].head(limit), g["importance"].head(limit), g["support"].head(limit))]

    text = answers.get((qid, run_id), "")
    return {"run_id": run_id, "answer_excerpt": text if len(text) <= 400 else text[:399] + "\u2026",
            "human": lst(ref), "judge": lst(judge)}
