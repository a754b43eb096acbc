"""Simulated judges (core module, used by ``judges/replay.py`` and the calibration simulation harness).

Confusion-matrix judges: relabel a human label set through a confusion matrix.

A simulated judge draws, independently for every (nugget, answer) pair with human label ``h``, a judge label
``j ~ Categorical(C[h, :])`` where ``C`` is a 3x3 row-stochastic matrix ``C[h, j] = P(judge = j | human = h)``
over ``SUPPORT_ORDER`` (not_support, partial_support, support).  Count matrices are row-normalised first.
FAILED human labels stay FAILED.  The default matrix is the paper's Figure 6 (AutoNuggets+Edits, GPT-4o
AutoAssign vs NIST ManualAssign; Pradeep et al. 2025), row-normalised.

Labels are handled as integer codes (0, 1, 2; -1 = FAILED) so that many replications can be drawn at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from metaeval.errors import ConfigError
from metaeval.types import SUPPORT_ORDER, support_codes, support_labels

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

DEFAULT_CONFUSION = "paper-fig6-edits"
#: Label codes live in ``metaeval.types`` (one place); these names stay for callers of the simulation API.
labels_to_codes = support_codes
codes_to_labels = support_labels


def row_stochastic(confusion: Any) -> np.ndarray:
    """Validate a 3x3 confusion (counts or probabilities, rows = reference label) and row-normalise it."""
    m = np.asarray(confusion, dtype=float)
    if m.shape != (3, 3):
        raise ConfigError(f"confusion matrix must be 3x3 (rows/columns {', '.join(SUPPORT_ORDER)}), got shape {m.shape}")
    if not np.all(np.isfinite(m)) or (m < 0).any():
        raise ConfigError("confusion matrix entries must be finite and non-negative")
    sums = m.sum(axis=1, keepdims=True)
    if (sums <= 0).any():
        raise ConfigError("every confusion-matrix row needs a positive total")
    return m / sums


def resolve_confusion(spec: Any = DEFAULT_CONFUSION) -> np.ndarray:
    """A row-stochastic matrix from a paper name (``paper-fig6-edits``, ``paper-fig6-manual``), a JSON file
    (a 3x3 list, or an object with ``confusion`` / ``counts`` / ``matrix``), or an array-like."""
    from metaeval.paper import FIG6_COUNTS, fig6_confusion

    if isinstance(spec, str):
        if spec in FIG6_COUNTS:
            return fig6_confusion(spec, normalize=True)
        import json
        import os

        if not os.path.exists(spec):
            raise ConfigError(f"confusion {spec!r}: not a known name ({', '.join(FIG6_COUNTS)}) and no such file")
        with open(spec, encoding="utf-8") as fh:
            try:
                obj = json.load(fh)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{spec}: line {exc.lineno}: not valid JSON ({exc.msg})") from exc
        if isinstance(obj, dict):
            for key in ("confusion", "counts", "matrix", "row_normalized", "normalized"):
                if key in obj:
                    obj = obj[key]
                    break
            else:
                raise ConfigError(f"{spec}: expected a 3x3 list or an object with field 'confusion' / 'counts' / 'matrix'")
        return row_stochastic(obj)
    return row_stochastic(spec)


def simulate_codes(codes: np.ndarray, confusion: Any, rng: np.random.Generator, reps: int | None = None) -> np.ndarray:
    """Draw judge codes for human codes (``-1`` stays ``-1``); shape ``codes.shape`` or ``(reps, n)``."""
    cum = np.cumsum(row_stochastic(confusion), axis=1)
    cum[:, -1] = 1.0 + 1e-12  # guard against rounding so every draw lands in a class
    codes = np.asarray(codes, dtype=np.int64)
    valid = codes >= 0
    shape = codes.shape if reps is None else (reps,) + codes.shape
    u = rng.random(shape)
    thresholds = cum[np.where(valid, codes, 0)]  # (n, 3)
    out = (u[..., None] >= thresholds[..., :2]).sum(axis=-1).astype(np.int8)
    out[..., ~valid] = -1
    return out


def simulate_support(labels: np.ndarray, confusion: Any, rng: np.random.Generator) -> np.ndarray:
    """Simulated judge labels (object array of strings) for human support labels; FAILED stays FAILED.

    ``confusion``: 3x3, rows = reference (human) label in order not_support, partial_support, support;
    counts or row-stochastic.  Each pair is drawn independently from its row.
    """
    return codes_to_labels(simulate_codes(labels_to_codes(labels), confusion, rng))


def simulate_judge(human: "LabelSet", confusion: Any = None, seed: int | np.random.Generator = 0, name: str = "simulated") -> "LabelSet":
    """A synthetic judge ``LabelSet``: same rows as ``human``, support relabelled through ``confusion``
    (default: paper Figure 6, AutoNuggets+Edits, row-normalised).  ``seed``: the judge's seed (its draws are
    ``random_streams.judge_stream(seed)``), or a generator the caller drew from its own stream."""
    from metaeval.random_streams import judge_stream

    conf = resolve_confusion(DEFAULT_CONFUSION if confusion is None else confusion)
    rng = seed if isinstance(seed, np.random.Generator) else judge_stream(seed)
    new = simulate_support(human.labels["support"].astype(object).to_numpy(), conf, rng)
    prov = {"simulated_from": human.name, "confusion": conf.round(6).tolist(),
            "seed": None if isinstance(seed, np.random.Generator) else seed}
    return human.with_labels(new, name=name, provenance=prov)


# --------------------------------------------------------------------------- judges that break the assumptions
#: Judge kinds of the simulation study (issue 12): ``fig6`` draws every pair independently from one confusion
#: matrix (exactly what the label-level methods assume); the others add structure that a single matrix cannot
#: describe.
JUDGE_KINDS: tuple[str, ...] = ("fig6", "run_bias", "topic_difficulty", "length_strictness", "resampled")


def _shifted_rows(confusion: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Per-item confusion rows moved toward a stricter (shift > 0) or more lenient (shift < 0) judge.

    For a shift ``s`` the judge-label distribution of each human row is re-weighted on the logit scale by
    ``exp(-s * k)`` for judge label ``k`` = 0, 1, 2 (not_support, partial, support) and renormalised, so
    ``s = 0`` gives back ``confusion``.  ``shift`` has one value per item; returns (n, 3, 3).
    """
    k = np.arange(3.0)
    w = confusion[None, :, :] * np.exp(-np.asarray(shift, dtype=float)[:, None, None] * k[None, None, :])
    return w / w.sum(axis=2, keepdims=True)


def simulate_codes_itemwise(codes: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw one judge code per pair from its own confusion ``rows`` (n, 3, 3); ``-1`` (FAILED) stays ``-1``."""
    codes = np.asarray(codes, dtype=np.int64)
    valid = codes >= 0
    p = rows[np.arange(len(codes)), np.where(valid, codes, 0)]  # (n, 3)
    cum = np.cumsum(p, axis=1)
    cum[:, -1] = 1.0 + 1e-12
    u = rng.random(len(codes))
    out = (u[:, None] >= cum[:, :2]).sum(axis=1).astype(np.int8)
    out[~valid] = -1
    return out


def simulate_structured(codes: np.ndarray, pair_run: np.ndarray, pair_topic: np.ndarray, pair_answer_len: np.ndarray,
                        kind: str, rng: np.random.Generator, confusion: Any = DEFAULT_CONFUSION,
                        strength: float = 1.0) -> np.ndarray:
    """Judge codes for human ``codes`` from a judge of ``kind`` (one of ``JUDGE_KINDS`` except ``resampled``).

    * ``fig6``: independent draws from ``confusion`` (default: the paper's Figure 6);
    * ``run_bias``: each run gets a strictness shift ``s_r ~ N(0, (0.8 strength)^2)`` drawn per replication: the
      judge favours some systems (the per-run bias a pooled confusion cannot see);
    * ``topic_difficulty``: each topic gets ``s_t ~ N(0, (0.8 strength)^2)``: the judge is stricter on hard
      topics, so errors are correlated within a topic;
    * ``length_strictness``: ``s = 1.2 strength * z(log answer length)``: longer answers are judged more strictly
      (correlated with the systems that write long answers).
    """
    conf = resolve_confusion(confusion)
    if kind == "fig6":
        return simulate_codes(codes, conf, rng)
    if kind == "run_bias":
        s_run = rng.normal(0.0, 0.8 * strength, int(pair_run.max(initial=-1)) + 1)
        shift = s_run[pair_run]
    elif kind == "topic_difficulty":
        s_top = rng.normal(0.0, 0.8 * strength, int(pair_topic.max(initial=-1)) + 1)
        shift = s_top[pair_topic]
    elif kind == "length_strictness":
        x = np.log1p(np.asarray(pair_answer_len, dtype=float))
        sd = x.std()
        shift = 1.2 * strength * ((x - x.mean()) / sd if sd > 0 else np.zeros_like(x))
    else:
        raise ConfigError(f"judge kind {kind!r}; expected one of {', '.join(JUDGE_KINDS)}")
    return simulate_codes_itemwise(codes, _shifted_rows(conf, shift), rng)

