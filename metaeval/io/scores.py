"""Score tables: per-answer wide tables and the long table ``run_id, qid, metric, value``.

File type follows the extension: ``.csv``, ``.tsv``, ``.parquet``, ``.jsonl`` (``.gz`` allowed for text).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from metaeval.errors import FormatError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

LONG_COLUMNS = ("run_id", "qid", "metric", "value")


def _kind(path: str) -> str:
    p = path.lower().removesuffix(".gz")
    for ext in (".csv", ".tsv", ".parquet", ".jsonl", ".json"):
        if p.endswith(ext):
            return ext.lstrip(".")
    raise FormatError(path, 0, "", "unknown table type; use a .csv, .tsv, .parquet or .jsonl extension")


def read_table(path: str | os.PathLike) -> "pd.DataFrame":
    """Read a table by extension; ``run_id`` and ``qid`` are always strings."""
    import pandas as pd

    path = str(path)
    if not Path(path).exists():
        raise FormatError(path, 0, "", "no such file")
    kind = _kind(path)
    try:
        if kind == "parquet":
            df = pd.read_parquet(path)
        elif kind in ("jsonl", "json"):
            df = pd.read_json(path, lines=True, dtype={"qid": str, "run_id": str})
        else:
            df = pd.read_csv(path, sep="\t" if kind == "tsv" else ",", dtype={"qid": str, "run_id": str},
                             encoding="utf-8-sig")  # a byte-order mark (Excel's "CSV UTF-8") is not part of a name
    except (ValueError, pd.errors.ParserError) as exc:
        raise FormatError(path, 0, "", f"cannot parse {kind} table: {exc}") from None
    if df.empty:
        raise FormatError(path, 0, "", "empty table")
    for col in ("run_id", "qid"):
        if col in df.columns:
            df[col] = df[col].astype(str)
    return df


def write_table(df: "pd.DataFrame", path: str | os.PathLike) -> None:
    """Write a table by extension (atomic: written to a temporary name, then renamed)."""
    from metaeval.io.atomic import temp_beside
    from metaeval.io.outputs import OutputError, os_error_line

    path = Path(path)
    kind = _kind(str(path))
    # a unique temporary name per writer (two processes writing one table never share it), renamed over the target
    fd, name = temp_beside(path)
    os.close(fd)
    tmp = Path(name)
    gz = str(path).endswith(".gz")
    try:
        if kind == "parquet":
            df.to_parquet(tmp, index=False)
        elif kind in ("jsonl", "json"):
            df.to_json(tmp, orient="records", lines=True, force_ascii=False, double_precision=15, compression="gzip" if gz else None)
        else:
            df.to_csv(tmp, index=False, sep="\t" if kind == "tsv" else ",", compression="gzip" if gz else None)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise OutputError(os_error_line(exc, path)) from None
        raise


def _is_nuggetizer_metrics(path: str) -> bool:
    """True when the first record has ``qid`` and ``*_score`` fields and no ``run_id`` (a nuggetizer metrics file)."""
    import json

    from metaeval.io.jsonl import iter_lines

    lines = iter_lines(path)
    try:
        first = next((ln for _, ln in lines if ln.strip()), "")
    except FormatError:
        return False
    finally:
        lines.close()
    try:
        obj = json.loads(first)
    except ValueError:
        return False
    return isinstance(obj, dict) and "qid" in obj and "run_id" not in obj and any(k.endswith("_score") for k in obj)


def read_score_table(path: str | os.PathLike) -> "pd.DataFrame":
    """Read a long score table (``run_id, qid, metric, value``), a per-answer wide table (``run_id, qid`` plus
    one column per metric, as ``metaeval score`` writes) or a castorini/nuggetizer metrics file (one run, named
    after the file) and return the long form.

    Raises ``FormatError`` naming the missing column, or the first row whose value is not a number.
    """
    import pandas as pd

    path = str(path)
    if _kind(path) in ("jsonl", "json") and _is_nuggetizer_metrics(path):  # castorini/nuggetizer's metrics file
        from metaeval.io.metrics import read_metrics_long

        return read_metrics_long(path)
    df = read_table(path)
    for col in ("run_id", "qid"):
        if col not in df.columns:
            raise FormatError(path, 0, col, f"missing column (columns are {', '.join(map(str, df.columns))})")
    if "metric" in df.columns and "value" in df.columns:
        long = df[list(LONG_COLUMNS)].copy()
    else:
        value_cols = [c for c in df.columns if c not in ("run_id", "qid") and not c.startswith("n_") and pd.api.types.is_numeric_dtype(df[c])]
        if not value_cols:
            raise FormatError(path, 0, "metric", "no numeric metric columns and no metric/value columns")
        long = df.melt(id_vars=["run_id", "qid"], value_vars=value_cols, var_name="metric", value_name="value")
    values = pd.to_numeric(long["value"], errors="coerce")
    bad = values.isna() & long["value"].notna()
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise FormatError(path, i + 2, "value", f"not a number: {long['value'].iloc[i]!r}")
    long["value"] = values
    dup = long.duplicated(["run_id", "qid", "metric"])
    if dup.any():
        i = int(dup.to_numpy().nonzero()[0][0])
        r = long.iloc[i]
        raise FormatError(path, i + 2, "run_id/qid/metric", f"duplicate row for ({r.run_id}, {r.qid}, {r.metric})")
    return long.reset_index(drop=True)
