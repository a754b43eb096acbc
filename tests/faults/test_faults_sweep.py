"""Sweep-level fault tests: ``metaeval sweep runtime=serial strategy=human_auto`` on the demo (64 answers, one
assignment call each) with a grid of judges, one per scenario, each a test-server deployment of its own that
injects one kind of fault (429 bursts, a 5xx storm, hangs, dropped connections, prose, wrong length, labels in
another language).  One sweep runs them all side by side (one process start instead of seven: the tier stays
fast), which also shows that faults in one deployment leave the others alone.

After each: no job lost, none duplicated, failures accounted for (``faultkit.check_accounting`` on that cell), and
the requests its server saw equal what the cell's stored job statistics account for.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from metaeval.data.dataset import load_dataset
from metaeval.testing.rules import label_rule
from metaeval.testing.server import Faults
from tests.faults.faultkit import RecordingServer, answer_of, check_accounting, run_sweep

# ------------------------------------------------------------------ a judge that answers in Spanish
SPANISH = {"support": "apoya", "partial_support": "apoya_parcialmente", "not_support": "no_apoya"}


def lang_class(answer: str) -> int:
    """0: always Spanish; 1: Spanish, then English when re-asked; 2: English; 3: only the first label Spanish."""
    return int(hashlib.sha256(answer.encode()).hexdigest()[:8], 16) % 4


def spanish_rule(messages) -> str:
    labels = json.loads(label_rule(messages))  # the v1 prompt asks for a plain list
    cls = lang_class(answer_of(messages))
    reask = sum(m.get("role") == "user" for m in messages) > 1
    if cls == 0 or (cls == 1 and not reask):
        labels = [SPANISH[x] for x in labels]
    elif cls == 3 and labels:
        labels = [SPANISH[labels[0]], *labels[1:]]
    return json.dumps(labels)


# ------------------------------------------------------------------ scenarios
def limits(concurrency: int = 16, max_retries: int = 4, timeout_s: float = 10.0) -> dict:
    """Short timeouts and backoff keep the tests fast."""
    return {"concurrency": concurrency, "max_retries": max_retries, "timeout_s": timeout_s, "backoff_base_s": 0.01,
            "max_backoff_s": 0.05}


BURST = Faults(p_429=1.0, retry_after="0.5")
STORM = Faults(p_500=1.0)
SCENARIOS = {
    # two bursts of 429 (Retry-After: 0.5 s): requests 0-31 and 48-71; waits capped at 1 s, so Retry-After rules
    "burst_429": ({"schedule": lambda n: BURST if n < 32 or 48 <= n < 72 else Faults()},
                  {**limits(max_retries=6), "max_backoff_s": 1.0}),
    # a 5xx storm: the first 100 requests all answer 500; 3 attempts per call, so some calls run out
    "storm_5xx": ({"schedule": lambda n: STORM if n < 100 else Faults()}, limits(max_retries=2)),
    # 20% of requests hang (for 15 s: five times the timeout, so a hang is unmistakable on a loaded machine); the
    # client times out after 3 s and retries (up to 8 times: all 9 attempts of one call hang with p = 0.2^9)
    "hang": ({"faults": Faults(p_hang=0.2, hang_s=15.0, seed=3)}, limits(max_retries=8, timeout_s=3.0)),
    # 30% of connections are dropped mid-request
    "drop": ({"faults": Faults(p_drop=0.3, seed=5)}, limits(max_retries=6)),
    # half the replies are prose without a list
    "prose": ({"faults": Faults(p_malformed=0.5, seed=7)}, limits()),
    # half the replies have one label too many
    "wrong_length": ({"faults": Faults(p_wrong_length=0.5, seed=9)}, limits()),
    # labels in Spanish (see lang_class)
    "language": ({"rule": spanish_rule}, limits()),
}
COMMON = ["runtime=serial", "grid=faults", "calibration.enabled=false", "analysis.bootstrap=0",
          "analysis.metrics=[v_strict]", "+report.enabled=false",
          "++sweep.max_failed_rate=1.0"]  # these tests are about each fault's accounting, not the exit status


def cell(name: str) -> str:
    return f"fault_{name}__v1__human_auto"


def write_conf(folder, servers) -> None:
    """The repository's Hydra configs plus one judge file per scenario and a grid of them."""
    import yaml

    from metaeval.judges.catalog import PACKAGE_CONF

    shutil.copytree(PACKAGE_CONF, folder)
    for name, srv in servers.items():
        judge = {"judge": "llm", "name": f"fault_{name}", "deployment": {
            "name": f"fault_{name}", "backend": "openai", "model": "test-model", "base_url": srv.openai_base_url,
            "api_key_env": None, "params": {"temperature": 0.0, "max_tokens": 512}, "limits": SCENARIOS[name][1],
            "prices": {"input_per_1m": 2.5, "output_per_1m": 10.0}}}
        (folder / "judge" / f"fault_{name}.yaml").write_text(yaml.safe_dump(judge), encoding="utf-8")
    grid = {"judges": [f"fault_{n}" for n in servers], "optional_judges": [], "prompts": ["v1"], "strategies": ["human_auto"]}
    (folder / "grid" / "faults.yaml").write_text(yaml.safe_dump(grid), encoding="utf-8")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    root = tmp_path_factory.mktemp("faults")
    servers = {name: RecordingServer(**kw).start() for name, (kw, _) in SCENARIOS.items()}
    try:
        write_conf(root / "conf", servers)
        res = run_sweep(root / "results", "faults", None, "--config-dir", str(root / "conf"), *COMMON)
        yield {"res": res, "servers": servers, "out": root / "results" / "faults", "conf": root / "conf", "root": root}
    finally:
        for srv in servers.values():
            srv.stop()


def finished(outcomes, name: str, exact: bool = True):
    res = outcomes["res"]
    assert res.returncode == 0, res.stderr[-3000:]
    srv = outcomes["servers"][name]
    acc = check_accounting(outcomes["out"], cell(name))
    assert acc["jobs"] == 64 and acc["summary_cell"]["stats"]["judge_calls"] == 64
    # every request this deployment's server saw is one the cell's stored job statistics account for (calls that
    # were not cache hits, their retries, re-asks); cache hits come only from the two identical q02 answers
    if exact:
        assert srv.counts["requests"] == acc["calls"]  # "model requests" count every attempt: retries included
    else:  # an attempt that timed out may not have reached the server's handler yet: it counts on one side only
        assert srv.counts["requests"] <= acc["calls"]
    assert acc["cache_hits"] <= 1 + acc["reasks"]
    return acc, srv


def test_burst_of_429_honours_retry_after_and_loses_nothing(outcomes):
    acc, srv = finished(outcomes, "burst_429")
    assert srv.counts["429"] == 56 and acc["retries"] == 56  # every 429 was retried, none lost a job
    assert acc["failed_labels"] == 0 and acc["calls"] - acc["retries"] + acc["cache_hits"] == 64
    # the same request is not sent again before its Retry-After (0.5 s) has passed (bodies of one job only:
    # the two identical q02 requests interleave)
    by_sha: dict[str, list[dict]] = {}
    for e in srv.log:
        by_sha.setdefault(e["sha"], []).append(e)
    single = [seq for seq in by_sha.values() if sum(e["status"] == 200 for e in seq) == 1]
    waits = [b["t"] - a["t"] for seq in single for a, b in zip(seq, seq[1:]) if a["status"] == 429]
    n_429 = sum(e["status"] == 429 for seq in single for e in seq)
    # every 429 of a single-job sequence was followed by a retry, and most of the 56 are in such sequences
    assert len(waits) == n_429 >= 40 and min(waits) >= 0.5 - 0.01, (n_429, sorted(waits)[:3])


def test_5xx_storm_failures_are_failed_with_reasons_counted_and_retried_on_rerun(outcomes):
    acc, srv = finished(outcomes, "storm_5xx")
    assert srv.counts["500"] == 100
    failed = acc["failed_jobs"]
    assert failed, "a 100-request storm with 3 attempts per call should exhaust some calls"
    for r in failed:  # no reply at all: stored as failed (a rerun tries again), every label FAILED with the reason
        assert set(r["output"]["labels"]) == {"FAILED"} and r["stats"]["retries"] == 2
        (f,) = r["output"]["failures"]
        assert "gave up after 3 attempts" in f["reason"] and "HTTP 500" in f["reason"]
    assert acc["summary_cell"]["stats"]["failed_jobs"] == len(failed)
    ds = load_dataset("demo")
    n_nuggets = ds.nuggets.groupby("qid").size().to_dict()
    assert acc["failed_labels"] == sum(n_nuggets[r["spec"]["qid"]] for r in failed)
    # 100 storm requests, then one successful request per surviving job (or a cache hit for the q02 twin)
    assert srv.counts["ok"] + acc["cache_hits"] == 64 - len(failed)

    # the storm is over: a rerun of the whole grid sends exactly the storm cell's failed jobs again, nothing else
    servers = outcomes["servers"]
    before = {name: len(s.log) for name, s in servers.items()}
    again = run_sweep(outcomes["root"] / "results", "faults", None, "--config-dir", str(outcomes["conf"]), *COMMON)
    assert again.returncode == 0, again.stderr[-3000:]
    assert all(len(s.log) == before[name] for name, s in servers.items() if name != "storm_5xx")
    sent = {e["answer"] for e in srv.log[before["storm_5xx"]:]}
    failed_texts = {a.text.strip() for a in ds.answers if (a.qid, a.run_id) in {(r["spec"]["qid"], r["spec"]["run_id"]) for r in failed}}
    failed_keys = {(r["spec"]["qid"], r["spec"]["run_id"]) for r in failed}
    done_texts = {a.text.strip() for a in ds.answers if (a.qid, a.run_id) not in failed_keys}
    # only failed jobs go out again; a failed job whose identical twin (same answer text) succeeded is answered
    # from the cache instead
    assert sent <= failed_texts and failed_texts - sent <= done_texts
    assert all(e["status"] == 200 for e in srv.log[before["storm_5xx"]:])
    acc2 = check_accounting(outcomes["out"], cell("storm_5xx"))
    assert acc2["failed_labels"] == 0 and not acc2["failed_jobs"]


def test_hung_requests_time_out_and_are_retried(outcomes):
    acc, srv = finished(outcomes, "hang", exact=False)
    assert srv.counts["hang"] > 0
    # each hung attempt timed out on the client and was retried (unless it was a call's last attempt); attempts that
    # timed out before the busy server read them are retried too but never seen by it
    assert acc["retries"] >= srv.counts["hang"] - len(acc["failed_jobs"])
    assert all("timed out" in r for r in acc["reasons"])  # if a call ran out of retries, it says why


def test_dropped_connections_are_retried(outcomes):
    acc, srv = finished(outcomes, "drop")
    assert srv.counts["drop"] > 0 and acc["retries"] == srv.counts["drop"]
    assert all("connection" in r for r in acc["reasons"])  # if a call ran out of retries, it says why


def test_prose_replies_are_reasked_then_failed_with_raw_text(outcomes):
    acc, srv = finished(outcomes, "prose")
    assert srv.counts["malformed"] > 0 and acc["retries"] == 0
    assert acc["retries"] == 0 and acc["calls"] + acc["cache_hits"] == 64 + acc["reasks"]  # re-asks: the only extra requests
    assert sum(e["reask"] for e in srv.log) <= acc["reasks"]
    failed = [r for r in acc["assign"].values() if r["output"].get("failures")]
    recovered = [r for r in acc["assign"].values() if r["stats"]["reasks"] and not r["output"].get("failures")]
    assert failed and recovered
    for r in failed:  # a reply came back: the job is done, its items FAILED with the raw reply kept
        (f,) = r["output"]["failures"]
        assert f["reason"] == "unusable reply after 2 re-ask(s): no list found in the reply"
        assert f["raw"] == "I am not able to grade these nuggets, sorry."
        assert r["status"] == "done" and r["stats"]["reasks"] == 2 and set(r["output"]["labels"]) == {"FAILED"}


def test_wrong_number_of_labels_is_reasked_then_failed(outcomes):
    acc, srv = finished(outcomes, "wrong_length")
    assert srv.counts["wrong_length"] > 0
    assert acc["retries"] == 0 and acc["calls"] + acc["cache_hits"] == 64 + acc["reasks"]
    failed = [r for r in acc["assign"].values() if r["output"].get("failures")]
    assert failed
    for r in failed:
        n = len(r["output"]["labels"])
        (f,) = r["output"]["failures"]
        assert f["reason"] == f"unusable reply after 2 re-ask(s): expected exactly {n} labels, got {n + 1}"
        assert len(json.loads(f["raw"])) == n + 1 and set(r["output"]["labels"]) == {"FAILED"}


def test_labels_in_another_language_are_failed_never_defaulted(outcomes):
    acc, srv = finished(outcomes, "language")
    ds = load_dataset("demo")
    n_nuggets = ds.nuggets.groupby("qid").size().to_dict()
    cls = {(a.qid, a.run_id): lang_class(a.text.strip()) for a in ds.answers}
    by_cls = {c: [k for k, v in cls.items() if v == c] for c in range(4)}
    assert all(by_cls[c] for c in range(4)), "the demo should exercise every class"
    # exact re-ask count: two for answers that stay (partly) Spanish, one for those that switch when re-asked
    want_reasks = 2 * (len(by_cls[0]) + len(by_cls[3])) + len(by_cls[1])
    assert acc["reasks"] == want_reasks and acc["calls"] + acc["cache_hits"] == 64 + want_reasks
    # exact FAILED count: every label of always-Spanish answers, the first label of class 3
    assert acc["failed_labels"] == sum(n_nuggets[q] for q, _ in by_cls[0]) + len(by_cls[3])
    for key, rec in acc["assign"].items():
        labels = rec["output"]["labels"]
        if cls[key] == 0:
            assert set(labels) == {"FAILED"} and "unknown label(s)" in rec["output"]["failures"][0]["reason"]
            assert "apoya" in rec["output"]["failures"][0]["raw"]  # the raw reply is kept
        elif cls[key] == 3:
            assert labels[0] == "FAILED" and "FAILED" not in labels[1:]  # only the unknown item fails
        else:
            assert "FAILED" not in labels
