"""Job specs, strategies, results store and the asyncio executor."""

from __future__ import annotations

import json

import pytest

from metaeval.errors import ConfigError
from metaeval.pipeline.executors import AsyncioExecutor, Job
from metaeval.hashing import content_hash
from metaeval.pipeline.specs import JobSpec, judge_identity
from metaeval.pipeline.store import ResultsStore
from metaeval.pipeline.strategies import STRATEGIES, get_strategy
from tests.helpers.workers import make_echo_worker


def test_spec_key_is_content_hash_and_stable():
    a = JobSpec("assign", "j1", "p1", "q1", "abc", run_id="r1")
    b = JobSpec("assign", "j1", "p1", "q1", "abc", run_id="r1")
    c = JobSpec("assign", "j1", "p1", "q1", "abd", run_id="r1")
    assert a.key == b.key and a.key != c.key and len(a.key) == 24
    assert content_hash({"x": 1, "y": 2}) == content_hash({"y": 2, "x": 1})


def test_judge_identity_ignores_limits_and_prices():
    from metaeval.judges.catalog import resolve_judge

    base = {"judge": "llm", "deployment": {"backend": "openai", "model": "m", "params": {"temperature": 0}}}
    other = json.loads(json.dumps(base))
    other["deployment"]["limits"] = {"concurrency": 99, "max_retries": 1, "timeout_s": 5}
    other["deployment"]["prices"] = {"input_per_1m": 5}
    other["deployment"]["base_url"] = "http://127.0.0.1:9/v1"
    assert judge_identity(resolve_judge(base)) == judge_identity(resolve_judge(other))
    other["deployment"]["params"]["temperature"] = 1
    assert judge_identity(resolve_judge(base)) != judge_identity(resolve_judge(other))


def test_strategies_declare_their_stages():
    assert get_strategy("auto_auto").judge_stages == ("create", "importance", "assign")
    assert get_strategy("human_auto").judge_stages == ("assign",)
    assert get_strategy("human_judge_importance").judge_stages == ("importance", "assign")
    assert get_strategy("human_human").judge_stages == ()
    assert set(STRATEGIES) == {"auto_auto", "human_auto", "human_judge_importance", "human_human"}
    with pytest.raises(ConfigError, match="unknown strategy"):
        get_strategy("auto")


def test_store_resumes_and_drops_a_cut_line(tmp_path):
    specs = [JobSpec("assign", "j", "p", f"q{i}", "h") for i in range(3)]
    with ResultsStore(tmp_path) as store:
        for s in specs[:2]:
            store.put(s, "done", {"labels": ["support"]})
    with open(tmp_path / "jobs.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"key": "half a line')  # a crash in the middle of a write
    with ResultsStore(tmp_path) as store:
        assert len(store) == 2 and specs[0].key in store and specs[2].key not in store
        store.put(specs[2], "failed", {"error": "x"})
    lines = (tmp_path / "jobs.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(json.loads(x)["key"] for x in lines)


def test_asyncio_executor_bounded_concurrency_and_failures():
    jobs = [Job(key=str(i), worker_id="w", stage="assign", payload={"i": i, "sleep": 0.01, "fail": i == 7}) for i in range(40)]
    got = {}
    ex = AsyncioExecutor(make_echo_worker, {"w": {"name": "w"}}, {"w": 4})
    ex.run(jobs, lambda job, res: got.__setitem__(job.key, res))
    assert len(got) == 40
    assert isinstance(got["7"], RuntimeError)
    peaks = [r["peak"] for k, r in got.items() if k != "7"]
    assert max(peaks) == 4  # never more than the deployment's concurrency
