"""``LLMJudge``: the three nugget tasks (and optional relevance grading) through versioned prompts and a
``ChatClient``.

One unit = first call + at most ``max_reasks`` re-asks (default 2).  A re-ask continues the conversation with the
model's unusable reply and the template's ``reask`` message naming the problem (wrong length, unknown label, no
list).  After the last re-ask: a wrong length or no list -> every item FAILED; a right-length list with some
unknown labels -> only those items FAILED.  A call that fails at the transport level (retries exhausted,
permanent HTTP error) -> every item FAILED with the client's reason; it is not re-asked.

``structured_output`` (for ``output: json`` templates only) adds a per-call JSON schema (exact label count, label
enum; or at most 30 nugget strings) as ``response_format``: ``"json_schema"`` is OpenAI's form (also vLLM),
``"json_object_schema"`` is llama.cpp's ``{"type": "json_object", "schema": ...}``.  The schema is part of the
request params, hence of the cache key and the trace.  Parsing and re-asks stay the same either way.

``grade_relevance`` (template ``relevance@v1``): a list of exactly one integer 0-3 per document
(``parsing.check_grades``), re-asked like the labels; a wrong length / no list after the last re-ask -> every
grade ``None`` (FAILED), an unusable entry in a right-length list -> that grade ``None``.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from metaeval.errors import ConfigError
from metaeval.judges.base import (
    MAX_NUGGETS, AssignResult, ImportanceResult, Judge, NuggetsResult, RelevanceResult, check_sizes, grades_status,
    nugget_text, status_of,
)
from metaeval.judges.client import CallFailed, ChatClient, warm_up
from metaeval.judges.parsing import check_grades, check_labels, check_nuggets
from metaeval.prompts import DEFAULT_PROMPTS, PromptTemplate, load_template
from metaeval.prompts.templates_io import assign_values, create_values, importance_values, relevance_values
from metaeval.types import Answer, Document, Importance, Nugget, Support, Topic


#: structured_output name -> response_format builder (key, schema) -> dict
STRUCTURED: dict[str | None, Callable[[str, dict], dict] | None] = {
    None: None,
    "json_schema": lambda key, schema: {"type": "json_schema", "json_schema": {"name": key, "strict": True, "schema": schema}},
    "json_object_schema": lambda key, schema: {"type": "json_object", "schema": schema},
}


class LLMJudge(Judge):
    #: the config options ``from_config`` reads (besides judge, name, concurrency, requires, label, cache)
    OPTIONS: tuple[str, ...] = ("deployment", "prompts", "max_reasks", "seed", "sample_index", "structured_output")
    kind = "llm"
    SAMPLING = True  # sample i is a separate request (``sample_index`` is part of the cache key)

    def __init__(self, client: ChatClient, prompts: Mapping[str, str | PromptTemplate] | None = None,
                 max_reasks: int = 2, sample_index: int = 0, name: str | None = None,
                 structured_output: str | None = None):
        super().__init__(name or client.deployment.name)
        if structured_output not in STRUCTURED:
            raise ConfigError(f"structured_output must be one of {sorted(k for k in STRUCTURED if k)} or null, got {structured_output!r}")
        from metaeval.judges.backends import BACKENDS, backend_class

        if structured_output and not backend_class(client.deployment).structured_output:
            # the backend says whether it takes a response_format (Anthropic's API has none: a schema sent there
            # would be rejected mid-sweep)

            able = sorted(n for n, c in BACKENDS.items() if c.structured_output and not c.is_batch)
            raise ConfigError(f"structured_output={structured_output!r} needs a backend that takes a response_format "
                              f"({', '.join(able)}: OpenAI, vLLM, llama.cpp); deployment {client.deployment.name!r} "
                              f"uses {client.deployment.backend!r}")
        self.structured_output = structured_output
        self.client = client
        chosen = {**DEFAULT_PROMPTS, **dict(prompts or {})}
        self.prompts: dict[str, PromptTemplate] = {}
        for task, spec in chosen.items():
            tmpl = spec if isinstance(spec, PromptTemplate) else load_template(spec)
            if tmpl.task != task:
                raise ConfigError(f"prompt {tmpl.name} is a {tmpl.task!r} template, configured for {task!r}")
            self.prompts[task] = tmpl
        if max_reasks < 0:
            raise ConfigError(f"max_reasks must be >= 0, got {max_reasks}")
        self.max_reasks = max_reasks
        self.sample_index = sample_index

    def _apply_sample(self, sample: int) -> None:
        """Sample ``sample`` of every call: the configured ``sample_index`` plus ``sample`` (its own cache entry)."""
        self.sample_index = self.sample_index + int(sample)

    # ------------------------------------------------------------------ the re-ask loop
    def _response_format(self, tmpl: PromptTemplate, n: int | None) -> dict[str, Any] | None:
        if not self.structured_output or tmpl.output != "json":
            return None
        if tmpl.task == "create":
            key, items = "nuggets", {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_NUGGETS}
        elif tmpl.task == "relevance":
            key, items = "grades", {"type": "array", "items": {"type": "integer", "enum": [int(x) for x in tmpl.labels]},
                                    "minItems": n, "maxItems": n}
        else:
            key, items = "labels", {"type": "array", "items": {"type": "string", "enum": list(tmpl.labels)},
                                    "minItems": n, "maxItems": n}
        schema = {"type": "object", "properties": {key: items}, "required": [key], "additionalProperties": False}
        return {"response_format": STRUCTURED[self.structured_output](key, schema)}

    async def _converse(self, tmpl: PromptTemplate, values: dict[str, Any],
                        check: Callable[[str], tuple[Any, str | None]], n: int | None = None,
                        ) -> tuple[Any, str | None, str | None, list, int]:
        """Returns (parsed-or-partial, problem, raw, traces, reasks)."""
        messages = tmpl.render(**values)
        extra = self._response_format(tmpl, n)
        traces: list = []
        parsed, problem, raw = None, None, None
        for k in range(self.max_reasks + 1):
            try:
                trace = await self.client.complete(messages, prompt=tmpl.ref(), sample_index=self.sample_index, reask=k,
                                                  extra_params=extra)
            except CallFailed as exc:
                traces.append(exc.trace)
                return None, f"call failed: {exc.trace.error}", raw, traces, k
            traces.append(trace)
            raw = trace.raw_output or ""
            parsed, problem = check(raw)
            if problem is None:
                return parsed, None, raw, traces, k
            if k < self.max_reasks:
                messages = [*messages, {"role": "assistant", "content": raw}, tmpl.render_reask(problem, **values)]
        return parsed, f"unusable reply after {self.max_reasks} re-ask(s): {problem}", raw, traces, self.max_reasks

    # ------------------------------------------------------------------ tasks
    async def create_nuggets(self, topic: Topic, documents: Sequence[Document],
                             nuggets_so_far: Sequence[str] = ()) -> NuggetsResult:
        check_sizes(documents=documents, nuggets_so_far=nuggets_so_far)
        tmpl = self.prompts["create"]
        values = create_values(topic.text, documents, list(nuggets_so_far), MAX_NUGGETS)
        parsed, problem, raw, traces, reasks = await self._converse(tmpl, values, lambda r: check_nuggets(r, MAX_NUGGETS))
        if problem is not None:
            return NuggetsResult(status="failed", reason=problem, raw=raw, traces=tuple(traces), reasks=reasks,
                                 judge=self.name, nuggets=tuple(nuggets_so_far))
        return NuggetsResult(status="ok", raw=raw, traces=tuple(traces), reasks=reasks, judge=self.name, nuggets=tuple(parsed))

    async def label_importance(self, topic: Topic, nuggets: Sequence[str], *,
                               documents: Sequence[Document] | None = None) -> ImportanceResult:
        check_sizes(batch=nuggets)
        tmpl = self.prompts["importance"]
        texts = [nugget_text(n) for n in nuggets]
        labels, problem, raw, traces, reasks = await self._labels(tmpl, importance_values(topic.text, texts), len(texts))
        out = tuple(Importance(x) if x else Importance.FAILED for x in labels)
        return ImportanceResult(status=status_of(out), reason=problem, raw=raw, traces=tuple(traces), reasks=reasks,
                                judge=self.name, labels=out)

    async def assign(self, topic: Topic, answer: Answer, nuggets: Sequence[Nugget | str]) -> AssignResult:
        check_sizes(batch=nuggets)
        tmpl = self.prompts["assign"]
        texts = [nugget_text(n) for n in nuggets]
        labels, problem, raw, traces, reasks = await self._labels(tmpl, assign_values(topic.text, answer.text, texts), len(texts))
        out = tuple(Support(x) if x else Support.FAILED for x in labels)
        return AssignResult(status=status_of(out), reason=problem, raw=raw, traces=tuple(traces), reasks=reasks,
                            judge=self.name, labels=out)

    async def grade_relevance(self, topic: Topic, documents: Sequence[Document]) -> RelevanceResult:
        check_sizes(documents=documents)
        n = len(documents)
        if n == 0:
            return RelevanceResult(status="ok", judge=self.name)
        tmpl = self.prompts["relevance"]
        allowed = tuple(int(x) for x in tmpl.labels)

        def check(raw: str) -> tuple[Any, str | None]:
            res = check_grades(raw, n, allowed)
            return res.grades, res.problem

        grades, problem, raw, traces, reasks = await self._converse(tmpl, relevance_values(topic.text, documents), check, n)
        out = tuple(grades) if grades is not None else (None,) * n
        return RelevanceResult(status=grades_status(out), reason=problem, raw=raw, traces=tuple(traces), reasks=reasks,
                               judge=self.name, grades=out)

    async def _labels(self, tmpl: PromptTemplate, values: dict[str, Any], n: int):
        if n == 0:
            return [], None, None, [], 0

        def check(raw: str) -> tuple[Any, str | None]:
            res = check_labels(raw, n, tmpl.labels)
            return res.labels, res.problem

        labels, problem, raw, traces, reasks = await self._converse(tmpl, values, check, n)
        if labels is None:
            labels = [None] * n
        return list(labels), problem, raw, traces, reasks

    def stats(self) -> dict[str, Any]:
        return self.client.stats.to_dict()

    def describe(self) -> dict[str, Any]:
        return {
            "judge": self.kind, "name": self.name, **self.client.describe(), "max_reasks": self.max_reasks,
            "sample_index": self.sample_index, "structured_output": self.structured_output,
            "prompts": {task: {"name": t.name, "sha": t.sha} for task, t in self.prompts.items()},
        }

    async def aclose(self) -> None:
        await self.client.aclose()

    def warm(self) -> None:
        """Import what the first request would (``ChatClient.warm``)."""
        warm_up(self.client)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "LLMJudge":
        """``{judge: llm, deployment: {...}, prompts: {task: name}, max_reasks: 2, cache: PATH|null, seed: 0}``."""
        from metaeval.judges.batch import journal_beside_cache
        from metaeval.judges.config import Deployment

        dep = config.get("deployment")
        if dep is None:
            raise ConfigError("an llm judge config needs a 'deployment' mapping")
        # the catalog's typed deployment as it is (``build_judge``); a mapping (a config not built by the catalog) is
        # typed by the same one function
        dep = journal_beside_cache(Deployment.from_dict(dep), config.get("cache"))  # batch: the journal beside the cache
        client = ChatClient(dep, cache=config.get("cache"), seed=int(config.get("seed", 0)))
        return cls(client, prompts=config.get("prompts"), max_reasks=int(config.get("max_reasks", 2)),
                   sample_index=int(config.get("sample_index", 0)), name=config.get("name"),
                   structured_output=config.get("structured_output"))
