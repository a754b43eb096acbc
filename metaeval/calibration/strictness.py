"""Where is the judge stricter than the human assessors?  Models of label shift with effect sizes and CIs.

For every (nugget, answer) pair labelled by both sides (FAILED on either side dropped) let
``shift = rank(judge) - rank(human)`` on the ordinal scale not_support < partial_support < support
(-2..2) and ``stricter = 1[judge < human]``.  Covariates: vital (vs okay), standardised log answer length,
run, topic.

* ``logit``: ``stricter ~ vital + log_length`` (statsmodels ``Logit``), odds ratios with topic-cluster-robust
  (sandwich) standard errors, since pairs within a topic share nuggets and assessors;
* ``ols``: ``shift ~ vital + log_length``, mean shift differences with topic-cluster-robust SEs;
* **small-sample cluster correction** for every cluster-robust fit: statsmodels' ``cov_type="cluster"`` with
  its default correction ``G/(G-1) * (N-1)/(N-K)`` (CR1; Cameron & Miller 2015, "A practitioner's guide to
  cluster-robust inference", J. Human Resources 50:317-372) and ``use_t=True``, i.e. t tests and intervals with
  ``G - 1`` degrees of freedom (``G`` topics) instead of z - with the 8 to 21 topics of a typical comparison
  the normal approximation is too narrow;
* ``conditional``: the logit and OLS again with ``C(human)``, i.e. effects *given the human label* - the
  marginal fits confound judge behaviour with where the human ``support`` labels are (see ``_conditional``);
* ``mixedlm`` (beside the cluster-robust fits, not instead of them): ``shift ~ vital + log_length`` with a random
  intercept per topic, and separately per run (``statsmodels.formula.api.mixedlm``, REML); the intraclass
  correlations say how much of the shift varies between topics / runs (crossed topic x run effects were too slow
  to fit in statsmodels for routine use).  Its coefficient SEs are **model-based** (they hold only if the random
  intercept is the whole of the within-topic dependence) and are labelled so; on NIST with a lexical judge the
  mixedlm SE of ``vital`` was 0.018 (p 5e-14) against 0.062 cluster-robust (p 0.13) - effects are read from
  ``ols`` / ``logit``;
* ``index``: the strictness index ``P(judge < human) - P(judge > human)`` per stratum (all, importance,
  answer-length tertile, run, topic) from ``metaeval.analysis.confusion.strictness_index`` (i.i.d. Wald CI),
  plus a topic-clustered CI: with ``s_i = 1[j < h] - 1[j > h]`` and ``d = mean(s)``,
  ``SE = sqrt(G / (G - 1)) * sqrt(sum_t (sum_{i in t} (s_i - d))^2) / n`` (Liang & Zeger 1986 sandwich for a
  mean with the CR1 factor; equals statsmodels ``OLS(s ~ 1)`` with ``cov_type="cluster"``) and the interval
  ``d +- t_{G-1, 1-alpha/2} SE`` clipped to [-1, 1].  A stratum inside one topic (``G = 1``, the per-topic
  strata) has no between-topic information: its interval is a **within-topic bootstrap over answers**
  (answers of the topic resampled with replacement, all pairs of an answer together, percentile interval of
  ``B`` replicates; :mod:`metaeval.analysis.resample` on the stream ``"analysis.answer_bootstrap"``), or n/a (NaN) with fewer than two answers - never a zero-width interval.

Marginal-homogeneity tests (Stuart-Maxwell) live in ``metaeval.analysis``.
"""

from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from metaeval.calibration.pairing import align_pairs
from metaeval.calibration.pairs import IMP_CODES
from metaeval.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.types import LabelSet

log = logging.getLogger(__name__)
#: random stream of the within-topic bootstrap over answers (``random_streams.stream(seed, ANSWER_BOOTSTRAP)``)
ANSWER_BOOTSTRAP = "analysis.answer_bootstrap"


def shift_frame(human: "LabelSet", judge: "LabelSet") -> "pd.DataFrame":
    """One row per doubly-labelled pair: qid, run_id, human, judge (ranks), shift, stricter, vital, log_length_z."""
    import pandas as pd

    jp, h = align_pairs(human, judge)
    ok = (h >= 0) & (jp.sup >= 0) & (jp.imp != IMP_CODES["FAILED"])
    if ok.sum() < 10:
        raise ConfigError(f"only {int(ok.sum())} (nugget, answer) pairs carry valid human and judge labels")
    loglen = np.log1p(np.nan_to_num(jp.ans_len[jp.ans]))[ok]
    lab = pd.DataFrame({
        "qid": np.asarray(jp.qids, dtype=object)[jp.ans_topic[jp.ans]][ok],
        "run_id": np.asarray(jp.run_ids, dtype=object)[jp.pair_run()][ok],
        "human": h[ok].astype(int), "judge": jp.sup[ok].astype(int),
        "vital": (jp.imp[ok] == IMP_CODES["vital"]).astype(float),
        "log_length_z": (loglen - loglen.mean()) / (loglen.std() or 1.0),
        "length": jp.ans_len[jp.ans][ok],
    })
    lab["shift"] = lab["judge"] - lab["human"]
    lab["stricter"] = (lab["shift"] < 0).astype(float)
    return lab


def clustered_index(df: "pd.DataFrame", alpha: float = 0.05, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Strictness index with the analysis package's Wald CI and a topic-clustered (CR1, t(G-1)) CI; for a
    stratum within one topic a within-topic bootstrap over answers (see the module docstring)."""
    from scipy.special import stdtrit

    from metaeval.analysis.confusion import strictness_index
    from metaeval.analysis.resample import percentile_ci, ratio_replicates, topic_weights

    m = np.zeros((3, 3))
    np.add.at(m, (df["human"].to_numpy(), df["judge"].to_numpy()), 1)
    out = strictness_index(m, alpha)
    s = np.sign(df["human"].to_numpy() - df["judge"].to_numpy()).astype(float)
    n = len(s)
    d = s.mean()
    codes = df["qid"].astype("category").cat.codes.to_numpy()
    g = int(len(np.unique(codes)))
    nan2 = [float("nan"), float("nan")]
    out.update({"n": int(n), "n_topics": g})
    if g >= 2:
        per = np.bincount(codes, weights=s - d)
        se = float(np.sqrt(g / (g - 1)) * np.sqrt((per ** 2).sum()) / n)
        crit = float(stdtrit(g - 1, 1 - alpha / 2))
        out.update({"se_cluster": se, "df": g - 1, "t_crit": crit,
                    "ci_cluster": [max(-1.0, d - crit * se), min(1.0, d + crit * se)],
                    "ci_method": "topic-clustered, CR1 G/(G-1), t(G-1)"})
        return out
    answers = df["run_id"].astype("category").cat.codes.to_numpy()
    k = int(answers.max()) + 1 if n else 0
    out.update({"se_cluster": float("nan"), "df": None, "t_crit": None})
    if k < 2 or n_boot <= 0:
        out.update({"ci_cluster": nan2, "ci_method": "n/a: one topic and fewer than two answers"})
        return out
    tot = np.bincount(answers, weights=s, minlength=k)
    cnt = np.bincount(answers, minlength=k).astype(float)
    w = topic_weights(k, n_boot, seed, ANSWER_BOOTSTRAP)  # the one resampler, over the topic's answers
    reps = ratio_replicates(tot, cnt, w)
    out.update({"ci_cluster": list(percentile_ci(reps, alpha)), "se_cluster": float(np.std(reps, ddof=1)),
                "ci_method": f"within-topic bootstrap over {k} answers (percentile, {n_boot} replicates)"})
    return out


def _coef_table(res: Any, transform=None, alpha: float = 0.05) -> list[dict[str, Any]]:
    ci = np.asarray(res.conf_int(alpha))
    rows = []
    for i, name in enumerate(res.params.index):
        est, lo, hi = float(res.params.iloc[i]), float(ci[i, 0]), float(ci[i, 1])
        row = {"term": name, "coef": est, "se": float(res.bse.iloc[i]), "ci": [lo, hi], "p": float(res.pvalues.iloc[i])}
        if transform is not None:
            row["effect"] = float(transform(est))
            row["effect_ci"] = [float(transform(lo)), float(transform(hi))]
        rows.append(row)
    return rows


def _conditional(df: "pd.DataFrame", formula: str, smf: Any) -> dict[str, Any]:
    """The same effects *given the human label* (``C(human)`` as a covariate).

    The marginal models above mix two things: how the judge behaves and how the human labels are distributed
    over the strata (vital nuggets and long answers carry more human ``support`` labels, which a judge can only
    mark down).  A judge that ignores importance and length - such as a simulated judge - shows marginal
    "effects" of both that vanish here.  The logit is fitted on pairs where being stricter is possible
    (human label above not_support).
    """
    out: dict[str, Any] = {}
    sub = df[df["human"] > 0]
    groups = sub["qid"].astype("category").cat.codes.to_numpy()
    hum = " + C(human)" if sub["human"].nunique() > 1 else ""
    if len(sub) >= 10 and sub["stricter"].nunique() > 1:
        try:
            fit = smf.logit(f"stricter ~ {formula}{hum}", sub).fit(disp=False, cov_type="cluster", cov_kwds={"groups": groups},
                                                                   use_t=True)
            out["logit"] = {"formula": f"stricter ~ {formula}{hum}", "pairs": "human label above not_support",
                            "effect": "odds ratio", "se": _SE, "coefficients": _coef_table(fit, np.exp)}
        except (np.linalg.LinAlgError, ValueError) as exc:  # e.g. perfect separation on small data
            out["logit"] = {"error": f"{type(exc).__name__}: {exc}"}
    groups = df["qid"].astype("category").cat.codes.to_numpy()
    hum = " + C(human)" if df["human"].nunique() > 1 else ""
    ols = smf.ols(f"shift ~ {formula}{hum}", df).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    out["ols"] = {"formula": f"shift ~ {formula}{hum}", "effect": "mean shift (label ranks) given the human label",
                  "se": _SE, "coefficients": _coef_table(ols)}
    return out


_SE = "cluster-robust by topic (CR1 small-sample correction, t with G-1 df)"
_SE_MIXED = ("model-based (REML random intercept), not cluster-robust: a variance decomposition beside the "
             "cluster-robust ols/logit, not for inference on the effects")


def strictness_models(human: "LabelSet", judge: "LabelSet", mixed: bool = True, alpha: float = 0.05,
                      n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Fit the strictness models and indices described in the module docstring; JSON-ready dict.

    ``alpha``: interval level ``1 - alpha``; ``n_boot`` / ``seed``: the within-topic bootstrap of strata that lie
    inside one topic (stream ``analysis.answer_bootstrap`` of ``seed``: the analysis seed, as ``metaeval calibrate
    --strictness`` passes ``--analysis-seed`` and the study ``analysis.seed``)."""
    import pandas as pd
    import statsmodels.formula.api as smf

    df = shift_frame(human, judge)
    groups = df["qid"].astype("category").cat.codes.to_numpy()
    robust = {"cov_type": "cluster", "cov_kwds": {"groups": groups}, "use_t": True}
    out: dict[str, Any] = {"n_pairs": int(len(df)), "n_topics": int(df["qid"].nunique()), "n_runs": int(df["run_id"].nunique()),
                           "mean_shift": float(df["shift"].mean()), "share_stricter": float(df["stricter"].mean()),
                           "share_more_lenient": float((df["shift"] > 0).mean())}
    formula = "vital + log_length_z" if df["vital"].std() > 0 else "log_length_z"
    if df["stricter"].nunique() > 1:
        logit = smf.logit(f"stricter ~ {formula}", df).fit(disp=False, **robust)
        out["logit"] = {"formula": f"stricter ~ {formula}", "effect": "odds ratio", "se": _SE,
                        "coefficients": _coef_table(logit, np.exp, alpha)}
    ols = smf.ols(f"shift ~ {formula}", df).fit(**robust)
    out["ols"] = {"formula": f"shift ~ {formula}", "effect": "mean shift (label ranks)", "se": _SE,
                  "coefficients": _coef_table(ols, alpha=alpha)}
    out["conditional"] = _conditional(df, formula, smf)
    out["inference"] = "ols / logit (cluster-robust by topic); mixedlm is shown beside them with model-based SEs"
    if mixed:
        out["mixedlm"] = {}
        for key, col in (("topic", "qid"), ("run", "run_id")):
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    mm = smf.mixedlm(f"shift ~ {formula}", df, groups=df[col]).fit(reml=True)
                fe = [r for r in _coef_table(mm) if r["term"] in mm.fe_params.index]
                out["mixedlm"][key] = {"formula": f"shift ~ {formula} + (1 | {key})", "se": _SE_MIXED,
                                       "coefficients": fe,
                                       f"{key}_variance": float(mm.cov_re.iloc[0, 0]), "residual_variance": float(mm.scale),
                                       "icc": float(mm.cov_re.iloc[0, 0] / (mm.cov_re.iloc[0, 0] + mm.scale)),
                                       "converged": bool(mm.converged),
                                       "warnings": sorted({type(w.message).__name__ for w in caught})}
            except (np.linalg.LinAlgError, ValueError) as exc:  # report, never hide
                out["mixedlm"][key] = {"error": f"{type(exc).__name__}: {exc}"}
    df["length_bin"] = pd.qcut(df["length"].rank(method="first"), 3, labels=["short", "medium", "long"])
    strata: dict[str, dict[str, Any]] = {"all": {"all": clustered_index(df, alpha, n_boot, seed)}}
    for col, key in (("vital", "importance"), ("length_bin", "answer_length"), ("run_id", "run"), ("qid", "topic")):
        strata[key] = {}
        for val, sub in df.groupby(col, observed=True):
            name = {1.0: "vital", 0.0: "okay"}.get(val, str(val)) if col == "vital" else str(val)
            strata[key][name] = clustered_index(sub, alpha, n_boot, seed)
    out["strictness_index"] = strata
    return out
