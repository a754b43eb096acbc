"""Reuse of a previous study: a content hash of everything the study reads (every cell's labels, the reference,
the analysis/calibration/report settings and the package version).  When ``summary.json`` carries the same key and
the study's files are there, the previous figures are reused instead of recomputed."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from metaeval.errors import MetaevalError
from metaeval.layout import ResultsLayout
from metaeval.version import __version__
from metaeval.hashing import content_hash

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.study.records import Summary
    from metaeval.types import LabelSet

_COLUMNS = ["qid", "run_id", "nugget_id", "nugget", "importance", "support", "support_raw"]


def labels_digest(ls: "LabelSet") -> str:
    """Content hash of a label set's labels (row order included)."""
    import pandas as pd

    h = pd.util.hash_pandas_object(ls.labels[_COLUMNS].astype(str), index=False).to_numpy()
    return hashlib.sha256(h.tobytes()).hexdigest()[:24]


def study_key(label_sets: dict[str, "LabelSet"], reference: "LabelSet | None", settings: dict[str, Any],
              samples: dict[str, list["LabelSet"]] | None = None) -> str:
    parts: dict[str, Any] = {cid: labels_digest(ls) for cid, ls in sorted(label_sets.items())}
    if samples:  # sampled cells (sweep.samples): every draw counts; absent otherwise, so older keys still match
        parts["_samples"] = {cid: [labels_digest(ls) for ls in draws] for cid, draws in sorted(samples.items())}
    parts["_reference"] = labels_digest(reference) if reference is not None else None
    parts["_config"] = {k: settings.get(k) for k in ("analysis", "calibration", "report")}  # StudySettings.key_parts()
    parts["_version"] = __version__
    return content_hash(parts, 32)


def previous_summary(lay: ResultsLayout, key: str) -> "Summary | None":
    """The stored summary when its key is ``key`` and the study's own file exists, both readable as this
    metaeval's results schema (a file of an older schema is rewritten, not reused); else None."""
    from metaeval.study.records import read_study, read_summary

    if not lay.summary_json.exists() or not lay.study_json.exists():
        return None
    try:
        old = read_summary(lay)
        read_study(lay)
    except MetaevalError:
        return None
    return old if old.evaluation_key == key else None
