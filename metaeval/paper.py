"""Published figures of Pradeep et al. (2025), "The Great Nugget Recall" (arXiv:2504.15068).

Numbers only, transcribed from the paper's Table 4, Figures 4-5 and Figure 6, so that the default simulated
judge and the paper-replication experiments work without the shared data folder.  ``tests`` check every value
against ``../shared/data/paper/great-nugget-recall.json``.
"""

from __future__ import annotations

from metaeval.types import SUPPORT_ORDER

#: Label order of the confusion matrices (rows = human ManualAssign, columns = LLM AutoAssign): the library's
#: one support order, ``metaeval.types.SUPPORT_ORDER``.
FIG6_ORDER: tuple[str, ...] = SUPPORT_ORDER

#: Figure 6 confusion counts, rows = human label, columns = GPT-4o AutoAssign label.
FIG6_COUNTS: dict[str, list[list[int]]] = {
    # AutoNuggets+Edits nuggets, 36 topics
    "paper-fig6-edits": [[10625, 1732, 553], [700, 541, 223], [745, 1893, 5300]],
    # ManualNuggets, 20 topics
    "paper-fig6-manual": [[6512, 863, 216], [154, 173, 90], [308, 1091, 2662]],
}

TABLE4_COLUMNS: tuple[str, ...] = (
    "topics", "nuggets_per_topic", "nugget_len_tokens", "pct_vital", "pct_okay",
    "pct_not_support", "pct_partial_support", "pct_support",
)
TABLE4: dict[str, list[float]] = {
    "1a_autonuggets_edits__manualassign": [36, 14.1, 7.0, 61.1, 38.9, 57.9, 6.6, 35.6],
    "1b_manualnuggets__manualassign": [20, 13.7, 8.5, 59.0, 41.0, 62.9, 3.5, 33.6],
    "2a_autonuggets__autoassign_on_1a": [36, 18.2, 6.8, 66.2, 33.8, 50.9, 22.0, 27.0],
    "2b_autonuggets__autoassign_on_1b": [20, 18.7, 7.2, 70.3, 29.7, 47.1, 24.9, 28.0],
    "3a_autonuggets_edits__autoassign": [36, 14.1, 7.0, 61.1, 38.9, 54.1, 18.7, 27.2],
    "3b_manualnuggets__autoassign": [20, 13.7, 8.5, 59.0, 41.0, 57.8, 17.6, 24.6],
    "4_autonuggets__autoassign_all": [301, 18.7, 6.8, 72.5, 27.5, 50.9, 23.6, 25.5],
}

#: Kendall's tau (run level, per-topic average, all topic/run pairs) for the paper's four comparisons.
KENDALL_TAU: dict[str, dict[str, list[float]]] = {
    "C1_auto_auto_vs_edits_manual": {"V_strict": [0.887, 0.490, 0.328], "A_strict": [0.901, 0.539, 0.378]},
    "C2_auto_auto_vs_manual_manual": {"V_strict": [0.727, 0.360, 0.297], "A_strict": [0.758, 0.424, 0.438]},
    "C3_edits_auto_vs_edits_manual": {"V_strict": [0.883, 0.662, 0.599], "A_strict": [0.915, 0.699, 0.645]},
    "C4_manual_auto_vs_manual_manual": {"V_strict": [0.761, 0.648, 0.610], "A_strict": [0.802, 0.631, 0.672]},
}


def fig6_confusion(name: str = "paper-fig6-edits", normalize: bool = False):
    """Figure 6 counts as a 3x3 numpy array (rows human, columns LLM, order ``FIG6_ORDER``);
    ``normalize=True`` gives row-normalised P(LLM label | human label)."""
    import numpy as np

    if name not in FIG6_COUNTS:
        from metaeval.errors import ConfigError

        raise ConfigError(f"unknown confusion {name!r}; expected one of {', '.join(FIG6_COUNTS)} or a file")
    m = np.asarray(FIG6_COUNTS[name], dtype=float)
    return m / m.sum(axis=1, keepdims=True) if normalize else m
