"""castorini/nuggetizer per-topic metrics JSONL: one line per topic plus a final ``qid: "all"`` line::

    {"qid": str, "strict_vital_score": float, "vital_score": float, "strict_weighted_score": float,
     "weighted_score": float, "strict_all_score": float, "all_score": float}

Read into a per-answer-like table with metaeval's column names (``v_strict, v, w_strict, w, a_strict, a``); the
field of each measure is its ``nuggetizer`` alias in :mod:`metaeval.measures`.
"""

from __future__ import annotations

import os
from statistics import mean
from typing import TYPE_CHECKING

from metaeval.errors import FormatError
from metaeval.io.jsonl import iter_jsonl, require
from metaeval.measures import measure

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: the order in which nuggetizer's metrics files write the measures (a fact of the format)
FILE_ORDER: tuple[str, ...] = ("v_strict", "v", "w_strict", "w", "a_strict", "a")
#: nuggetizer field -> metaeval metric column, in the order the nuggetizer metrics files write them
NUGGETIZER_FIELDS: dict[str, str] = {measure(name).nuggetizer: name for name in FILE_ORDER}


def read_metrics(path: str | os.PathLike, run_id: str | None = None) -> "pd.DataFrame":
    """Per-topic rows (``run_id, qid`` + metric columns present in the file); the ``all`` line goes to
    ``df.attrs["all"]``.  ``run_id`` defaults to the file's stem."""
    import pandas as pd

    path = str(path)
    rows, overall = [], None
    for lineno, obj in iter_jsonl(path):
        qid = str(require(obj, "qid", (str, int), path, lineno))
        vals = {}
        for field, col in NUGGETIZER_FIELDS.items():
            if field in obj:
                vals[col] = float(require(obj, field, (int, float), path, lineno))
        if not vals:
            raise FormatError(path, lineno, "strict_vital_score", "no metric fields on this line")
        if qid == "all":
            overall = vals
        else:
            rows.append({"run_id": run_id or os.path.basename(path).split(".jsonl")[0], "qid": qid, **vals})
    df = pd.DataFrame(rows)
    df.attrs["all"] = overall
    return df


def read_metrics_long(path: str | os.PathLike, run_id: str | None = None) -> "pd.DataFrame":
    """A metrics file as the long score table ``run_id, qid, metric, value`` (without the ``all`` line), so it can
    stand wherever a score table is accepted (``metaeval analyze``)."""
    df = read_metrics(path, run_id=run_id)
    cols = [c for c in NUGGETIZER_FIELDS.values() if c in df.columns]
    return df.melt(id_vars=["run_id", "qid"], value_vars=cols, var_name="metric", value_name="value")


def metrics_records(per_answer: "pd.DataFrame"):
    """nuggetizer metrics records for one run: a line per answer in the table's order, then ``qid: "all"`` with the
    mean of each field over those answers (``statistics.mean``, as nuggetizer computes it)."""
    if per_answer["run_id"].nunique() > 1:
        from metaeval.errors import ConfigError

        raise ConfigError("nuggetizer metrics files hold one run; filter per_answer to a single run_id first")
    fields = {col: field for field, col in NUGGETIZER_FIELDS.items()}
    for r in per_answer.itertuples(index=False):
        yield {"qid": r.qid, **{fields[c]: float(getattr(r, c)) for c in fields}}
    yield {"qid": "all", **{fields[c]: mean(float(x) for x in per_answer[c]) for c in fields}}


def write_metrics(per_answer: "pd.DataFrame", path: str | os.PathLike) -> int:
    """Write one run's per-answer scores in nuggetizer's metrics format (``json.dumps`` defaults, as nuggetizer
    writes), ending with the ``all`` line (means)."""
    import json

    from metaeval.io.atomic import atomic_open

    n = 0
    with atomic_open(path, "w") as fh:
        for rec in metrics_records(per_answer):
            fh.write(json.dumps(rec) + "\n")
            n += 1
    return n
