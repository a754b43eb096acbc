"""How a judge deployment's replicas share its limits and get their Ray resources (no Ray needed)."""

from __future__ import annotations

import pytest

from metaeval.errors import ConfigError
from metaeval.judges.config import Deployment, Prices
from metaeval.pipeline.ray_setup import _Secrets
from metaeval.pipeline.replicas import actor_options, replica_plan


def _cfg(**dep):
    return {"judge": "llm", "name": "j", "deployment": {"backend": "openai", "model": "m", **dep}}


def test_concurrency_is_split_and_rates_divided():
    plan = replica_plan(_cfg(replicas=3, limits={"concurrency": 8, "rpm": 600, "tpm": 90000}), 8)
    assert [c for _, c, _ in plan] == [3, 3, 2]  # sums to the deployment's 8
    lims = [cfg["deployment"]["limits"] for _, _, cfg in plan]
    assert [lim["concurrency"] for lim in lims] == [3, 3, 2]
    assert all(lim["rpm"] == 200 and lim["tpm"] == 30000 for lim in lims)


def test_one_replica_keeps_the_config_object():
    cfg = _cfg(resources={"num_gpus": 1})
    ((res, conc, out),) = replica_plan(cfg, 4)
    assert out is cfg and conc == 4 and res == {"num_gpus": 1.0}
    assert actor_options(res, conc) == {"max_concurrency": 4, "max_restarts": 3, "num_cpus": 0, "num_gpus": 1.0}


def test_resource_list_pins_each_replica():
    plan = replica_plan(_cfg(resources=[{"head_node": 0.01}, {"worker_node": 0.01, "num_cpus": 1}]), 2)
    opts = [actor_options(res, conc) for res, conc, _ in plan]
    assert opts[0]["resources"] == {"head_node": 0.01} and opts[1]["resources"] == {"worker_node": 0.01}
    assert opts[1]["num_cpus"] == 1.0 and [o["max_concurrency"] for o in opts] == [1, 1]


def test_more_replicas_than_concurrency_still_one_each():
    assert [c for _, c, _ in replica_plan(_cfg(replicas=4), 2)] == [1, 1, 1, 1]


def test_deployment_validates_replicas_resources_mode():
    d = Deployment.from_dict({"backend": "openai", "model": "m", "resources": [{"a": 1}, {"b": 1}]})
    assert d.replicas == 2 and d.replica_resources(1) == {"b": 1}
    for bad in ({"replicas": 0}, {"replicas": 2, "resources": [{"a": 1}] * 3}, {"resources": {"num_gpus": -1}},
                {"mode": "bulk"}, {"resources": "gpu"}):
        with pytest.raises(ConfigError):
            Deployment.from_dict({"backend": "openai", "model": "m", **bad})


def test_batch_prices_default_to_half_and_can_be_set():
    p = Prices(input_per_1m=2.5, output_per_1m=10.0)
    assert p.for_mode("sync") is p
    assert p.for_mode("batch").cost(1_000_000, 1_000_000) == pytest.approx(1.25 + 5.0)
    q = Prices(2.5, 10.0, batch_input_per_1m=1.0, batch_output_per_1m=4.0)
    assert q.for_mode("batch").cost(2_000_000, 500_000) == pytest.approx(2.0 + 2.0)
    d = Deployment.from_dict({"backend": "anthropic", "model": "m", "mode": "batch", "prices": {"input_per_1m": 3, "output_per_1m": 15}})
    assert d.effective_prices.cost(1_000_000, 0) == pytest.approx(1.5)


def test_secrets_repr_names_only(monkeypatch):
    s = _Secrets({"OPENAI_API_KEY": "sk-very-secret"})
    assert "sk-very-secret" not in repr(s) and "OPENAI_API_KEY" in repr(s)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    s.apply()
    import os

    assert os.environ["OPENAI_API_KEY"] == "sk-very-secret"
    monkeypatch.delenv("OPENAI_API_KEY")


def test_judge_spec_prices_are_the_batch_prices_in_batch_mode():
    """The dry run and the budget price jobs with ``JudgeSpec.prices``: half in batch mode."""
    from metaeval.judges.catalog import resolve_judge

    dep = {"backend": "openai", "model": "m", "prices": {"input_per_1m": 2.0, "output_per_1m": 8.0}}
    sync = resolve_judge({"judge": "llm", "deployment": dep})
    batch = resolve_judge({"judge": "llm", "deployment": {**dep, "mode": "batch"}})
    assert sync.prices.cost(1000, 100) == pytest.approx(2 * batch.prices.cost(1000, 100))


def test_ray_client_address_without_the_extra_is_one_config_error():
    """``ray://`` needs ``ray[client]`` (not installed by ``ray``): one ConfigError line pointing at the GCS address."""
    import ray

    from metaeval.pipeline.ray_setup import init_ray

    if ray.is_initialized():  # pragma: no cover - another test's runtime in this process
        pytest.skip("a Ray runtime is already up in this process")
    try:
        import ray.util.client.server  # noqa: F401
        has_client = __import__("importlib").util.find_spec("grpc") is not None
    except ImportError:
        has_client = False
    if has_client:
        pytest.skip("the Ray Client extra is installed here")
    with pytest.raises(ConfigError, match="GCS address HOST:PORT"):
        init_ray("ray://127.0.0.1:1")


def test_auto_replicas_one_per_32_in_flight_for_http_deployments_up_to_the_limit():
    """``replicas: auto`` (the default): an HTTP deployment in sync mode gets one actor per 32 requests in flight,
    at most ``auto_limit`` (the executor's share of Ray's CPUs); everything else gets one."""
    from metaeval.pipeline.replicas import REQUESTS_PER_REPLICA, auto_replicas

    assert REQUESTS_PER_REPLICA == 32
    n = lambda cfg, conc, limit: len(replica_plan(cfg, conc, limit))  # noqa: E731
    assert n(_cfg(), 128, 2) == 2 and n(_cfg(replicas="auto"), 128, 4) == 4 and n(_cfg(), 128, 8) == 4
    assert n(_cfg(), 63, 8) == 1 and n(_cfg(), 64, 8) == 2 and n(_cfg(), 64, 1) == 1
    assert n(_cfg(backend="anthropic"), 96, 8) == 3
    assert n(_cfg(mode="batch"), 256, 8) == 1  # one batch client
    assert n(_cfg(resources={"num_gpus": 1}), 256, 8) == 1  # a deployment holding resources: set replicas yourself
    assert n(_cfg(replicas=1), 256, 8) == 1  # explicit wins
    assert n(_cfg(resources=[{"a": 1}, {"b": 1}, {"c": 1}]), 256, 8) == 3  # one per listed mapping
    assert n({"judge": "simulated", "name": "s"}, 256, 8) == 1  # offline judge: no HTTP client to spread
    plan = replica_plan(_cfg(limits={"concurrency": 128, "rpm": 1000}), 128, 2)
    assert [c for _, c, _ in plan] == [64, 64] and [p["deployment"]["limits"]["rpm"] for _, _, p in plan] == [500, 500]
    assert auto_replicas(_cfg(), 0, 8) == 1


def test_deployment_replicas_auto_by_default_and_validated():
    d = Deployment.from_dict({"backend": "openai", "model": "m"})
    assert d.replicas == "auto"
    assert Deployment(name="m", backend="openai", model="m", resources=({"a": 1}, {"b": 1})).replicas == 2
    for bad in ("many", 1.5, True, -1):
        with pytest.raises(ConfigError, match="replicas must be an integer >= 1 or 'auto'"):
            Deployment.from_dict({"backend": "openai", "model": "m", "replicas": bad})


def test_auto_replicas_never_asks_for_ray_by_itself():
    from metaeval.judges.catalog import resolve_judge
    from metaeval.pipeline.choose_executor import resolve_executor

    one = resolve_judge({"judge": "llm", "deployment": {"backend": "openai", "model": "m", "limits": {"concurrency": 256}}})
    two = resolve_judge({"judge": "llm", "deployment": {"backend": "openai", "model": "m", "replicas": 2}})
    assert resolve_executor("auto", [one]) == "serial" and resolve_executor("auto", [two]) == "ray"
