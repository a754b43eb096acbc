"""Pair judge and reference labels by nugget identity (topic, run, normalised nugget text), never by position.

A label-level calibration learns ``P(human label | judge label)`` from pairs of labels given to *the same
nugget in the same answer*.  Nugget ids are positions in a topic's list; two label sets built from different
nugget lists (the judge made its own nuggets, or an assessor edited them) share ids but not nuggets, so the
join key here is ``(qid, run_id, normalise(nugget text))`` with ``normalise`` = Unicode case-fold, whitespace
collapsed, surrounding punctuation stripped.

Coverage (reported beside every label-level figure)::

    coverage = matched / max(judge pairs, reference pairs)      on the answers both sides labelled

so a judge that labels the reference's own nuggets (human_auto) has coverage 1 and a judge with its own nuggets
(auto_auto) has coverage near 0.  Label-level methods run only when ``coverage >= min_coverage`` (default
0.95) and then only on matched pairs; otherwise they refuse with one line giving the counts.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from metaeval.calibration.pairs import Pairs, pairs_from_labelset
from metaeval.types import support_codes

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

DEFAULT_MIN_COVERAGE = 0.95
_STRIP = string.punctuation + string.whitespace


def normalise_text(text: Any) -> str:
    """Nugget identity key: case-folded, whitespace collapsed, leading/trailing punctuation removed."""
    return " ".join(str(text).casefold().split()).strip(_STRIP)


@dataclass(frozen=True)
class Pairing:
    """Judge pairs with the reference code of the same (qid, run_id, nugget text), and the counts."""

    judge: Pairs
    human: np.ndarray          # (n,) reference support code per judge pair; -1 = no matched pair or FAILED
    matched: int               # judge pairs whose nugget text has a reference label on the same answer
    judge_pairs: int           # judge pairs on answers the reference also holds
    reference_pairs: int       # reference pairs on answers the judge also holds
    duplicates: int            # judge pairs left unmatched because their text occurs twice in one answer

    @property
    def coverage(self) -> float:
        den = max(self.judge_pairs, self.reference_pairs)
        return self.matched / den if den else 0.0

    def summary(self, min_coverage: float = DEFAULT_MIN_COVERAGE) -> dict[str, Any]:
        ok = self.coverage >= min_coverage
        return {"key": "(qid, run_id, normalised nugget text)", "matched": self.matched,
                "judge_pairs": self.judge_pairs, "reference_pairs": self.reference_pairs,
                "duplicate_texts": self.duplicates, "coverage": round(self.coverage, 6),
                "min_coverage": min_coverage, "label_level": "ok" if ok else "refused",
                "refusal": None if ok else refusal_line(self, min_coverage)}


def refusal_line(p: Pairing, min_coverage: float) -> str:
    return (f"label-level methods refused: {p.matched} of {max(p.judge_pairs, p.reference_pairs)} label pairs match "
            f"by nugget text ({100 * p.coverage:.1f}% < {100 * min_coverage:.0f}%; judge {p.judge_pairs}, reference "
            f"{p.reference_pairs} pairs on shared answers); use a score-level method (ppi, ppi_pp, regression)")


def pair_by_text(reference: "LabelSet", judge: "LabelSet") -> Pairing:
    """Flatten ``judge`` (:func:`metaeval.calibration.pairs.pairs_from_labelset`; this module imports ``pairs``,
    never the other way round) and attach the reference
    support code of the same (qid, run_id, normalised nugget text).

    Vectorised: qids, run ids and normalised texts of both sides become shared integer codes (``normalise_text``
    runs once per distinct raw text), and the matching is done on the integer key
    ``(qid, run_id, text)`` with ``np.unique`` / ``searchsorted``.  A judge pair is *matched* when its key occurs
    exactly once among the judge's labels and exactly once among the reference's labels on shared answers;
    a key that occurs more than once on either side counts as a duplicate and stays unmatched
    (``test_pairing_vectorised_matches_reference_loop`` checks this against the plain dictionary loop)."""
    import pandas as pd

    jp = pairs_from_labelset(judge)
    # pairs_from_labelset keeps the label rows whose answer is in judge.answers, in order
    jl = judge.labels[_answer_mask(judge)]
    rl = reference.labels
    ra, ja = reference.answers, judge.answers
    nj, nr, nra = len(jl), len(rl), len(ra)

    def col(frames, name):
        return np.concatenate([f[name].astype(str).to_numpy(dtype=object) for f in frames]) if frames else np.array([], object)

    q_codes, _ = pd.factorize(col([jl, rl, ra, ja], "qid"))
    r_codes, r_uni = pd.factorize(col([jl, rl, ra, ja], "run_id"))
    raw_codes, raw_uni = pd.factorize(col([jl, rl], "nugget"))
    t_of_raw, _ = pd.factorize(np.array([normalise_text(t) for t in raw_uni], dtype=object))
    t_codes = t_of_raw[raw_codes] if len(raw_codes) else np.zeros(0, dtype=np.int64)
    n_r = max(len(r_uni), 1)
    n_t = int(t_of_raw.max()) + 1 if len(t_of_raw) else 1
    a_key = q_codes.astype(np.int64) * n_r + r_codes  # answer key for every row of jl, rl, ra, ja
    jl_a, rl_a = a_key[:nj], a_key[nj:nj + nr]
    ra_a, ja_a = a_key[nj + nr:nj + nr + nra], a_key[nj + nr + nra:]
    jl_k, rl_k = jl_a * n_t + t_codes[:nj], rl_a * n_t + t_codes[nj:]
    # reference labels on answers the judge also holds
    r_sh = np.isin(rl_a, ja_a)
    r_shared = int(r_sh.sum())
    rk = rl_k[r_sh]
    rc = support_codes(rl["support"].astype(object).to_numpy())[r_sh]
    uk, inv, r_cnt = np.unique(rk, return_inverse=True, return_counts=True)
    r_val = np.full(len(uk), -1, dtype=np.int64)
    r_val[inv] = rc  # only read where the key is unique, so which duplicate wins does not matter
    # judge labels: how often each key occurs (over all the judge's labels), and whether the answer is shared
    _, j_inv, j_cnt = np.unique(jl_k, return_inverse=True, return_counts=True)
    seen = j_cnt[j_inv]
    j_sh = np.isin(jl_a, ra_a)
    pos = np.searchsorted(uk, jl_k)
    pos_c = np.minimum(pos, max(len(uk) - 1, 0))
    found = j_sh & (pos < len(uk)) & (uk[pos_c] == jl_k if len(uk) else False)
    dup_m = found & ((seen > 1) | (r_cnt[pos_c] > 1 if len(uk) else False))
    match_m = found & ~dup_m
    human = np.full(nj, -1, dtype=np.int8)
    human[match_m] = r_val[pos_c[match_m]]
    return Pairing(jp, human, int(match_m.sum()), int(j_sh.sum()), r_shared, int(dup_m.sum()))


def align_pairs(human: "LabelSet", judge: "LabelSet") -> tuple[Pairs, np.ndarray]:
    """Judge pairs plus the human support code of the same (qid, run_id, normalised nugget *text*) (-1 where
    there is none or it is FAILED): :func:`pair_by_text`, never by position."""
    p = pair_by_text(human, judge)
    return p.judge, p.human


def _answer_mask(ls: "LabelSet") -> np.ndarray:
    """Which label rows belong to an answer listed in ``ls.answers`` (vectorised ``(qid, run_id) in answers``)."""
    import pandas as pd

    lab, ans = ls.labels, ls.answers
    if not len(lab):
        return np.zeros(0, dtype=bool)
    both = pd.MultiIndex.from_arrays([ans["qid"].astype(str), ans["run_id"].astype(str)])
    return pd.MultiIndex.from_arrays([lab["qid"].astype(str), lab["run_id"].astype(str)]).isin(both)


def nugget_set_hashes(ls: "LabelSet") -> dict[str, str]:
    """Per topic, sha256 (16 hex) of the sorted normalised nugget texts with their importance: a fitted
    calibration knows which nuggets it was fitted on."""
    out: dict[str, str] = {}
    nug = ls.nuggets()
    for qid, grp in nug.groupby("qid", sort=True):
        items = sorted(f"{normalise_text(t)}\x1f{imp}" for t, imp in zip(grp["nugget"].astype(str), grp["importance"].astype(str)))
        out[str(qid)] = hashlib.sha256("\x1e".join(items).encode()).hexdigest()[:16]
    return out
