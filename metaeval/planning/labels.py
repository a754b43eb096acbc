"""Label-level inputs of planning: judge vote fractions per (topic, run, nugget) label, the reference label of
the same nugget (paired by normalised nugget text, never by position), and the expected human score of every
answer given the judge's labels.

Expected human score.  With ``P[j, h] = P(human = h | judge = j)`` (the "reverse" confusion, estimated from
the labelled topics with a pseudo-count prior) and judge vote fractions ``v_i`` (one-hot for a single hard
label), nugget ``i`` has ``q_i(h) = sum_j v_ij P[j, h]``.  With credits ``c(h)`` (strict: 0, 0, 1; partial:
0, 0.5, 1) and family weights ``f_i`` (V: vital; A: all; W: 1 vital, 0.5 okay), treating nuggets as
independent given the judge's labels::

    E[H_a | J] = sum_i f_i E_q[c] / D_a,     Var[H_a | J] = sum_i f_i^2 Var_q[c] / D_a^2,     D_a = sum_i f_i

With ``P = I`` the same formulas give the judge's own soft score (``E``) and its self-disagreement (``Var``).
The families and credits are each measure's (``metaeval.measures``).  Scoring follows ``metaeval.scoring``'s default policy: a FAILED support vote is not_support (no credit, in the
denominator); a nugget with FAILED importance counts in A, not in V, and has weight 0 in W.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from metaeval.errors import ConfigError
from metaeval.measures import PARTIAL_CREDIT, family_weight, measure
from metaeval.types import support_codes

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

#: strict? -> credit of each support code (not_support, partial_support, support)
CREDIT = {True: np.array([0.0, 0.0, 1.0]), False: np.array([0.0, PARTIAL_CREDIT, 1.0])}


@dataclass(frozen=True)
class LabelArrays:
    """Judge label rows as arrays: ``votes`` (n, 3) fractions over not_support/partial/support (FAILED votes
    count as not_support), ``human`` (n,) paired reference code (-1: none or FAILED), ``imp`` (n,) importance
    strings, answer keys ``topic``/``run`` (indices into ``qids``/``runs``)."""

    votes: np.ndarray
    human: np.ndarray
    imp: np.ndarray
    topic: np.ndarray
    run: np.ndarray
    qids: tuple[str, ...]
    runs: tuple[str, ...]

    def weights(self, metric: str) -> np.ndarray:
        """``f_i`` of every label for ``metric``'s family (``metaeval.measures.family_weight``)."""
        vital, okay = self.imp == "vital", self.imp == "okay"
        return family_weight(measure(metric).family, vital, okay, np.ones(len(self.imp), dtype=bool))


def votes_from_codes(codes: np.ndarray) -> np.ndarray:
    """(k, n) support codes (-1 FAILED) -> (n, 3) vote fractions (FAILED counted as not_support)."""
    codes = np.atleast_2d(np.asarray(codes))
    c = np.where(codes < 0, 0, codes)
    return np.stack([(c == v).mean(0) for v in range(3)], axis=1)


def label_arrays(judge: "LabelSet", qids: Sequence[str], runs: Sequence[str], reference: "LabelSet | None" = None,
                 votes: np.ndarray | None = None) -> LabelArrays:
    """Arrays for the judge's labels on ``qids`` x ``runs``; ``votes`` (n, 3) aligned with ``judge.labels`` rows
    (default: one-hot of the judge's labels); the reference code is joined on (qid, run_id, normalised text)."""
    import pandas as pd

    from metaeval.calibration.pairing import normalise_text

    lab = judge.labels
    if votes is None:
        votes = votes_from_codes(support_codes(lab["support"].astype(object).to_numpy()))
    if len(votes) != len(lab):
        raise ConfigError(f"votes have {len(votes)} rows; judge {judge.name} has {len(lab)} labels")
    qpos = {q: i for i, q in enumerate(qids)}
    rpos = {r: i for i, r in enumerate(runs)}
    t = lab["qid"].map(qpos)
    r = lab["run_id"].map(rpos)
    keep = (t.notna() & r.notna()).to_numpy()
    human = np.full(len(lab), -1, dtype=np.int64)
    if reference is not None:
        key = lambda df: df["qid"].astype(str) + "\x1f" + df["run_id"].astype(str) + "\x1f" + df["nugget"].map(normalise_text)
        ref = pd.Series(support_codes(reference.labels["support"].astype(object).to_numpy()), index=key(reference.labels))
        ref = ref[~ref.index.duplicated(keep="first")]
        human = key(lab).map(ref).fillna(-1).to_numpy().astype(np.int64)
    return LabelArrays(votes=np.asarray(votes, dtype=float)[keep], human=human[keep],
                       imp=lab["importance"].astype(object).to_numpy()[keep],
                       topic=t.to_numpy()[keep].astype(np.int64), run=r.to_numpy()[keep].astype(np.int64),
                       qids=tuple(qids), runs=tuple(runs))


def reverse_confusion(arr: LabelArrays, topics: np.ndarray | None = None, prior: float = 0.5) -> tuple[np.ndarray, int]:
    """``P[j, h] = P(human h | judge j)`` from the paired labels on ``topics`` (hard judge label = most-voted),
    with ``prior`` pseudo-counts per cell (a judge class never seen gets a uniform row); returns (P, pairs used)."""
    ok = arr.human >= 0
    if topics is not None:
        ok &= np.isin(arr.topic, topics)
    counts = np.full((3, 3), float(prior))
    j = arr.votes[ok].argmax(1)
    np.add.at(counts, (j, arr.human[ok]), 1.0)
    tot = counts.sum(1, keepdims=True)
    return np.where(tot > 0, counts / np.where(tot > 0, tot, 1.0), 1.0 / 3.0), int(ok.sum())


def expected_scores(arr: LabelArrays, metric: str, P: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(E, V): (topic x run) expected score and its variance given the judge's votes (module docstring);
    ``P=None`` means the identity (the judge's soft score and self-disagreement).  No answer -> NaN."""
    c = CREDIT[measure(metric).strict]  # an unknown name: one ConfigError naming the nearest measure
    q = arr.votes if P is None else arr.votes @ np.asarray(P, dtype=float)
    e = q @ c
    v = np.maximum(q @ (c ** 2) - e ** 2, 0.0)
    f = arr.weights(metric)
    nt, nr = len(arr.qids), len(arr.runs)
    cell = arr.topic * nr + arr.run
    present = np.bincount(cell, minlength=nt * nr) > 0
    d = np.bincount(cell, weights=f, minlength=nt * nr)
    num = np.bincount(cell, weights=f * e, minlength=nt * nr)
    var = np.bincount(cell, weights=f ** 2 * v, minlength=nt * nr)
    with np.errstate(invalid="ignore", divide="ignore"):
        E = np.where(d > 0, num / np.where(d > 0, d, 1.0), 0.0)
        V = np.where(d > 0, var / np.where(d > 0, d, 1.0) ** 2, 0.0)
    E, V = np.where(present, E, np.nan), np.where(present, V, np.nan)
    return E.reshape(nt, nr), V.reshape(nt, nr)
