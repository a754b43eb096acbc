"""Synthetic judges: relabel a human label set through a confusion matrix.

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
from metaeval.types import SUPPORT_ORDER

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

DEFAULT_CONFUSION = "paper-fig6-edits"
_CODE = {name: i for i, name in enumerate(SUPPORT_ORDER)}
_NAMES = np.array(list(SUPPORT_ORDER) + ["FAILED"], dtype=object)  # index -1 -> FAILED


def labels_to_codes(labels: Any) -> np.ndarray:
    """Support label strings -> int8 codes 0/1/2 (SUPPORT_ORDER), -1 for FAILED or anything else."""
    arr = np.asarray(labels, dtype=object)
    out = np.full(arr.shape, -1, dtype=np.int8)
    for name, code in _CODE.items():
        out[arr == name] = code
    return out


def codes_to_labels(codes: np.ndarray) -> np.ndarray:
    """Inverse of ``labels_to_codes`` (object array of label strings)."""
    return _NAMES[np.asarray(codes, dtype=np.int64)]


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


def simulate_judge(human: "LabelSet", confusion: Any = None, seed: int | np.random.Generator | None = 0, name: str = "simulated") -> "LabelSet":
    """A synthetic judge ``LabelSet``: same rows as ``human``, support relabelled through ``confusion``
    (default: paper Figure 6, AutoNuggets+Edits, row-normalised)."""
    conf = resolve_confusion(DEFAULT_CONFUSION if confusion is None else confusion)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    new = simulate_support(human.labels["support"].astype(object).to_numpy(), conf, rng)
    prov = {"simulated_from": human.name, "confusion": conf.round(6).tolist(),
            "seed": None if isinstance(seed, np.random.Generator) else seed}
    return human.with_labels(new, name=name, provenance=prov)
