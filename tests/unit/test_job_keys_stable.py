"""Job keys and response-cache keys stay what they were before the deployment became one typed value (issue 31).

A rerun of an existing results folder must reuse its stored jobs, and a response cache its replies, so the keys of
existing configs may not move.  The values below were computed by the code *before* the change (commit b4c3574,
where ``judge_identity`` hashed the raw judge-config dict minus a hand-kept ignore list): the shipped judge configs
composed as a sweep composes them, and mappings that name or leave out the optional identity fields (``name``,
``revision``, ``params``) and set every field that is not part of the identity (limits, prices, URL, replicas,
resources, mode, batch).
"""

from __future__ import annotations

import pytest

from metaeval.judges.catalog import resolve_judge
from metaeval.pipeline.grid import make_cell
from metaeval.pipeline.specs import JobSpec

PROMPT_V1 = {"name": "v1", "create": "create@v1", "importance": "importance@v1", "assign": "assign@v1"}

#: (judge config, prompt, cell, judge id, prompt id, key of an assign job, key of a create job), recorded before;
#: judge "demo" is the default grid (``metaeval sweep`` with no overrides)
COMPOSED = [
    ('testserver', 'v1', 'testserver__v1__human_auto', '0104d35dd804a79d', '1603571e705db32a', '92f76679a617390c61b39025', '3db1054efc80035ba3c6c07f'),
    ('gpt-4o', 'v2_json', 'gpt-4o__v2_json__human_auto', '1ca7198b7f7b32d4', '09e2b72d557d40fb', '223ccad730e1709b16d95e75', '7eb096167e00899f483e1982'),
    ('claude-batch', 'v1', 'claude-batch__v1__human_auto', '176e8bca1789c2e7', '1603571e705db32a', '720f40dcef2e4266c52c5c77', '272319fce1d292e5fcb4d7e3'),
    ('lexical', 'v1', 'lexical__human_auto', 'cad326f2803ebc08', 'none', '7d169bd35c76b0871857dcde', '011156eb0f8b5322b14230ee'),
    ('local_llm', 'v1', 'local_llm__v1__human_auto', '8028ca72d408dcaa', '1603571e705db32a', '5f2c3c31fe404312108b99d3', 'c48f882fcc90a57e19e0f029'),
    ('demo', '', 'simulated_fig6__human_auto', '02983bbedf4c859a', 'none', '31f29dc25be98ded233ba0fd', '543bf6c0c43a899410b73962'),
    ('demo', '', 'lexical_strict__auto_auto', '86f289a1c8bd7770', 'none', '1b525aa9b44cfd90069aa6ff', '7888af311b54572e9d6b85e4'),
]

MAPPINGS = {
    "bare_no_name": {"backend": "openai", "model": "m1"},
    "bare_named": {"backend": "openai", "model": "m1", "name": "dep"},
    "llm_revision": {"judge": "llm", "deployment": {"backend": "openai", "model": "m1", "revision": "r2",
                                                   "params": {"temperature": 0.7}}},
    "llm_revision_null": {"judge": "llm", "deployment": {"backend": "openai", "model": "m1", "revision": None,
                                                        "params": {}}},
    "llm_all": {"judge": "llm", "name": "x", "max_reasks": 1, "seed": 3, "sample_index": 2,
                "structured_output": "json_schema",
                "deployment": {"name": "d", "backend": "openai", "model": "m1", "base_url": "http://h/v1",
                               "api_key_env": None, "params": {"temperature": 0.0, "max_tokens": 9},
                               "limits": {"concurrency": 3}, "prices": {"input_per_1m": 1}, "replicas": 2,
                               "resources": {"num_cpus": 1}, "mode": "sync", "batch": {}}},
    "anthropic_batch": {"judge": "llm", "deployment": {"backend": "anthropic", "model": "c", "mode": "batch",
                                                      "batch": {"window_s": 1}}},
    "lexical_opts": {"judge": "lexical", "support_threshold": 0.5},
}
#: (mapping, judge id, assign key, create key), recorded before
MAPPED = [
    ('bare_no_name', '680c236f5aa8ce50', 'f70341a841d40040b084bba6', '7c68ed562177d5de3bf8bee3'),
    ('bare_named', '00b4645da7df9dec', '7c27fb9fcb40b019725adb16', '9a949a33ed2fce44ad218790'),
    ('llm_revision', '43e831fc44bfb9c3', '6046e80beaa9ddb75e3f1cbb', 'ce82b1c88db85952c5576501'),
    ('llm_revision_null', 'a2b226036ceb88aa', '6bc2aefff749ee235434daf6', '5c7acd97c539d34b8536ed16'),
    ('llm_all', '29fa7f3478c7faf9', '7263160a181d8cc979503715', '999644cb635276d86631daaa'),
    ('anthropic_batch', 'd301f4f9f9d40450', '2100dadea4000ffb003ff127', 'fdee43594c94a2182483534c'),
    ('lexical_opts', '34a55e90a1624d0a', 'c32a7920a670e8d1438c5c26', 'a993d49eefa5d2655ca81324'),
]
#: response-cache key of one (system, user) call per shipped llm deployment, recorded before
CACHE = [
    ('claude-batch', '06c9366d50f5152420c965b5063584deb1e05db3c9710818684b1821403b3509'),
    ('gpt-4o', 'ad1f9f98bcb0642bf5e6357835401c7eece42cdea8256439224edd7aa1430150'),
    ('testserver', 'af905e7dd917ad233dbedc709ce9dbf2ec7cb30ab6f4f9fd3f420a57e300ffae'),
    ('vllm', '334e50190b709e2c768b60c9358095751f2d47980c72685da9c870921a8280f5'),
]


def _keys(cell):
    assign = JobSpec("assign", cell.judge_id, cell.prompt_id, "2024-145979", "abc123", run_id="runA", sample=0).key
    create = JobSpec("create", cell.judge_id, cell.prompt_id, "2024-145979", "def456").key
    return assign, create


@pytest.mark.parametrize("judge,prompt,cell_id,judge_id,prompt_id,assign,create", COMPOSED)
def test_composed_configs_keep_their_job_keys(judge, prompt, cell_id, judge_id, prompt_id, assign, create):
    from metaeval.workflow.compose import compose_sweep

    overrides = [] if judge == "demo" else [f"judge={judge}", "grid=single", f"prompt={prompt}", "strategy=human_auto"]
    (cell,) = [c for c in compose_sweep(overrides)[1] if c.id == cell_id]
    assert (cell.judge_id, cell.prompt_id) == (judge_id, prompt_id)
    assert _keys(cell) == (assign, create)


@pytest.mark.parametrize("tag,judge_id,assign,create", MAPPED)
def test_mappings_keep_their_job_keys(tag, judge_id, assign, create):
    cell = make_cell(resolve_judge(MAPPINGS[tag]), PROMPT_V1, "human_auto", "/tmp/cache.sqlite")
    assert cell.judge_id == judge_id and _keys(cell) == (assign, create)


def test_only_identity_fields_move_the_key():
    """Retries, timeouts, concurrency, the URL, prices, replicas and the key's variable leave the key; the model,
    the generation params, the revision and the deployment's name move it."""
    base = {"judge": "llm", "deployment": {"backend": "openai", "model": "m1", "params": {"temperature": 0.0}}}
    jid = make_cell(resolve_judge(base), PROMPT_V1, "human_auto", None).judge_id
    for where, change in (("limits", {"max_retries": 1, "timeout_s": 3, "concurrency": 2}),
                          ("base_url", "http://x/v1"), ("prices", {"input_per_1m": 9}), ("replicas", 3),
                          ("api_key_env", "K")):
        other = {**base, "deployment": {**base["deployment"], where: change}}
        assert make_cell(resolve_judge(other), PROMPT_V1, "human_auto", None).judge_id == jid, where
    for where, change in (("model", "m2"), ("params", {"temperature": 0.5}), ("revision", "r1"), ("name", "other")):
        other = {**base, "deployment": {**base["deployment"], where: change}}
        assert make_cell(resolve_judge(other), PROMPT_V1, "human_auto", None).judge_id != jid, where


@pytest.mark.parametrize("judge,key", CACHE)
def test_response_cache_keys_of_shipped_deployments(judge, key):
    from metaeval.judges.cache import cache_key

    dep = resolve_judge(judge).deployment
    msgs = ({"role": "system", "content": "s"}, {"role": "user", "content": "u"})
    assert cache_key(dep.backend, dep.model, msgs, dict(dep.params), 0, dep.revision, dep.name) == key
