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

from metaeval.simulation import labels_to_codes

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.calibration.pairs import Pairs
    from metaeval.types import LabelSet

DEFAULT_MIN_COVERAGE = 0.95
_STRIP = string.punctuation + string.whitespace


def normalise_text(text: Any) -> str:
    """Nugget identity key: case-folded, whitespace collapsed, leading/trailing punctuation removed."""
    return " ".join(str(text).casefold().split()).strip(_STRIP)


@dataclass(frozen=True)
class Pairing:
    """Judge pairs with the reference code of the same (qid, run_id, nugget text), and the counts."""

    judge: "Pairs"
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
    """Flatten ``judge`` (see :func:`metaeval.calibration.pairs.pairs_from_labelset`) and attach the reference
    support code of the same (qid, run_id, normalised nugget text)."""
    from metaeval.calibration.pairs import pairs_from_labelset

    jp = pairs_from_labelset(judge)
    jl = judge.labels
    # pairs_from_labelset keeps the label rows whose answer is in judge.answers, in order
    key_ok = _answer_mask(judge)
    jl = jl[key_ok]
    rl = reference.labels
    j_ans = list(zip(jl["qid"].astype(str), jl["run_id"].astype(str)))
    # shared answers: answers both sides hold (a judge that made no nuggets for an answer still answered it)
    r_ans = set(zip(reference.answers["qid"].astype(str), reference.answers["run_id"].astype(str)))
    j_ans_set = set(zip(judge.answers["qid"].astype(str), judge.answers["run_id"].astype(str)))
    j_text = [normalise_text(t) for t in jl["nugget"].astype(str)]
    r_keys: dict[tuple[str, str, str], int] = {}
    dup_r: set[tuple[str, str, str]] = set()
    r_codes = labels_to_codes(rl["support"].astype(object).to_numpy())
    r_shared = 0
    for q, r, t, c in zip(rl["qid"].astype(str), rl["run_id"].astype(str), rl["nugget"].astype(str), r_codes):
        if (q, r) not in j_ans_set:
            continue
        r_shared += 1
        k = (q, r, normalise_text(t))
        if k in r_keys:
            dup_r.add(k)
        r_keys[k] = int(c)
    seen: dict[tuple[str, str, str], int] = {}
    keys = [(q, r, t) for (q, r), t in zip(j_ans, j_text)]
    for k in keys:
        seen[k] = seen.get(k, 0) + 1
    human = np.full(len(keys), -1, dtype=np.int8)
    matched = dup = j_shared = 0
    for i, ((q, r), k) in enumerate(zip(j_ans, keys)):
        if (q, r) not in r_ans:
            continue
        j_shared += 1
        if k in r_keys:
            if seen[k] > 1 or k in dup_r:
                dup += 1
                continue
            matched += 1
            human[i] = r_keys[k]
    return Pairing(jp, human, matched, j_shared, r_shared, dup)


def _answer_mask(ls: "LabelSet") -> np.ndarray:
    ans = set(zip(ls.answers["qid"].astype(str), ls.answers["run_id"].astype(str)))
    return np.fromiter(((q, r) in ans for q, r in zip(ls.labels["qid"].astype(str), ls.labels["run_id"].astype(str))),
                       dtype=bool, count=len(ls.labels))


def nugget_set_hashes(ls: "LabelSet") -> dict[str, str]:
    """Per topic, sha256 (16 hex) of the sorted normalised nugget texts with their importance: a fitted
    calibration knows which nuggets it was fitted on."""
    out: dict[str, str] = {}
    nug = ls.nuggets()
    for qid, grp in nug.groupby("qid", sort=True):
        items = sorted(f"{normalise_text(t)}\x1f{imp}" for t, imp in zip(grp["nugget"].astype(str), grp["importance"].astype(str)))
        out[str(qid)] = hashlib.sha256("\x1e".join(items).encode()).hexdigest()[:16]
    return out
