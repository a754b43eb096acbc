"""Descriptive statistics of a label set, as the columns of Table 4 of Pradeep et al. (2025).

For a :class:`~metaeval.types.LabelSet`:

* ``topics``: topics with at least one label; ``nuggets_per_topic``: distinct (qid, nugget_id) / topics;
* ``nugget_len_tokens``: mean length of the distinct nuggets in tokens, **tokens = whitespace split**
  (``len(text.split())``; the paper does not name its tokenizer, so small differences are expected);
* ``pct_vital`` / ``pct_okay``: over distinct nuggets whose importance is not FAILED (they sum to 100);
  ``pct_importance_failed``: FAILED importance among distinct nuggets;
* ``pct_not_support`` / ``pct_partial_support`` / ``pct_support``: over all (nugget, answer) assignment labels
  that are not FAILED (they sum to 100); ``pct_failed``: FAILED among all assignment labels;
* counts ``n_runs, n_answers, n_nuggets, n_labels, n_failed``.

:func:`label_mix` turns label counts into these percentages; the agreement code uses it for the margins of a
confusion matrix, so a published matrix gives the label mix of both of its sides.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from metaeval.types import IMPORTANCE_ORDER, SUPPORT_ORDER

TABLE4_COLUMNS: tuple[str, ...] = (
    "topics", "nuggets_per_topic", "nugget_len_tokens", "pct_vital", "pct_okay",
    "pct_not_support", "pct_partial_support", "pct_support",
)


def label_mix(counts: Mapping[str, float], exclude: tuple[str, ...] = ("FAILED",)) -> dict[str, float]:
    """Percent of each label among the labels not in ``exclude`` (NaN when there are none)."""
    total = float(sum(v for k, v in counts.items() if k not in exclude))
    return {k: (100.0 * float(v) / total if total else float("nan")) for k, v in counts.items() if k not in exclude}


def mix_columns(mix: Mapping[str, float]) -> dict[str, float]:
    """``{"support": 35.6, ...}`` -> ``{"pct_support": 35.6, ...}`` (Table 4 column names)."""
    return {f"pct_{k}": float(v) for k, v in mix.items()}


def tokens(text: str) -> int:
    """Token count used for nugget length: whitespace split."""
    return len(str(text).split())


def describe_labels(labels: Any) -> dict[str, Any]:
    """Table 4 statistics (plus counts and FAILED shares) of one LabelSet; see the module docstring."""
    lab = labels.labels
    nug = lab.drop_duplicates(["qid", "nugget_id"])
    topics = int(lab["qid"].nunique())
    imp = nug["importance"].astype(str).value_counts()
    sup = lab["support"].astype(str).value_counts()
    n_nug = int(len(nug))
    out: dict[str, Any] = {
        "name": labels.name,
        "topics": topics,
        "nuggets_per_topic": n_nug / topics if topics else float("nan"),
        "nugget_len_tokens": float(nug["nugget"].map(tokens).mean()) if n_nug else float("nan"),
    }
    out.update(mix_columns(label_mix({k: int(imp.get(k, 0)) for k in reversed(IMPORTANCE_ORDER)})))
    out.update(mix_columns(label_mix({k: int(sup.get(k, 0)) for k in SUPPORT_ORDER})))
    n_lab = int(len(lab))
    n_failed = int(sup.get("FAILED", 0))
    out.update({
        "pct_failed": 100.0 * n_failed / n_lab if n_lab else float("nan"),
        "pct_importance_failed": 100.0 * int(imp.get("FAILED", 0)) / n_nug if n_nug else float("nan"),
        "n_runs": int(lab["run_id"].nunique()),
        "n_answers": int(len(labels.answers)) if labels.answers is not None else int(lab[["qid", "run_id"]].drop_duplicates().shape[0]),
        "n_nuggets": n_nug,
        "n_labels": n_lab,
        "n_failed": n_failed,
        "tokenizer": "whitespace",
    })
    return out


def describe_many(label_sets: list[Any]) -> pd.DataFrame:
    """One row per label set (Table 4 layout first)."""
    rows = [describe_labels(ls) for ls in label_sets]
    df = pd.DataFrame(rows)
    first = ["name", *TABLE4_COLUMNS]
    return df[first + [c for c in df.columns if c not in first]]
