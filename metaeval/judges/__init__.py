"""The judge layer: judges that create nuggets, label importance and assign nuggets to answers.

Two levels (issue 5; DESIGN principles 2-5):

* ``Judge`` (``base``): one async interface with three methods, each ONE unit of work (at most one model call
  plus traced re-asks), so the pipeline controls batching and job hashing.  Results carry labels (FAILED where
  unusable, raw reply kept), a reason, and one ``CallTrace`` per model call.  ``SyncJudge`` wraps a judge for
  the edges only.
* ``LLMJudge`` (``llm``) does the tasks through versioned prompts (``metaeval.prompts``) and a ``ChatClient``
  (``client``): cache (``cache``, SQLite WAL) -> limits (``limits``) -> retries with bounded jittered backoff ->
  backend (``backends``: openai, anthropic; translation only) -> parse (``parsing``) -> re-ask.
* Offline judges: ``lexical``, ``embedding`` (extra [embed]), ``local-llm`` (extra [local], llama.cpp server
  driven through the openai backend), ``replay`` and ``simulated`` (from an existing label set).

Resolve names into typed ``JudgeSpec``s with ``resolve_judge`` (``catalog``) and build judges with
``make_judge(spec_or_name_or_mapping)``.  Deployment configs:
``config.Deployment``.  Keys come only from the environment variable a deployment names.
"""

from metaeval.judges.base import (
    AssignResult, ImportanceResult, Judge, JudgeResult, NuggetsResult, SyncJudge,
)
from metaeval.judges.config import Deployment, Limits, Prices
from metaeval.judges.catalog import JudgeSpec, build_judge, check_available, resolve_judge
from metaeval.judges.registry import JUDGES

#: the historical name of ``build_judge`` (a judge object from a spec, a name or a mapping)
make_judge = build_judge

__all__ = [
    "AssignResult", "Deployment", "ImportanceResult", "JUDGES", "Judge", "JudgeResult", "Limits", "NuggetsResult",
    "JudgeSpec", "Prices", "SyncJudge", "build_judge", "check_available", "make_judge", "resolve_judge",
]
