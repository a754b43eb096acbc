"""Assessor time: turn a number of human-labelled topics into hours.

``hours(n) = n * (labels_per_topic * seconds_per_label / 3600 + nugget_hours_per_topic)``

Defaults and where they come from:

* ``seconds_per_label = 15`` - an ASSUMPTION, not a measured figure: the paper reports no per-label assignment
  time.  It reads as: one read of a ~250-word answer (~60 s at ~250 words/min) shared over ~14 nuggets
  (~4 s each) plus ~10 s per support decision.  Set your own from a timed pilot.
* ``nugget_hours_per_topic = 0`` (nuggets already exist).  Pradeep et al. (2025) report about 1 hour per topic
  for post-editing AutoNuggets (section 4.1.2) and about 2.5 hours for manual nugget creation (section 4.1.3);
  pass those to plan the creation stage too.
* ``labels_per_topic``: from the pilot (answers x nuggets per topic, the number of (nugget, answer) labels).
"""

from __future__ import annotations

from typing import Any

from metaeval.errors import ConfigError

SECONDS_PER_LABEL = 15.0
SECONDS_SOURCE = ("assumption: ~60 s to read a ~250-word answer, shared over ~14 nuggets, plus ~10 s per "
                  "decision; the paper reports no per-label time")
NUGGET_HOURS = {"none": 0.0, "edit": 1.0, "manual": 2.5}  # Pradeep et al. 2025, sections 4.1.2 and 4.1.3


def hours(n_topics: float, labels_per_topic: float, seconds_per_label: float = SECONDS_PER_LABEL,
          nugget_hours_per_topic: float = 0.0) -> float:
    """Assessor hours for ``n_topics`` topics (module docstring)."""
    if seconds_per_label < 0 or nugget_hours_per_topic < 0 or labels_per_topic < 0:
        raise ConfigError("assessor times and label counts must be non-negative")
    return float(n_topics) * (labels_per_topic * seconds_per_label / 3600.0 + nugget_hours_per_topic)


def budget_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Normalise the budget settings: ``seconds_per_label``, ``nugget_hours_per_topic`` (a number or one of
    none/edit/manual), with the source of each default."""
    spl = float(settings.get("seconds_per_label", SECONDS_PER_LABEL))
    nh = settings.get("nugget_hours_per_topic", 0.0)
    if isinstance(nh, str):
        if nh not in NUGGET_HOURS:
            raise ConfigError(f"nugget_hours_per_topic {nh!r}; expected a number or one of {', '.join(NUGGET_HOURS)}")
        nh = NUGGET_HOURS[nh]
    return {"seconds_per_label": spl, "nugget_hours_per_topic": float(nh),
            "seconds_source": SECONDS_SOURCE if "seconds_per_label" not in settings else "user setting",
            "nugget_hours_source": ("Pradeep et al. 2025: ~1 h/topic post-editing (4.1.2), ~2.5 h manual (4.1.3)")}
