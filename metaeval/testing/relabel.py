"""A deterministic judge-like relabelling of a label set, for tests and benchmarks.

Row ``i`` gets ``h_i = (i * 2654435761 mod 1000) / 1000`` (Knuth's multiplicative hash) and its support label
moves by fixed rules: support -> partial_support when ``h < 0.35``, -> not_support when ``0.35 <= h < 0.45``;
not_support -> partial_support when ``h < 0.12``, -> support when ``0.12 <= h < 0.17``; partial_support ->
not_support when ``h < 0.4``, -> support when ``h >= 0.7``.  Like an LLM judge it is stricter than the reference
(support often becomes partial), and on the NIST file its taus land near the paper's (about 0.8 / 0.6 / 0.6).
No randomness, so exact values can be asserted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet


def judge_like(labels: "LabelSet", name: str = "judge", shift: int = 0) -> "LabelSet":
    """The relabelling above; ``shift`` k moves the row hash to ``h_i = ((i + 7919 k) * 2654435761 mod 1000) /
    1000``, a different judge with the same rules (k = 0: the rows as documented)."""
    import numpy as np

    sup = labels.labels["support"].astype(str).to_numpy()
    h = ((np.arange(len(sup)) + 7919 * shift) * 2654435761 % 1000) / 1000.0
    out = sup.copy()
    out[(sup == "support") & (h < 0.35)] = "partial_support"
    out[(sup == "support") & (h >= 0.35) & (h < 0.45)] = "not_support"
    out[(sup == "not_support") & (h < 0.12)] = "partial_support"
    out[(sup == "not_support") & (h >= 0.12) & (h < 0.17)] = "support"
    out[(sup == "partial_support") & (h < 0.4)] = "not_support"
    out[(sup == "partial_support") & (h >= 0.7)] = "support"
    return labels.with_labels(out, name=name)
