"""A sampled cell's self-consistency (``sweep.samples`` = k >= 2 draws of every assignment call; issue 16).

Computed once here from the cell's k label sets (draw 0 is the cell's labels) and written to
``cells/<cell>/consistency.json``; the summary and the report render it.  Formulas in
:mod:`metaeval.planning.consistency`:

* flip rate: per label, the chance that two different draws disagree, ``1 - sum_c n_c (n_c - 1) / (k (k - 1))``,
  averaged over the labels whose k draws all got a label (a FAILED draw - no reply, unparseable - says nothing
  about the judge's mind; those labels are counted and left out); plus the share of labels whose k draws are not
  unanimous;
* tau spread: Kendall tau-b of each draw's run means (``metric``, the study's primary metric) against the
  reference's, with its mean, sd and range over draws (the judge's own uncertainty, topics held fixed), beside the
  sd of tau over a topic bootstrap of draw 0 (the uncertainty from the topics, as in the analysis' CIs); without
  a reference only the tau between draws;
* soft vs hard predictions for score-level calibration (with a reference): PPI, PPI++ and regression calibration
  fitted on the judge's hard scores (draw 0), on the per-label majority vote and on the soft scores (the mean
  over draws = the score with credit equal to the vote share), each evaluated out of fold by topic (same splits for
  every variant; ``calibration.folds`` folds x ``repeats`` repeats), MAE of run means against the reference's
  with its topic-bootstrap SE (``se_bootstrap`` resamples of the topics, the whole cross-fitting redone on each;
  the SE over repeats on the same topics is kept as ``se_repeats`` - it misses the topics' own variation) and, for
  majority and soft, the paired difference to the hard draw with its topic-bootstrap SE (``diff_vs_first``,
  ``diff_se``);
  ``none`` is the raw judge.

Random streams (``metaeval.random_streams``), all from ``seed`` (the analysis seed in a study): the topic
bootstrap of the tau sd ``"analysis.topic_bootstrap"``, the folds ``"analysis.consistency_folds"``, the SE's
resamples ``"analysis.consistency_bootstrap"``.

Topics and runs: those the reference and draw 0 share (runs missing a topic are left out, counted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

SCHEMA = "metaeval.consistency/1"


def cell_consistency(samples: Sequence["LabelSet"], reference: "LabelSet | None", metric: str, *, bootstrap: int = 200,
                     folds: int = 5, repeats: int = 10, seed: int = 0, se_bootstrap: int = 100) -> dict[str, Any]:
    """The ``consistency.json`` dict of one cell's k draws (module docstring)."""
    from metaeval.io.jsonl import to_jsonable
    from metaeval.planning import consistency
    from metaeval.planning.matrices import common_runs, score_matrix
    from metaeval.measures import display_name

    k = len(samples)
    _, codes = consistency.sample_codes(samples)
    valid = codes >= 0
    complete = valid.all(0)  # labels whose k draws all got a label: a FAILED draw is not a flip of the judge's mind
    out: dict[str, Any] = {"schema": SCHEMA, "k": k, "metric": metric, "metric_name": display_name(metric),
                           "failed_draws": int((~valid).sum()), "draws": int(codes.size),
                           "labels_with_failed_draw": int((~complete).sum()), "seed": seed}
    if not complete.any():
        out["line"] = f"k={k}: no label has {k} usable draws ({out['failed_draws']} of {out['draws']} draws FAILED); no self-consistency figure"
        return to_jsonable(out)
    flips = consistency.flip_stats(codes[:, complete])
    out["flip"] = flips
    left = (f"; {out['labels_with_failed_draw']} label(s) with a FAILED draw left out of the flip rate"
            if out["labels_with_failed_draw"] else "")
    first = samples[0]
    if reference is None:
        runs = sorted(first.run_ids)
        qids = first.qids
        Js = np.stack([score_matrix(x, metric, qids, runs)[2] for x in samples])
        keep = np.isfinite(Js).all((0, 1))
        spread = consistency.tau_spread(Js[:, :, keep].mean(1), None)
        out.update(tau=spread, topics=len(qids), runs=int(keep.sum()), reference=None,
                   line=(f"k={k}: flip rate {flips['flip_rate']:.3f} per label ({flips['non_unanimous']:.1%} of labels not "
                         f"unanimous); tau between draws mean {spread['between_draws']['mean']:.3f} "
                         f"(min {spread['between_draws']['min']:.3f}) over {int(keep.sum())} runs, {len(qids)} topics; no reference{left}"))
        return to_jsonable(out)
    runs = common_runs(reference, first)
    qids = sorted(set(reference.qids) & set(first.qids))
    _, _, H = score_matrix(reference, metric, qids, runs)
    Js = np.stack([score_matrix(x, metric, qids, runs)[2] for x in samples])
    keep = np.isfinite(H).all(0) & np.isfinite(Js).all((0, 1))
    H, Js = H[:, keep], Js[:, :, keep]
    out.update(reference=reference.name, topics=len(qids), runs=int(keep.sum()), runs_left_out=int((~keep).sum()))
    if len(qids) < 2 or H.shape[1] < 2:
        out["line"] = (f"k={k}: flip rate {flips['flip_rate']:.3f} per label; {len(qids)} shared topic(s) and "
                       f"{H.shape[1]} run(s) are too few for tau or calibration{left}")
        return to_jsonable(out)
    spread = consistency.tau_spread(Js.mean(1), H.mean(0))
    boot_sd = consistency.topic_bootstrap_tau_sd(H, Js[0], int(bootstrap), seed) if bootstrap > 1 else None
    out.update(tau=spread, topic_bootstrap_tau_sd=boot_sd, bootstrap=int(bootstrap))
    votes = _majority(samples, codes)
    majority = score_matrix(votes, metric, qids, runs)[2][:, keep]
    f = min(int(folds), len(qids))
    if f >= 2:
        out["calibration"] = consistency.crossfit_calibration(
            H, {"hard (draw 0)": Js[0], "majority": majority, "soft (vote share)": Js.mean(0)},
            folds=f, repeats=int(repeats), seed=seed, n_boot=int(se_bootstrap))
        out["calibration"]["line"] = _calibration_line(out["calibration"])
    vr = spread["vs_reference"]
    out["line"] = (f"k={k}: flip rate {flips['flip_rate']:.3f} per label ({flips['non_unanimous']:.1%} of labels not "
                   f"unanimous); {out['metric_name']} run-level tau vs {reference.name} over draws {vr['mean']:.3f} "
                   f"(sd {vr['sd']:.3f}, range [{vr['min']:.3f}, {vr['max']:.3f}])"
                   + (f" vs topic-bootstrap sd {boot_sd:.3f} ({int(bootstrap)} resamples of draw 0;" if boot_sd is not None else " (")
                   + f" {H.shape[1]} runs, {len(qids)} topics){left}")
    return to_jsonable(out)


def _majority(samples: Sequence["LabelSet"], codes: np.ndarray) -> "LabelSet":
    """Draw 0's rows with the per-label majority vote (ties -> draw 0's label)."""
    from metaeval.types import support_labels

    counts = np.stack([(codes == c).sum(0) for c in (-1, 0, 1, 2)])
    maj = np.array([-1, 0, 1, 2])[counts.argmax(0)]
    tie = (counts == counts.max(0)).sum(0) > 1
    maj = np.where(tie, codes[0], maj)
    return samples[0].with_labels(support_labels(maj), name=f"{samples[0].name}~majority")


def _calibration_line(cal: dict[str, Any]) -> str:
    """Best method per variant by out-of-fold MAE, beside the raw judge (``none``)."""
    parts = []
    for name, res in cal["variants"].items():
        methods = {m: r for m, r in res.items() if isinstance(r, dict) and "mae" in r}
        best = min(methods, key=lambda m: methods[m]["mae"])
        b = methods[best]
        diff = (f" ({b['diff_vs_first']:+.4f} +- {b['diff_se']:.4f} vs {cal['first_variant']} on {best})"
                if b.get("diff_se") is not None else "")
        parts.append(f"{name}: raw {methods['none']['mae']:.4f}, best {best} {b['mae']:.4f}"
                     + (f" +- {b['se']:.4f}" if b.get("se") is not None else "") + diff)
    return (f"held-out run MAE ({cal['folds']} folds x {cal['repeats']} repeats, by topic; +- topic-bootstrap SE over "
            f"{cal.get('n_boot', 0)} resamples): " + "; ".join(parts))
