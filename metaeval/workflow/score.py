"""The scoring workflow of ``metaeval score`` and ``metaeval.score()`` / ``metaeval.leaderboard()``: per-answer
nugget scores (:func:`metaeval.scoring.score_answers`: A, A_strict, V, V_strict, W, W_strict) from assignment files
or label sets, nuggetizer metrics files taken as they are, the run leaderboard (:func:`metaeval.scoring.run_scores`:
mean over topics per run) and the files ``metaeval score`` writes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

#: suffixes that say "a file": a multi-run nuggetizer --out with one of them is refused, never made a folder
FILE_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".txt", ".gz", ".parquet")


@dataclass(frozen=True)
class Scored:
    """Per-answer scores of one or more inputs and what was read: ``n_labels`` assignment labels, of which
    ``n_problems`` had an unknown value (nuggetizer metrics files add answers, no labels)."""

    per_answer: Any
    n_labels: int = 0
    n_problems: int = 0


@dataclass(frozen=True)
class ScoreRun:
    """What ``metaeval score`` did: the per-answer scores, the leaderboard (``runs``) and what was read."""

    scored: Scored
    runs: Any


def scoring_policy(**options: Any) -> Any:
    """The :class:`~metaeval.scoring.ScoringPolicy` of ``options`` (``no_vital``, ``failed_support``,
    ``failed_importance``)."""
    from metaeval.scoring import ScoringPolicy

    return ScoringPolicy(**options)


def score_labels(labels: Any, policy: Any) -> Any:
    """Per-answer scores of a label set under a :class:`~metaeval.scoring.ScoringPolicy` (the API's ``score``)."""
    from metaeval.scoring import score_answers

    return score_answers(labels, policy)


def leaderboard(per_answer: Any, *, common_topics: bool = False) -> Any:
    """Runs ranked by their mean over topics (:func:`metaeval.scoring.run_scores`); ``common_topics``: only the
    topics every run answered."""
    from metaeval.scoring import run_scores

    return run_scores(per_answer, common_topics=common_topics)


def score_files(paths: Sequence[str], policy: Any, *, input_format: str | None = None) -> Scored:
    """The per-answer scores of assignment files (scored under ``policy``) and nuggetizer metrics files (as they
    are, ``n_failed`` 0), ``input_format`` or detected per file; an answer (run, topic) in two inputs is a
    :class:`~metaeval.errors.FormatError`."""
    import pandas as pd

    from metaeval.errors import FormatError
    from metaeval.io import detect_format, load_labels

    frames, n_problems, n_labels = [], 0, 0
    for path in paths:
        fmt = input_format or detect_format(path)
        if fmt == "metrics":
            from metaeval.io.metrics import read_metrics

            frames.append(read_metrics(path).assign(n_failed=0))
            continue
        labels = load_labels(path, format=fmt)
        frames.append(score_labels(labels, policy))
        n_problems += len(labels.problems)
        n_labels += len(labels.labels)
    per_answer = pd.concat(frames, ignore_index=True)
    dup = per_answer.duplicated(["run_id", "qid"])
    if dup.any():
        r = per_answer[dup].iloc[0]
        raise FormatError(", ".join(paths), 0, "qid/run_id", f"({r.qid}, {r.run_id}) appears in more than one input file")
    return Scored(per_answer, n_labels, n_problems)


def score_and_write(paths: Sequence[str], *, input_format: str | None = None, out: str | None = None,
                    out_format: str = "table", runs_out: str | None = None, common_topics: bool = False,
                    **policy: Any) -> ScoreRun:
    """``metaeval score``: :func:`score_files` under the :func:`scoring_policy` of ``policy`` (``no_vital``,
    ``failed_support``, ``failed_importance``), the per-answer table written to ``out`` (``out_format`` ``table``:
    by extension; ``nuggetizer``: its metrics JSONL, :func:`write_nuggetizer`), the leaderboard computed and written
    to ``runs_out``."""
    from metaeval.io.scores import write_table

    scored = score_files(paths, scoring_policy(**policy), input_format=input_format)
    if out and out_format == "nuggetizer":
        write_nuggetizer(scored.per_answer, out)  # names checked before the first file
    elif out:
        write_table(scored.per_answer, out)
    runs = leaderboard(scored.per_answer, common_topics=common_topics)
    if runs_out:
        write_table(runs, runs_out)
    return ScoreRun(scored, runs)


def nuggetizer_paths(run_ids: Any, out: str) -> dict[str, str]:
    """run_id -> the metrics file it is written to, every name checked before anything is written.

    One run: ``out`` is the metrics file (or a folder holding ``<run_id>.jsonl``).  Several runs: ``out`` is a
    folder with one ``<run_id>.jsonl`` per run; a name that looks like a file (``metrics.jsonl``) is refused rather
    than silently made a folder.  A run id is used as a file name as it is (TREC ids such as
    ``cohere+post_processing`` hold '+'), unless it cannot be one (``/``, NUL, ``.``/``..``, a leading ``-`` or
    ``.``, over 200 bytes): then ``ConfigError`` naming it, before any file is written."""
    from metaeval.errors import ConfigError
    from metaeval.io.outputs import check_output

    runs = list(dict.fromkeys(run_ids))
    if len(runs) == 1 and not os.path.isdir(out):
        check_output(out, kind="file")
        return {runs[0]: out}
    if not os.path.isdir(out) and out.lower().endswith(FILE_SUFFIXES):
        raise ConfigError(f"--out {out}: {len(runs)} runs are written one <run_id>.jsonl per run into a folder, but "
                          f"{out!r} names a file; give a folder (e.g. --out {out.rsplit('.', 1)[0]}/) or score one run")
    check_output(out, kind="dir")
    paths: dict[str, str] = {}
    for run_id in runs:
        name = str(run_id)
        if (not name or "/" in name or "\x00" in name or name in (".", "..") or name[0] in "-."
                or len(os.fsencode(name)) > 200):
            raise ConfigError(f"run_id {name[:80]!r} cannot be a file name in {out} (a '/', NUL, leading '.' or "
                              "'-', or over 200 bytes); nothing was written")
        paths[run_id] = os.path.join(out, f"{name}.jsonl")
    return paths


def write_nuggetizer(per_answer: Any, out: str) -> None:
    """One run: ``out`` is the metrics file.  Several runs: ``out`` is a folder with ``<run_id>.jsonl`` per run
    (every name checked by :func:`nuggetizer_paths` before the first file is written)."""
    from metaeval.io.metrics import write_metrics

    paths = nuggetizer_paths(per_answer["run_id"], out)
    if len(paths) == 1 and next(iter(paths.values())) == out:
        write_metrics(per_answer, out)
        return
    for run_id, path in paths.items():
        write_metrics(per_answer[per_answer["run_id"] == run_id], path)
