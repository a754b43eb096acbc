"""Job keys (``metaeval.pipeline.stages`` job builders, ``metaeval.pipeline.specs``): a key changes with everything
the judge reads for that job and with nothing else, so the store reuses a job exactly when its output would be the
same.  A field missed from a key would hand one job's output to another (issue 35: ``importance_batch``)."""

from __future__ import annotations

import dataclasses

import pytest

from metaeval.pipeline.settings import SweepSettings
from metaeval.pipeline.specs import JobSpec, judge_identity
from metaeval.pipeline.stages import assign_job, create_job, importance_job, relevance_job
from metaeval.types import Answer, Document, Topic

TOPIC = Topic("q1", "why is the sky blue")
DOCS = [Document("d1", "Rayleigh scattering", "Sky"), Document("d2", "Mie scattering", "Clouds")]
NUGGETS = ["short wavelengths scatter more", "the atmosphere scatters sunlight"]
ANSWER = Answer("run1", "q1", "Blue light scatters most.", ("Blue light scatters most.",))
PAIRS = [("short wavelengths scatter more", "vital"), ("the atmosphere scatters sunlight", "okay")]
S = SweepSettings()


def _keys(build, variants: dict) -> dict[str, str]:
    return {name: build(**kw)[0].key for name, kw in variants.items()}


def _all_differ(keys: dict[str, str]) -> None:
    base = keys.pop("base")
    same = [k for k, v in keys.items() if v == base]
    assert not same, f"the key does not change with: {same}"


def _doc_variants():
    return {"doc id": [dataclasses.replace(DOCS[0], docid="d9"), DOCS[1]],
            "doc text": [dataclasses.replace(DOCS[0], text="other"), DOCS[1]],
            "doc title": [dataclasses.replace(DOCS[0], title="other"), DOCS[1]],
            "doc order": DOCS[::-1], "one doc fewer": DOCS[:1]}


def test_relevance_key_changes_with_topic_documents_batch_judge_and_prompt():
    def build(judge="j", prompt="p", topic=TOPIC, docs=DOCS, s=S):
        return relevance_job(judge, prompt, topic, docs, s)

    v = {"base": {}, "judge": {"judge": "j2"}, "prompt": {"prompt": "p2"}, "qid": {"topic": Topic("q2", TOPIC.text)},
         "topic text": {"topic": Topic("q1", "other")}, "batch": {"s": SweepSettings(relevance_batch=5)}}
    v.update({k: {"docs": d} for k, d in _doc_variants().items()})
    _all_differ(_keys(build, v))
    assert build()[0].key == build(s=SweepSettings(max_nuggets=5, assign_batch=3))[0].key  # settings it does not read


def test_create_key_changes_with_topic_documents_window_and_cap():
    def build(topic=TOPIC, docs=DOCS, s=S):
        return create_job("j", "p", topic, docs, s)

    v = {"base": {}, "qid": {"topic": Topic("q2", TOPIC.text)}, "topic text": {"topic": Topic("q1", "other")},
         "window": {"s": SweepSettings(creation_window=5)}, "max nuggets": {"s": SweepSettings(max_nuggets=20)}}
    v.update({k: {"docs": d} for k, d in _doc_variants().items()})
    _all_differ(_keys(build, v))
    assert build()[0].key == build(s=SweepSettings(relevance_batch=5, importance_batch=3))[0].key


def test_importance_key_changes_with_topic_nuggets_document_ids_and_batch():
    def build(topic=TOPIC, nuggets=NUGGETS, docs=DOCS, s=S):
        return importance_job("j", "p", topic, nuggets, docs, s)

    v = {"base": {}, "qid": {"topic": Topic("q2", TOPIC.text)}, "topic text": {"topic": Topic("q1", "other")},
         "nugget text": {"nuggets": [NUGGETS[0], "other"]}, "nugget order": {"nuggets": NUGGETS[::-1]},
         "doc id": {"docs": [dataclasses.replace(DOCS[0], docid="d9"), DOCS[1]]}, "one doc fewer": {"docs": DOCS[:1]},
         "batch": {"s": SweepSettings(importance_batch=5)}}
    _all_differ(_keys(build, v))
    spec, payload = build()
    assert spec.stage == "importance" and spec.qid == "q1" and payload["batch"] == 10
    assert build()[0].key == build(s=SweepSettings(assign_batch=3))[0].key


def test_assign_key_changes_with_topic_answer_nuggets_importance_batch_and_sample():
    def build(topic=TOPIC, answer=ANSWER, pairs=PAIRS, s=S, sample=0):
        return assign_job("j", "p", topic, answer, pairs, s, sample=sample)

    v = {"base": {}, "qid": {"topic": Topic("q2", TOPIC.text)}, "topic text": {"topic": Topic("q1", "other")},
         "run": {"answer": dataclasses.replace(ANSWER, run_id="run2")},
         "answer text": {"answer": dataclasses.replace(ANSWER, text="other")},
         "sentences": {"answer": dataclasses.replace(ANSWER, sentences=("other",))},
         "nugget text": {"pairs": [PAIRS[0], ("other", "okay")]}, "importance": {"pairs": [PAIRS[0], (PAIRS[1][0], "vital")]},
         "batch": {"s": SweepSettings(assign_batch=5)}, "sample 1": {"sample": 1}}
    _all_differ(_keys(build, v))
    spec, payload = build()
    assert spec.run_id == "run1" and "sample" not in payload  # sample 0 keeps the key it had before samples existed
    assert build(sample=2)[0].key != build(sample=1)[0].key and build(sample=2)[1]["sample"] == 2
    assert build()[0].key == build(s=SweepSettings(importance_batch=3, max_nuggets=5))[0].key


def test_jobspec_key_is_24_hex_of_every_field():
    base = JobSpec("assign", "j", "p", "q1", "abc", run_id="r", sample=0)
    assert len(base.key) == 24 and int(base.key, 16) >= 0
    assert base.key == JobSpec("assign", "j", "p", "q1", "abc", run_id="r", sample=0).key
    assert base.as_dict() == dataclasses.asdict(base)
    for f in dataclasses.fields(JobSpec):
        other = dataclasses.replace(base, **{f.name: 1 if f.type in ("int", int) else "x"})
        assert other.key != base.key, f.name


@pytest.mark.parametrize("field, value", [("limits", {"max_retries": 1}), ("prices", {"input_per_1m": 9.0}),
                                          ("api_key_env", "OTHER_KEY"), ("base_url", "http://127.0.0.1:1/v1"),
                                          ("replicas", 3), ("resources", {"num_cpus": 2})])
def test_judge_identity_ignores_what_does_not_change_outputs(field, value):
    from metaeval.judges.catalog import resolve_judge

    dep = {"name": "d", "backend": "openai", "model": "m", "params": {"temperature": 0}}
    base = judge_identity(resolve_judge({"judge": "llm", "deployment": dep}))
    assert judge_identity(resolve_judge({"judge": "llm", "deployment": {**dep, field: value}})) == base


def test_judge_identity_changes_with_model_params_and_judge_options():
    from metaeval.judges.catalog import resolve_judge

    dep = {"name": "d", "backend": "openai", "model": "m", "params": {"temperature": 0}}
    base = judge_identity(resolve_judge({"judge": "llm", "deployment": dep}))
    for other in ({"judge": "llm", "deployment": {**dep, "model": "m2"}},
                  {"judge": "llm", "deployment": {**dep, "params": {"temperature": 1}}},
                  {"judge": "llm", "max_reasks": 1, "deployment": dep}):
        assert judge_identity(resolve_judge(other)) != base, other


def test_payloads_carry_what_the_worker_reads():
    """The payload is the job's input as the worker reads it (the key covers the same values)."""
    docs = [["d1", "Rayleigh scattering", "Sky"], ["d2", "Mie scattering", "Clouds"]]
    topic = ["q1", "why is the sky blue"]
    assert relevance_job("j", "p", TOPIC, DOCS, S)[1] == {"topic": topic, "documents": docs, "batch": 10}
    assert create_job("j", "p", TOPIC, DOCS, S)[1] == {"topic": topic, "documents": docs, "window": 10, "max_nuggets": 30}
    assert importance_job("j", "p", TOPIC, NUGGETS, DOCS, S)[1] == {"topic": topic, "nuggets": NUGGETS, "batch": 10,
                                                                   "documents": docs}
    assert assign_job("j", "p", TOPIC, ANSWER, PAIRS, S)[1] == {
        "topic": topic, "answer": {"run_id": "run1", "qid": "q1", "text": ANSWER.text, "sentences": list(ANSWER.sentences)},
        "nuggets": [list(p) for p in PAIRS], "batch": 10}
