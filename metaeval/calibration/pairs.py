"""Label sets as flat numpy arrays, and expected nugget scores from per-pair credit.

Calibration fits and applies thousands of times inside the simulation harness, so it works on ``Pairs``:
one row per (topic, run, nugget) label with integer codes, plus one row per answer (topic, run).

Scores follow ``metaeval.measures`` (each measure's family and credit) and ``metaeval.scoring`` under the default
``ScoringPolicy`` (castorini/nuggetizer): a FAILED
support label is in the denominator with no credit; a nugget with FAILED importance counts in A, not in V, and
has weight 0 in W.  For one answer with pairs ``i`` of family weight ``f_i`` and credit ``c_i``::

    score = sum_i f_i c_i / sum_i f_i        (0 when the denominator is 0)

with families ``vital`` (f = 1[vital]) for V/V_strict, ``all`` (f = 1) for A/A_strict and ``weighted``
(f = 1 vital, 0.5 okay, 0 FAILED) for W/W_strict; credit is strict ``1[support]`` or partial
``1[support] + 0.5 * 1[partial_support]``.  Because a score is linear in the credits, replacing each credit by
its expectation under a model of the human label gives the expected human score of the answer, and a run's
score (the mean over its answers) is ``sum_i omega_i c_i`` with run weights ``omega_i = f_i / (D_a T_r)``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from metaeval.measures import FAMILIES, METRICS, PARTIAL_CREDIT, REGISTRY, family_weight, measure
from metaeval.types import IMPORTANCE_LEVELS, support_codes

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet

#: metric -> (family, strict credit?), from the registry ``metaeval.measures`` (a test checks that
#: ``observed_scores`` equals ``metaeval.scoring.score_answers`` on the NIST file)
METRIC_SPEC: dict[str, tuple[str, bool]] = {m.name: (m.family, m.strict) for m in REGISTRY}
#: ``Pairs.imp`` code of each importance label: its position in ``types.IMPORTANCE_LEVELS`` (okay 0, vital 1, FAILED 2;
#: the calibration methods index their per-importance tables by it).  Compare by name (``IMP_CODES["vital"]``).
IMP_CODES = {name: i for i, name in enumerate(IMPORTANCE_LEVELS)}


@dataclass(frozen=True)
class Pairs:
    """Flat arrays of one label set.  Pair arrays have length n, answer arrays length A."""

    ans: np.ndarray        # (n,) answer index
    imp: np.ndarray        # (n,) 0 vital, 1 okay, 2 FAILED
    sup: np.ndarray        # (n,) 0/1/2 support code, -1 FAILED
    nug_len: np.ndarray    # (n,) nugget length in whitespace tokens
    pos: np.ndarray        # (n,) nugget position / number of nuggets of the topic, in [0, 1)
    nugget_id: np.ndarray  # (n,)
    ans_run: np.ndarray    # (A,) run index
    ans_topic: np.ndarray  # (A,) topic index
    ans_len: np.ndarray    # (A,) answer length (response_length, else words of answer_text)
    run_ids: tuple[str, ...]
    qids: tuple[str, ...]

    @property
    def n_answers(self) -> int:
        return len(self.ans_run)

    def with_support(self, codes: np.ndarray) -> "Pairs":
        return replace(self, sup=np.asarray(codes, dtype=np.int8))

    def select_topics(self, topic_idx: Sequence[int]) -> "Pairs":
        """The pairs and answers of some topics (indices into ``qids``); run and topic lists are kept."""
        keep_t = np.zeros(len(self.qids), dtype=bool)
        keep_t[np.asarray(topic_idx, dtype=int)] = True
        return self.select_answers(keep_t[self.ans_topic])

    def select_answers(self, keep_a: np.ndarray) -> "Pairs":
        """The pairs and answers where the boolean answer mask is true (pair order kept)."""
        new_idx = np.cumsum(keep_a) - 1
        keep_p = keep_a[self.ans]
        return Pairs(new_idx[self.ans[keep_p]], self.imp[keep_p], self.sup[keep_p], self.nug_len[keep_p],
                     self.pos[keep_p], self.nugget_id[keep_p], self.ans_run[keep_a], self.ans_topic[keep_a],
                     self.ans_len[keep_a], self.run_ids, self.qids)

    def answers_frame(self) -> "pd.DataFrame":
        import pandas as pd

        return pd.DataFrame({"run_id": np.asarray(self.run_ids, dtype=object)[self.ans_run],
                             "qid": np.asarray(self.qids, dtype=object)[self.ans_topic]})

    # ----------------------------------------------------------------- scoring
    def family_weight(self, family: str) -> np.ndarray:
        """``f_i`` of every pair (``metaeval.measures.family_weight``; FAILED importance: in ``all`` only)."""
        vital, okay = self.imp == IMP_CODES["vital"], self.imp == IMP_CODES["okay"]
        return family_weight(family, vital, okay, np.ones(len(self.imp), dtype=bool))

    def denominators(self, family: str) -> np.ndarray:
        return np.bincount(self.ans, weights=self.family_weight(family), minlength=self.n_answers)

    def run_weights(self, family: str) -> np.ndarray:
        """omega_i = f_i / (D_answer * T_run): a run score is ``bincount(run, omega * credit)``."""
        d = self.denominators(family)
        t = np.bincount(self.ans_run, minlength=len(self.run_ids)).astype(float)
        f = self.family_weight(family)
        da = d[self.ans]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(da > 0, f / np.where(da > 0, da, 1.0) / np.maximum(t[self.ans_run[self.ans]], 1.0), 0.0)

    def pair_run(self) -> np.ndarray:
        return self.ans_run[self.ans]

    def answer_scores(self, strict: np.ndarray, partial: np.ndarray, metrics: Sequence[str] = METRICS) -> dict[str, np.ndarray]:
        """Per-answer scores from per-pair credits (arrays of length n, or (B, n) for B replicates)."""
        out = {}
        for m in metrics:
            family, is_strict = METRIC_SPEC[measure(m).name]
            f = self.family_weight(family)
            d = self.denominators(family)
            c = strict if is_strict else partial
            out[m] = _ratio(_bincount(self.ans, f * c, self.n_answers), d)
        return out

    def run_means(self, per_answer: np.ndarray) -> np.ndarray:
        """Run score = mean of per-answer scores over the run's answers (NaN for a run with no answer here)."""
        t = np.bincount(self.ans_run, minlength=len(self.run_ids)).astype(float)
        s = _bincount(self.ans_run, per_answer, len(self.run_ids))
        with np.errstate(invalid="ignore", divide="ignore"):
            return s / np.where(t > 0, t, np.nan)

    def observed_scores(self, metrics: Sequence[str] = METRICS) -> dict[str, np.ndarray]:
        """Per-answer scores of this set's own labels (FAILED = no credit)."""
        strict = (self.sup == 2).astype(float)
        partial = strict + PARTIAL_CREDIT * (self.sup == 1)
        return self.answer_scores(strict, partial, metrics)


def _bincount(idx: np.ndarray, w: np.ndarray, size: int) -> np.ndarray:
    w = np.asarray(w, dtype=float)
    if w.ndim == 1:
        return np.bincount(idx, weights=w, minlength=size)
    flat = w.reshape(-1, w.shape[-1])
    res = np.stack([np.bincount(idx, weights=row, minlength=size) for row in flat])
    return res.reshape(w.shape[:-1] + (size,))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def pairs_from_labelset(ls: "LabelSet", run_ids: Sequence[str] | None = None, qids: Sequence[str] | None = None) -> Pairs:
    """Flatten a label set (answers in ``ls.answers`` order; runs/topics sorted unless given)."""
    lab, answers = ls.labels, ls.answers
    run_ids = tuple(run_ids) if run_ids is not None else tuple(sorted(answers["run_id"].astype(str).unique()))
    qids = tuple(qids) if qids is not None else tuple(sorted(answers["qid"].astype(str).unique()))
    run_pos = {r: i for i, r in enumerate(run_ids)}
    q_pos = {q: i for i, q in enumerate(qids)}
    a_run = answers["run_id"].astype(str).map(run_pos)
    a_top = answers["qid"].astype(str).map(q_pos)
    ok = a_run.notna() & a_top.notna()
    answers = answers[ok.to_numpy()]
    a_run, a_top = a_run[ok].to_numpy(int), a_top[ok].to_numpy(int)
    ans = _answer_index(answers, lab)
    keep = ans >= 0
    lab = lab[keep]
    ans = ans[keep]
    if "response_length" in answers and answers["response_length"].notna().any():
        a_len = answers["response_length"].astype(float).to_numpy()
        if np.isnan(a_len).any():  # words of the answer text only where the length is missing
            words = answers["answer_text"].fillna("").str.split().str.len().to_numpy(float) if "answer_text" in answers else a_len
            a_len = np.where(np.isnan(a_len), words, a_len)
    else:
        a_len = answers.get("answer_text", answers["qid"]).fillna("").astype(str).str.split().str.len().to_numpy(float)
    imp = lab["importance"].astype(object).map(IMP_CODES).fillna(2).to_numpy(np.int8)
    nid = lab["nugget_id"].to_numpy(np.int64)
    per_topic = lab.groupby("qid", observed=True)["nugget_id"].transform("max").to_numpy(float) + 1.0
    return Pairs(
        ans=ans, imp=imp, sup=support_codes(lab["support"].astype(object).to_numpy()),
        nug_len=_word_counts(lab["nugget"]),
        pos=nid / np.maximum(per_topic, 1.0), nugget_id=nid,
        ans_run=a_run, ans_topic=a_top, ans_len=a_len, run_ids=run_ids, qids=qids,
    )


def _answer_index(answers: "pd.DataFrame", lab: "pd.DataFrame") -> np.ndarray:
    """Row of ``answers`` holding each label's (qid, run_id) (-1 when none; the last row when repeated, as a
    dict built over the rows would give), via shared integer codes and a stable sort."""
    import pandas as pd

    na = len(answers)
    q, _ = pd.factorize(np.concatenate([answers["qid"].astype(str).to_numpy(dtype=object),
                                        lab["qid"].astype(str).to_numpy(dtype=object)]))
    r, r_uni = pd.factorize(np.concatenate([answers["run_id"].astype(str).to_numpy(dtype=object),
                                            lab["run_id"].astype(str).to_numpy(dtype=object)]))
    key = q.astype(np.int64) * max(len(r_uni), 1) + r
    akey, lkey = key[:na], key[na:]
    if not na:
        return np.full(len(lkey), -1, dtype=np.int64)
    order = np.argsort(akey, kind="stable")
    sk = akey[order]
    pos = np.searchsorted(sk, lkey, side="right") - 1
    pc = np.maximum(pos, 0)
    return np.where((pos >= 0) & (sk[pc] == lkey), order[pc], -1).astype(np.int64)


def _word_counts(texts: "pd.Series") -> np.ndarray:
    """Whitespace-separated words of each text (missing = 0), computed once per distinct text."""
    import pandas as pd

    codes, uniq = pd.factorize(texts.fillna("").astype(str))
    counts = np.array([len(str(u).split()) for u in uniq], dtype=float)
    return counts[codes] if len(codes) else np.zeros(0)
