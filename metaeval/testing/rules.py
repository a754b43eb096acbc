"""Reply rules for the test server: functions ``messages -> reply text``.

``label_rule`` reads a metaeval prompt (the first user message: the task from its delimited blocks, the nugget
count from ``<nuggets count="N">``, the label vocabulary from the wording) and answers like a cooperative model:
a list of the right length in the format the prompt asks for (JSON object when the prompt says JSON, a Python
list otherwise).  Labels are a deterministic function of (nugget text, answer text), so reruns agree.  A relevance
prompt (documents, no nugget block) gets one grade 0-3 per document, a deterministic function of (query,
document text).
``prompt_rule(p_noise)`` answers like a model whose accuracy depends on the prompt version: it reads the answer
(a nugget is supported when most of its content words occur in the answer) under the JSON prompt (``v2_json``)
and, under the plain-list prompt (``v1``), replaces each such label with ``label_rule``'s with probability
``p_noise`` - so a prompt comparison has a real difference to find.
``sampling_rule(p_redraw)`` answers repeats of one prompt like a model sampled at temperature > 0 (judge
self-consistency tests).  ``scripted(replies)`` returns the given replies in turn.  ``wrong_length`` and ``malformed`` are used by fault
injection.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from typing import Callable, Iterable, Mapping, Sequence

Messages = Sequence[Mapping[str, str]]
Rule = Callable[[Messages], str]

_COUNT = re.compile(r'<nuggets count="(\d+)">(.*?)</nuggets>', re.DOTALL)
_DOC = re.compile(r"<document [^>]*>\n?(.*?)</document>", re.DOTALL)
_ITEM = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)


def _first_user(messages: Messages) -> str:
    for m in messages:
        if m.get("role") == "user":
            return _content_text(m.get("content", ""))
    return ""


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # anthropic content blocks
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return str(content)


def _wants_json(messages: Messages) -> bool:
    return any("JSON" in _content_text(m.get("content", "")) for m in messages)


def _pick(options: Sequence[str], *parts: str) -> str:
    h = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return options[h[0] % len(options)]


def analyse(messages: Messages) -> dict:
    """What the prompt asks: task, nuggets, answer, documents, labels, json."""
    text = _first_user(messages)
    everything = " ".join(_content_text(m.get("content", "")) for m in messages)
    m = _COUNT.search(text)
    nuggets = [t for _, t in _ITEM.findall(m.group(2))] if m else []
    n = int(m.group(1)) if m else 0
    if "<answer>" in text:
        task = "assign"
        labels = ["support", "partial_support", "not_support"] if "partial_support" in everything else ["support", "not_support"]
    elif "<documents" in text and not m:
        task, labels = "relevance", [0, 1, 2, 3]
    elif "<documents" in text:
        task, labels = "create", []
    elif m:
        task, labels = "importance", ["vital", "okay"]
    else:
        task, labels = "unknown", []
    blocks = re.findall(r"<answer>\n(.*?)</answer>", text, re.DOTALL)  # the answer block, not "<answer> tags" in prose
    ans_text = blocks[-1] if blocks else ""
    query = re.search(r"<query>\n(.*?)</query>", text, re.DOTALL)  # the block, not "<query> tags" in prose
    documents = _DOC.findall(text)
    if task == "relevance":
        n = len(documents)
    return {
        "task": task, "n": n, "nuggets": nuggets, "labels": labels, "json": _wants_json(messages),
        "answer": ans_text.strip(), "documents": documents,
        "query": query.group(1).strip() if query else "",
    }


def _format(items: list, key: str, as_json: bool) -> str:
    return json.dumps({key: items}) if as_json else json.dumps(items)


def label_rule(messages: Messages) -> str:
    """A well-formed answer to any metaeval prompt (see module docstring)."""
    a = analyse(messages)
    if a["task"] in ("assign", "importance"):
        labs = [_pick(a["labels"], nug, a["answer"]) for nug in a["nuggets"][: a["n"]]]
        labs += [a["labels"][-1]] * (a["n"] - len(labs))
        return _format(labs, "labels", a["json"])
    if a["task"] == "relevance":
        return _format([_pick(a["labels"], a["query"], doc.strip()) for doc in a["documents"]], "grades", a["json"])
    if a["task"] == "create":
        nuggets = list(a["nuggets"])
        for doc in a["documents"]:
            first = re.split(r"(?<=[.!?])\s", doc.strip())[0][:100]
            if first and first not in nuggets:
                nuggets.append(first)
        return _format(nuggets[:30] or ["no facts found"], "nuggets", a["json"])
    return "Hello from the metaeval test server."


_WORD = re.compile(r"[a-z0-9]+")


def _overlap_label(nugget: str, answer: str, labels: Sequence[str]) -> str:
    """support / partial_support / not_support by the share of the nugget's content words (longer than 3
    letters) that occur in the answer: >= 0.6, >= 0.3, else (a reader that looks, not a hash)."""
    words = [w for w in _WORD.findall(nugget.lower()) if len(w) > 3]
    seen = set(_WORD.findall(answer.lower()))
    share = sum(w in seen for w in words) / len(words) if words else 0.0
    if share >= 0.6:
        return labels[0]
    if share >= 0.3 and len(labels) > 2:
        return labels[1]
    return labels[-1]


def prompt_rule(p_noise: float = 0.5, seed: int = 0) -> Rule:
    """Assignment replies whose accuracy depends on the prompt (see the module docstring): word overlap under a
    prompt that asks for JSON, and under one that does not each label replaced with probability ``p_noise`` by
    ``label_rule``'s (decided by a hash of (seed, nugget, answer), so reruns agree).  Other tasks answer as
    ``label_rule``."""
    if not 0.0 <= p_noise <= 1.0:
        raise ValueError(f"p_noise must be in [0, 1], got {p_noise}")

    def rule(messages: Messages) -> str:
        a = analyse(messages)
        if a["task"] != "assign":
            return label_rule(messages)
        labs = []
        for nug in a["nuggets"][: a["n"]]:
            lab = _overlap_label(nug, a["answer"], a["labels"])
            h = hashlib.sha256(f"{seed}\x1f{nug}\x1f{a['answer']}".encode()).digest()
            if not a["json"] and int.from_bytes(h[:4], "little") / 2**32 < p_noise:
                lab = _pick(a["labels"], nug, a["answer"])
            labs.append(lab)
        labs += [a["labels"][-1]] * (a["n"] - len(labs))
        return _format(labs, "labels", a["json"])

    return rule


def sampling_rule(p_redraw: float = 0.3, seed: int = 0) -> Rule:
    """A model sampled at temperature > 0: the first time a prompt is seen the reply is ``label_rule``'s; the
    j-th repeat of the same prompt (another sample of the same call) redraws each label with probability
    ``p_redraw``, uniformly from the prompt's label vocabulary, from a generator seeded by (seed, prompt, j,
    nugget).  So the set of replies to k repeats does not depend on request order; which repeat a client's
    sample index gets does (as with a real server).  Non-label tasks answer as ``label_rule``."""
    if not 0.0 <= p_redraw <= 1.0:
        raise ValueError(f"p_redraw must be in [0, 1], got {p_redraw}")
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def rule(messages: Messages) -> str:
        a = analyse(messages)
        if a["task"] not in ("assign", "importance"):
            return label_rule(messages)
        digest = hashlib.sha256(json.dumps(list(messages), sort_keys=True, default=str).encode()).hexdigest()
        with lock:
            j = seen.get(digest, 0)
            seen[digest] = j + 1
        labs = json.loads(label_rule(messages))
        labs = labs["labels"] if isinstance(labs, dict) else labs
        if j:
            for i, nug in enumerate(a["nuggets"][: len(labs)]):
                h = hashlib.sha256(f"{seed}\x1f{digest}\x1f{j}\x1f{i}\x1f{nug}".encode()).digest()
                if int.from_bytes(h[:4], "little") / 2**32 < p_redraw:
                    labs[i] = a["labels"][h[4] % len(a["labels"])]
        return _format(labs, "labels", a["json"])

    return rule


def wrong_length(messages: Messages) -> str:
    a = analyse(messages)
    labs = (a["labels"] or ["support"])[:1] * (a["n"] + 1)
    return _format(labs, "labels", a["json"])


def malformed(messages: Messages) -> str:
    return "I am not able to grade these nuggets, sorry."


def scripted(replies: Iterable[str], then: Rule | None = None) -> Rule:
    """Return ``replies`` one per request (thread-safe), then fall back to ``then`` (default: ``label_rule``)."""
    it = iter(list(replies))
    lock = threading.Lock()
    fallback = then or label_rule

    def rule(messages: Messages) -> str:
        with lock:
            nxt = next(it, None)
        return nxt if nxt is not None else fallback(messages)

    return rule


def constant(reply: str) -> Rule:
    return lambda messages: reply


__all__ = ["analyse", "constant", "label_rule", "malformed", "prompt_rule", "sampling_rule", "scripted",
           "wrong_length"]
