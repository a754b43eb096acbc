"""Per-topic tau and where judge and reference disagree most.

``per_topic_tau``: for each topic t, Kendall's tau-b between the reference's and the judge's per-answer scores of
the runs on that topic (``tau(x[t, :], y[t, :])``, the items averaged by the analysis' ``topic_avg`` level;
undefined - NaN - when one side is constant on the topic).

``disagreements``: the ``k`` topics with the lowest defined per-topic tau, and within each

* the answers whose within-topic rank moves most between reference and judge;
* where the judge labels the reference's own nuggets: the (nugget, answer) pairs labelled differently - those of
  the answers whose rank moved most first, then the largest label distance (not_support < partial_support < support; FAILED counts as the largest), vital first,
  with the answer sentence that shares most words with the nugget;
* where the judge made its own nuggets: both nugget lists with their labels for those answers.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.report.load import Results

_ORD = {"not_support": 0, "partial_support": 1, "support": 2}
_WORD = re.compile(r"[a-z0-9]+")


def joined_scores(res: "Results", cid: str, metric: str) -> "pd.DataFrame | None":
    """``qid, run_id, reference, judge`` for the answers both sides scored."""
    s, ref = res.scores(cid), res.reference_scores
    if s is None or ref is None:
        return None
    j = ref[["qid", "run_id", metric]].merge(s[["qid", "run_id", metric]], on=["qid", "run_id"], suffixes=("_ref", "_judge"))
    return j.rename(columns={f"{metric}_ref": "reference", f"{metric}_judge": "judge"})


def per_topic_tau(res: "Results", cid: str, metric: str, variant: str = "b") -> "pd.DataFrame | None":
    """``qid, tau, n_runs`` (tau NaN where undefined), sorted by qid."""
    import pandas as pd

    from metaeval.analysis.kendall import kendall

    j = joined_scores(res, cid, metric)
    if j is None:
        return None
    rows = []
    for qid, g in j.groupby("qid", sort=True):
        g = g.dropna(subset=["reference", "judge"])
        t = kendall(g["reference"].to_numpy(float), g["judge"].to_numpy(float), variant) if len(g) >= 2 else float("nan")
        rows.append((str(qid), float(t), len(g)))
    return pd.DataFrame(rows, columns=["qid", "tau", "n_runs"])


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
    if a in _ORD and b in _ORD:
        return abs(_ORD[a] - _ORD[b])
    return 3  # FAILED on one side


def disagreements(res: "Results", cell: dict[str, Any], metric: str, k: int = 3, per_topic: int = 6,
                  tau_table: "pd.DataFrame | None" = None) -> dict[str, Any]:
    cid = cell["cell"]
    tt = tau_table if tau_table is not None else per_topic_tau(res, cid, metric)
    out: dict[str, Any] = {"cell": cid, "metric": metric, "topics": []}
    if tt is None:
        return out
    defined = tt.dropna(subset=["tau"]).sort_values(["tau", "qid"])
    out["n_topics_undefined"] = int(tt["tau"].isna().sum())
    j = joined_scores(res, cid, metric)
    shared = bool((cell.get("analysis") or {}).get("labels"))
    judge = res.labels(cid)
    ref = res.reference
    topics = res.dataset.topics if res.dataset is not None else {}
    answers = {}
    if ref is not None:
        answers = {(r.qid, r.run_id): r.answer_text for r in ref.answers.itertuples(index=False)}
    for row in defined.head(k).itertuples(index=False):
        g = j[j["qid"] == row.qid].copy()
        g["reference_rank"] = g["reference"].rank(ascending=False, method="min").astype(int)
        g["judge_rank"] = g["judge"].rank(ascending=False, method="min").astype(int)
        g["rank_moved"] = (g["judge_rank"] - g["reference_rank"]).abs()
        g = g.sort_values(["rank_moved", "run_id"], ascending=[False, True])
        top_runs = list(g["run_id"].head(3))
        entry: dict[str, Any] = {"qid": row.qid, "query": topics.get(row.qid, ""), "tau": row.tau, "n_runs": row.n_runs,
                                 "answers": [{"run_id": r.run_id, "reference": r.reference, "judge": r.judge,
                                              "reference_rank": int(r.reference_rank), "judge_rank": int(r.judge_rank)}
                                             for r in g.head(5).itertuples(index=False)]}
        if shared and judge is not None and ref is not None:
            entry["pairs"] = _label_pairs(ref, judge, row.qid, answers, per_topic, focus=top_runs)
        elif judge is not None and ref is not None:
            entry["nugget_lists"] = [_nugget_lists(ref, judge, row.qid, run, answers) for run in top_runs]
        out["topics"].append(entry)
    return out


def _label_pairs(ref, judge, qid: str, answers: dict, limit: int, focus: list[str] = ()) -> list[dict[str, Any]]:
    """Differing labels on one topic: pairs of the ``focus`` answers (those whose rank moved most) first, then by
    label distance, vital nuggets first."""
    keys = ["qid", "run_id", "nugget_id"]
    r = ref.labels[ref.labels["qid"] == qid][keys + ["nugget", "importance", "support"]]
    c = judge.labels[judge.labels["qid"] == qid][keys + ["nugget", "support", "support_raw"]]
    m = r.merge(c, on=keys, suffixes=("_ref", "_judge"))
    m = m[m["nugget_ref"] == m["nugget_judge"]]
    rows = []
    for x in m.itertuples(index=False):
        h, jl = str(x.support_ref), str(x.support_judge)
        if h == jl:
            continue
        rows.append({"run_id": x.run_id, "nugget_id": int(x.nugget_id), "nugget": x.nugget_ref,
                     "importance": str(x.importance), "human": h, "judge": jl,
                     "judge_raw": None if jl != "FAILED" else str(x.support_raw),
                     "direction": "judge lower" if _ORD.get(jl, -1) < _ORD.get(h, -1) else "judge higher",
                     "distance": _dist(h, jl),
                     "answer_excerpt": excerpt(answers.get((qid, x.run_id), ""), x.nugget_ref)})
    pos = {r: i for i, r in enumerate(focus)}
    rows.sort(key=lambda d: (pos.get(d["run_id"], len(pos)), -d["distance"], d["importance"] != "vital", d["run_id"], d["nugget_id"]))
    return rows[:limit]


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


def mean_defined(tt: "pd.DataFrame | None") -> float | None:
    if tt is None:
        return None
    v = tt["tau"].to_numpy(float)
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else None
