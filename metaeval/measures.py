"""The nugget measures as values: one :class:`Metric` per measure, and :func:`measure` to look one up by any name.

Every layer asks this registry (the way ``ir_measures`` names its measures) instead of keeping its own list:
the canonical name is the DataFrame column and the key in every stored file, the display name is what tables and
reports print, the nuggetizer name is castorini/nuggetizer's metrics-file field.  Any of the three spellings, in
any case, names the same measure: ``measure("V_strict") is measure("v_strict") is measure("strict_vital_score")``.

For one answer with nuggets ``i`` labelled ``s_i`` in {support, partial_support, not_support} and importance
``m_i`` in {vital, okay} (Pradeep et al., "The Great Nugget Recall", 2025, section 4.4; castorini/nuggetizer)::

    score = sum_i f_i c_i / sum_i f_i          (0 when the denominator is 0)

with the credit ``c_i`` strict ``1[s_i = support]`` or partial ``1[s_i = support] + 0.5 * 1[s_i = partial_support]``
and the family weight ``f_i``: ``vital`` ``1[m_i = vital]`` (V, V_strict), ``all`` ``1`` (A, A_strict), ``weighted``
``1`` vital, ``0.5`` okay (W, W_strict).  A FAILED support label has no credit and stays in the denominator; a
nugget with FAILED importance counts in A, not in V, and has weight 0 in W (nuggetizer's behaviour; the scoring
policies of :mod:`metaeval.scoring` change these).  A run's score is the mean of its per-answer scores over topics::

    name      display   nuggetizer field        family    credit   per answer
    v_strict  V_strict  strict_vital_score      vital     strict   supported vital / vital (primary, TREC 2024 RAG)
    a_strict  A_strict  strict_all_score        all       strict   supported / all nuggets
    v         V         vital_score             vital     partial  (supported + 0.5 partial) vital / vital
    a         A         all_score               all       partial  (supported + 0.5 partial) / all nuggets
    w_strict  W_strict  strict_weighted_score   weighted  strict   sum of weights of supported / sum of weights
    w         W         weighted_score          weighted  partial  weighted partial credit / sum of weights

Every measure is better when higher.  The primary metric of a study is the first of ``analysis.metrics``
(:attr:`metaeval.study.settings.AnalysisSettings.primary_metric`); :data:`DEFAULT_PRIMARY` is its default.
Adding a measure: one :class:`Metric` in :data:`REGISTRY` (its family and credit say how it is scored).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from metaeval.errors import ConfigError

__all__ = ["DEFAULT_PRIMARY", "FAMILIES", "METRICS", "OKAY_WEIGHT", "PARTIAL_CREDIT", "REGISTRY", "Metric",
           "answer_score", "canonical_metrics", "display_name", "family_weight", "find_measure", "measure",
           "normalize_metric"]

#: credit of a ``partial_support`` label in the partial-credit measures (V, A, W)
PARTIAL_CREDIT = 0.5
#: weight of an ``okay`` nugget in the weighted measures (W, W_strict); vital nuggets weigh 1
OKAY_WEIGHT = 0.5
#: the nugget families a measure averages over (which nuggets count, with what weight)
FAMILIES: tuple[str, ...] = ("vital", "all", "weighted")


def family_weight(family: str, vital: Any, okay: Any, member: Any = True, okay_weight: float = OKAY_WEIGHT) -> Any:
    """``f_i`` of each nugget for a family, from boolean ``vital`` / ``okay`` flags (scalars or numpy arrays):
    ``vital`` -> ``1[vital]``, ``all`` -> ``1[member]`` (every nugget unless a scoring policy excludes it),
    ``weighted`` -> ``1[vital] + okay_weight * 1[okay]`` (a FAILED importance is neither: weight 0)."""
    if family == "vital":
        return vital * 1.0
    if family == "all":
        return member * 1.0
    if family == "weighted":
        return vital * 1.0 + okay * okay_weight
    raise ConfigError(f"nugget family {family!r}; expected one of {', '.join(FAMILIES)}")


def answer_score(support: Sequence[str], importance: Sequence[str], family: str, strict: bool) -> float:
    """``sum_i f_i c_i / sum_i f_i`` for one answer's labels (0 when the denominator is 0), under nuggetizer's
    defaults (FAILED support: no credit, in the denominator; FAILED importance: in A, not in V, weight 0 in W).
    The reference definition of every measure; :func:`metaeval.scoring.score_answers` computes the same for
    whole label sets (a test checks they agree)."""
    if len(support) != len(importance):
        raise ConfigError(f"{len(support)} support labels but {len(importance)} importance labels")
    num = den = 0.0
    for s, m in zip(support, importance):
        f = family_weight(family, m == "vital", m == "okay")
        c = float(s == "support") + (0.0 if strict else PARTIAL_CREDIT * (s == "partial_support"))
        num += f * c
        den += f
    return num / den if den > 0 else 0.0


def v_strict(support: Sequence[str], importance: Sequence[str]) -> float:
    """V_strict = sum_{i vital} 1[s_i = support] / N_vital: the share of an answer's vital nuggets it fully supports
    (the primary metric of the TREC 2024 RAG track; Pradeep et al. 2025, section 4.4; nuggetizer's
    ``strict_vital_score``)."""
    return answer_score(support, importance, "vital", True)


def a_strict(support: Sequence[str], importance: Sequence[str]) -> float:
    """A_strict = sum_i 1[s_i = support] / N: the share of all an answer's nuggets it fully supports
    (Pradeep et al. 2025; nuggetizer's ``strict_all_score``)."""
    return answer_score(support, importance, "all", True)


def v(support: Sequence[str], importance: Sequence[str]) -> float:
    """V = sum_{i vital} (1[s_i = support] + 0.5 * 1[s_i = partial_support]) / N_vital: vital nuggets with half
    credit for partial support (Pradeep et al. 2025; nuggetizer's ``vital_score``)."""
    return answer_score(support, importance, "vital", False)


def a(support: Sequence[str], importance: Sequence[str]) -> float:
    """A = sum_i (1[s_i = support] + 0.5 * 1[s_i = partial_support]) / N: all nuggets with half credit for partial
    support (Pradeep et al. 2025; nuggetizer's ``all_score``)."""
    return answer_score(support, importance, "all", False)


def w_strict(support: Sequence[str], importance: Sequence[str]) -> float:
    """W_strict = sum_i w_i 1[s_i = support] / sum_i w_i with w = 1 vital, 0.5 okay: supported nuggets weighted
    by importance (castorini/nuggetizer's ``strict_weighted_score``)."""
    return answer_score(support, importance, "weighted", True)


def w(support: Sequence[str], importance: Sequence[str]) -> float:
    """W = sum_i w_i (1[s_i = support] + 0.5 * 1[s_i = partial_support]) / sum_i w_i with w = 1 vital, 0.5 okay
    (castorini/nuggetizer's ``weighted_score``)."""
    return answer_score(support, importance, "weighted", False)


@dataclass(frozen=True)
class Metric:
    """One nugget measure.  ``name``: canonical (DataFrame column, stored files); ``display``: tables and reports;
    ``nuggetizer``: castorini/nuggetizer's metrics-file field; ``family`` / ``strict``: which nuggets count and
    whether partial support earns credit; ``formula``: the per-answer definition (its docstring gives the formula
    and reference); ``latex``: the name in LaTeX tables."""

    name: str
    display: str
    nuggetizer: str
    family: str
    strict: bool
    formula: Callable[[Sequence[str], Sequence[str]], float]
    latex: str
    higher_is_better: bool = True

    @property
    def aliases(self) -> tuple[str, ...]:
        """Every spelling that names this measure (compared case-insensitively)."""
        return (self.name, self.display, self.nuggetizer)

    @property
    def description(self) -> str:
        """The formula line of the per-answer function's docstring."""
        return (self.formula.__doc__ or "").strip().split(":")[0].replace("\n", " ")

    @property
    def count_column(self) -> str:
        """The ``score_answers`` count whose 0 means this measure's denominator was empty (its score defaulted)."""
        return "n_vital" if self.family == "vital" else "n_nuggets"

    def score(self, support: Sequence[str], importance: Sequence[str]) -> float:
        """The measure of one answer from its labels (see ``formula``)."""
        return self.formula(support, importance)

    def __str__(self) -> str:
        return self.name


#: every measure the package scores, in the order studies list them (the first is the default primary metric)
REGISTRY: tuple[Metric, ...] = (
    Metric("v_strict", "V_strict", "strict_vital_score", "vital", True, v_strict, "$V_{\\mathrm{strict}}$"),
    Metric("a_strict", "A_strict", "strict_all_score", "all", True, a_strict, "$A_{\\mathrm{strict}}$"),
    Metric("v", "V", "vital_score", "vital", False, v, "$V$"),
    Metric("a", "A", "all_score", "all", False, a, "$A$"),
    Metric("w_strict", "W_strict", "strict_weighted_score", "weighted", True, w_strict, "$W_{\\mathrm{strict}}$"),
    Metric("w", "W", "weighted_score", "weighted", False, w, "$W$"),
)
#: canonical names in registry order
METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY)
#: the primary metric when a study names none: V_strict, the TREC 2024 RAG track's primary metric
DEFAULT_PRIMARY = "v_strict"
_BY_ALIAS: dict[str, Metric] = {alias.lower(): m for m in REGISTRY for alias in m.aliases}


def find_measure(name: Any) -> Metric | None:
    """The measure named ``name`` under any alias (any case), or None for a name that is not a nugget measure."""
    if isinstance(name, Metric):
        return name
    return _BY_ALIAS.get(str(name).strip().lower()) if isinstance(name, str) else None


def measure(name: "str | Metric", what: str = "metric") -> Metric:
    """The measure named ``name`` (any alias, any case, surrounding spaces ignored).  An unknown name is a
    ``ConfigError`` naming the nearest valid name and every valid one; ``what`` says where the name came from
    (``"--metric"``, ``"analysis.metrics"``)."""
    found = find_measure(name)
    if found is not None:
        return found
    text = str(name).strip().lower() if isinstance(name, str) else repr(name)
    near = difflib.get_close_matches(text, list(_BY_ALIAS), n=1, cutoff=0.5)
    hint = f"; did you mean {_BY_ALIAS[near[0]].display}?" if near else ""
    raise ConfigError(f"{what} {name!r}: not a nugget measure{hint} (expected one of "
                      f"{', '.join(m.display for m in REGISTRY)}, any case, or nuggetizer's field names)")


def canonical_metrics(names: Iterable["str | Metric"], what: str = "metric") -> list[str]:
    """Canonical names of ``names`` in their order (each checked by :func:`measure`)."""
    return [measure(n, what).name for n in names]


def normalize_metric(name: str) -> str:
    """The canonical name of a nugget measure under any alias (``V_strict``, ``strict_vital_score`` -> ``v_strict``);
    any other name (``ndcg_cut_10`` from a score table) comes back lower-cased and stripped, so every comparison of
    metric names is case-insensitive."""
    found = find_measure(name)
    return found.name if found is not None else str(name).strip().lower()


def display_name(name: str) -> str:
    """The display name of a nugget measure (``v_strict`` -> ``V_strict``); any other name as given."""
    found = find_measure(name)
    return found.display if found is not None else str(name)
