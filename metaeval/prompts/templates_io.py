"""Load ``templates/<id>/<version>.yaml`` files and render them into chat messages (pure functions)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from metaeval.errors import ConfigError

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
TASKS = ("create", "importance", "assign", "relevance")
OUTPUTS = ("python", "json")
#: task -> template used when a judge config names none.
DEFAULT_PROMPTS: dict[str, str] = {"create": "create@v1", "importance": "importance@v1", "assign": "assign@v1",
                                   "relevance": "relevance@v1"}

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_TAGS = ("query", "answer", "nuggets", "nugget", "documents", "document")
_TAG_RE = re.compile(r"<(/?\s*(?:" + "|".join(_TAGS) + r"))\b", re.IGNORECASE)


def neutralize(text: str) -> str:
    """Make delimiter tags inside untrusted text inert: ``</answer>`` -> ``‹/answer>``.  Nothing else changes."""
    return _TAG_RE.sub(lambda m: "\u2039" + m.group(1), text)


@dataclass(frozen=True)
class PromptTemplate:
    """One versioned template.  ``labels`` is the label vocabulary for importance/assignment, the grades as
    strings (``"0"``..``"3"``) for relevance, empty for create."""

    id: str
    version: str
    task: str
    output: str
    system: str
    user: str
    reask: str
    sha: str
    labels: tuple[str, ...] = ()
    path: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        return f"{self.id}@{self.version}"

    def ref(self) -> dict[str, str]:
        """What goes into a trace: id, version and content hash."""
        return {"prompt_id": self.id, "prompt_version": self.version, "prompt_sha": self.sha}

    # ------------------------------------------------------------------ rendering
    def render(self, **values: Any) -> list[dict[str, str]]:
        """Chat messages (system + user) with ``{{name}}`` placeholders filled.

        Placeholders are replaced in one pass over the *template*, so braces or ``{{...}}`` inside inserted
        text are never expanded; an unknown placeholder is a ``ConfigError``.
        """
        msgs = []
        if self.system.strip():
            msgs.append({"role": "system", "content": _fill(self.system, values, self.name).strip()})
        msgs.append({"role": "user", "content": _fill(self.user, values, self.name).strip()})
        return msgs

    def render_reask(self, problem: str, **values: Any) -> dict[str, str]:
        """The user message sent after an unusable reply."""
        return {"role": "user", "content": _fill(self.reask, {**values, "problem": problem}, self.name).strip()}


def _fill(text: str, values: Mapping[str, Any], name: str) -> str:
    def sub(m: re.Match) -> str:
        key = m.group(1)
        if key not in values:
            raise ConfigError(f"prompt {name}: no value for placeholder {{{{{key}}}}}")
        return str(values[key])

    return _PLACEHOLDER.sub(sub, text)


# ---------------------------------------------------------------------- value formatting (shared by tasks)
def format_nuggets(nuggets: Sequence[str]) -> str:
    """``[1] text`` lines (neutralised); an empty list renders as ``(none yet)``."""
    if not nuggets:
        return "(none yet)"
    return "\n".join(f"[{i}] {neutralize(' '.join(str(n).split()))}" for i, n in enumerate(nuggets, 1))


def format_documents(documents: Sequence[Any]) -> str:
    """Each document as ``<document index="i" id="docid">title + text</document>`` (neutralised)."""
    parts = []
    for i, doc in enumerate(documents, 1):
        title = getattr(doc, "title", "") or ""
        body = (title + "\n" if title else "") + str(getattr(doc, "text", doc))
        docid = neutralize(str(getattr(doc, "docid", i))).replace('"', "'")
        parts.append(f'<document index="{i}" id="{docid}">\n{neutralize(body.strip())}\n</document>')
    return "\n".join(parts)


# ---------------------------------------------------------------------- loading
def list_templates() -> list[str]:
    """All built-in template names, ``id@version``."""
    return sorted(f"{p.parent.name}@{p.stem}" for p in TEMPLATE_DIR.glob("*/*.yaml"))


def load_template(spec: str) -> PromptTemplate:
    """A template by name (``assign@v1``; a bare id means ``@v1``) or by path to a YAML file."""
    path = Path(spec)
    if spec.endswith((".yaml", ".yml")) and path.is_file():
        return _load_path(str(path.resolve()))
    pid, _, version = spec.partition("@")
    path = TEMPLATE_DIR / pid / f"{version or 'v1'}.yaml"
    if not path.is_file():
        raise ConfigError(f"unknown prompt template {spec!r}; built-in: {', '.join(list_templates())}")
    return _load_path(str(path))


@lru_cache(maxsize=128)
def _load_path(path: str) -> PromptTemplate:
    import yaml

    raw = Path(path).read_bytes()
    try:
        obj = yaml.safe_load(raw.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable YAML template ({exc})") from exc
    if not isinstance(obj, dict):
        raise ConfigError(f"{path}: a template must be a YAML mapping")
    for key in ("id", "version", "task", "output", "user", "reask"):
        if not isinstance(obj.get(key), str):
            raise ConfigError(f"{path}: field {key!r} missing or not a string")
    if obj["task"] not in TASKS:
        raise ConfigError(f"{path}: field 'task' must be one of {TASKS}, got {obj['task']!r}")
    if obj["output"] not in OUTPUTS:
        raise ConfigError(f"{path}: field 'output' must be one of {OUTPUTS}, got {obj['output']!r}")
    labels = tuple(str(x) for x in obj.get("labels") or ())
    if obj["task"] != "create" and not labels:
        raise ConfigError(f"{path}: field 'labels' is required for task {obj['task']!r}")
    if obj["task"] == "relevance" and not all(x.isdigit() for x in labels):
        raise ConfigError(f"{path}: field 'labels' of a relevance template lists integer grades, got {list(labels)}")
    return PromptTemplate(
        id=obj["id"], version=str(obj["version"]), task=obj["task"], output=obj["output"],
        system=obj.get("system") or "", user=obj["user"], reask=obj["reask"],
        sha=hashlib.sha256(raw).hexdigest()[:12], labels=labels, path=path,
    )


# ---------------------------------------------------------------------- values per task (all text neutralised)
def create_values(query: str, documents: Sequence[Any], nuggets: Sequence[str], max_nuggets: int = 30) -> dict[str, Any]:
    return {
        "query": neutralize(query), "documents": format_documents(documents), "n_documents": len(documents),
        "nuggets": format_nuggets(nuggets), "n_nuggets": len(nuggets), "max_nuggets": max_nuggets,
    }


def importance_values(query: str, nuggets: Sequence[str]) -> dict[str, Any]:
    return {"query": neutralize(query), "nuggets": format_nuggets(nuggets), "n_nuggets": len(nuggets)}


def relevance_values(query: str, documents: Sequence[Any]) -> dict[str, Any]:
    return {"query": neutralize(query), "documents": format_documents(documents), "n_documents": len(documents)}


def assign_values(query: str, answer: str, nuggets: Sequence[str]) -> dict[str, Any]:
    return {
        "query": neutralize(query), "answer": neutralize(answer.strip()),
        "nuggets": format_nuggets(nuggets), "n_nuggets": len(nuggets),
    }
