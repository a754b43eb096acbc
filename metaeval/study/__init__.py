"""The study: label sets plus the reference -> every figure the summary and the report show, computed once.

A sweep (``metaeval.pipeline``) stops at one label set per grid cell.  :func:`run_study` turns those, with the
reference label set, into files under the results folder (paths from ``metaeval.layout``):

* ``cells/<cell>/labels.jsonl``, ``scores.csv``, ``runs.csv`` - per-answer and per-run scores (``metaeval.scoring``);
* ``analysis/`` - every cell against the reference (``metaeval.analysis.analyze``: tau at three levels with the
  topic bootstrap, run-pair flips, label agreement and strictness, descriptive statistics);
* ``cells/<cell>/calibration.json`` - ``metaeval.study.calibration_workflow.calibrate_study`` for cells whose judge labels
  the reference's own nuggets;
* ``study/study.json`` - per-topic tau, leaderboards and the topics where judge and reference disagree most;
  ``study/reference_scores.csv`` / ``reference_runs.csv`` - the reference's scores;
* ``summary.json`` / ``summary.md``.

Each cell's own share of these figures is computed as one task (``metaeval.study.fanout``; ``study.workers``: in
this process, in forked workers, or as Ray tasks when the sweep's Ray runtime is up); the driver writes the files
and compares the cells' natural neighbours from the replicates the tasks returned.

The report (``metaeval.report``) only renders these files.  One bootstrap setting (``analysis.bootstrap``) and one
seed (``analysis.seed``) drive every resampled figure.  When nothing the study reads has changed (content hash of
the label sets, the reference and the settings), the previous study is reused as it is.
"""

from __future__ import annotations

from typing import Any


def run_study(*args: Any, **kwargs: Any):
    """See :func:`metaeval.study.run.run_study`."""
    from metaeval.study.run import run_study as _run

    return _run(*args, **kwargs)


def study_sweep(*args: Any, **kwargs: Any):
    """See :func:`metaeval.study.run.study_sweep`."""
    from metaeval.study.run import study_sweep as _run

    return _run(*args, **kwargs)


__all__ = ["run_study", "study_sweep"]
