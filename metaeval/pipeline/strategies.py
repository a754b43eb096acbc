"""Evaluation strategies (Pradeep et al. 2025, section 4.3): which stages a judge performs.

=========================  ========  ==========  ==========  =======================================================
strategy                   nuggets   importance  assignment  paper condition
=========================  ========  ==========  ==========  =======================================================
``auto_auto``              judge     judge       judge       AutoNuggets / AutoAssign (fully automatic)
``human_auto``             human     human       judge       AutoNuggets+Edits or ManualNuggets / AutoAssign
``human_judge_importance`` human     judge       judge       isolates the importance stage
``human_human``            human     human       human       the reference (ManualNuggets / ManualAssign)
=========================  ========  ==========  ==========  =======================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from metaeval.errors import ConfigError


@dataclass(frozen=True)
class Strategy:
    name: str
    nuggets: str  # "judge" | "human"
    importance: str
    assignment: str
    description: str = ""

    @property
    def judge_stages(self) -> tuple[str, ...]:
        """The stages the judge performs, in pipeline order."""
        out = []
        if self.nuggets == "judge":
            out.append("create")
        if self.importance == "judge":
            out.append("importance")
        if self.assignment == "judge":
            out.append("assign")
        return tuple(out)


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("auto_auto", "judge", "judge", "judge", "judge creates nuggets, labels importance and assigns"),
        Strategy("human_auto", "human", "human", "judge", "human nuggets and importance, judge assigns"),
        Strategy("human_judge_importance", "human", "judge", "judge", "human nuggets, judge importance and assignment"),
        Strategy("human_human", "human", "human", "human", "the human reference labels"),
    )
}


def get_strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ConfigError(f"unknown strategy {name!r}; expected one of {', '.join(STRATEGIES)}") from None
