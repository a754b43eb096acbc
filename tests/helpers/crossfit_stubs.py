"""Hand-made cross-fitting results (``FoldResult`` / ``Prediction``) for testing the calibration decision directly."""

from __future__ import annotations

from typing import Sequence

import numpy as np

METRIC = "v_strict"


def pred(est: Sequence[float], half: Sequence[float] | float | None = None):
    """A ``Prediction`` with point estimates ``est`` and, when ``half`` is given, the interval ``est +- half``."""
    from metaeval.calibration.crossfit import Prediction

    est = np.asarray(est, dtype=float)
    if half is None:
        nan = np.full_like(est, np.nan)
        return Prediction(est=est, lo=nan, hi=nan, se=nan)
    half = np.broadcast_to(np.asarray(half, dtype=float), est.shape)
    return Prediction(est=est, lo=est - half, hi=est + half, se=half / 2)


def fold(preds: dict, truth: Sequence[float], topics: Sequence[int], *, repeat: int = 0, nested: str | None = None):
    """One outer fold: ``preds`` maps candidate name -> ``Prediction`` for :data:`METRIC`."""
    from metaeval.calibration.crossfit import FoldResult

    truth = np.asarray(truth, dtype=float)
    fr = FoldResult(fold=0, topics=np.asarray(topics), truth={METRIC: truth}, n_topics={METRIC: np.ones_like(truth)},
                    preds={k: {METRIC: v} for k, v in preds.items()}, repeat=repeat)
    if nested is not None:
        fr.nested_choice = {METRIC: nested}
    return fr


def errors_fold(errors: dict[str, float], runs: int = 3, **kw):
    """A fold where candidate ``name`` is off by ``errors[name]`` on every run (its fold MAE is that value)."""
    truth = np.full(runs, 0.5)
    return fold({k: pred(truth + e) for k, e in errors.items()}, truth, [0], **kw)


def _old_procedure() -> bool:
    import metaeval.calibration.crossfit as cf
    import metaeval.study.calibration.selection as sel

    return hasattr(sel, "decide") and hasattr(cf, "FoldResult") and hasattr(cf, "repeated_crossfit")


#: tests of the repeated-cross-fitting decision (``decide``, ``FoldResult``, ``repeated_crossfit``), which l30a's
#: calibration procedure replaced after these tests were written (issue 35); they run only where that code exists
#: and must be rewritten for the new procedure
OLD_PROCEDURE_ONLY = __import__("pytest").mark.skipif(
    not _old_procedure(), reason="the repeated-cross-fitting decision was replaced by l30a's calibration procedure: "
                                 "test to be rewritten for it (issue 35 follow-up)")
