"""The exit statuses of the workflow's outcomes that are not errors (errors are exit 2, ``metaeval.cli``): one
definition each, where the outcome is decided, named here for the commands.

* :data:`EXIT_FAILED_RATE` (4, :mod:`metaeval.pipeline.health`): everything was written, but a stage's labels are
  unusable (a cell's FAILED labels above ``sweep.max_failed_rate``; every label of ``assign`` or ``probe`` FAILED;
  ``create`` created no nugget).
"""

from __future__ import annotations

from metaeval.pipeline.health import EXIT_FAILED_RATE

__all__ = ["EXIT_FAILED_RATE"]
