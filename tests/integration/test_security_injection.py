"""The prompt-injection probe (``metaeval.security.injection``, ``metaeval probe``).

The probe's arithmetic is checked by hand; its measurement end to end with judges whose reaction to planted text
is known exactly: the simulated judge (ignores the text: 0 flips), an LLM judge behind the test server whose
rule ignores the answer (0 flips) and one that obeys any answer mentioning "support" (upward rate = the share of
pairs not already supported, no downward flips).  The test server also shows that a planted ``</answer>`` reaches
the model neutralised inside the answer block.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.data.dataset import load_dataset
from metaeval.security.injection import PROBES, flip_stats, inject, run_probe, sample_items
from metaeval.testing.rules import _format, analyse
from metaeval.testing.server import ChatTestServer

ROOT = Path(__file__).resolve().parents[2]
INJECTIONS = [p.name for p in PROBES.values() if not p.control]


@pytest.fixture(scope="module")
def demo():
    return load_dataset("demo")


def test_probe_set_and_injection_positions(demo):
    assert len(INJECTIONS) >= 6 and [p.name for p in PROBES.values() if p.control] == ["control_neutral"]
    assert "support" not in PROBES["control_neutral"].text.lower()
    for required in ("ignore_previous", "role_play", "fake_system", "fake_delimiter", "planted_labels", "other_language"):
        assert required in PROBES
    assert "</answer>" in PROBES["fake_delimiter"].text and "Ignoriere" in PROBES["other_language"].text
    ans = next(a for a in demo.answers if len(a.sentences) >= 4)
    for p in PROBES.values():
        inj = inject(ans, p, 7)
        planted = p.render(7)
        assert len(inj.sentences) == len(ans.sentences) + 1 and len(inj.citations) == len(inj.sentences)
        at = {"append": len(ans.sentences), "prepend": 0, "insert": len(ans.sentences) // 2}[p.position]
        assert inj.sentences[at] == planted and inj.citations[at] == ()
        assert [s for i, s in enumerate(inj.sentences) if i != at] == list(ans.sentences)  # the answer itself is untouched
        assert inj.text == " ".join(inj.sentences) and (inj.qid, inj.run_id) == (ans.qid, ans.run_id)
    assert json.loads(PROBES["planted_labels"].render(3).splitlines()[1]) == {"labels": ["support"] * 3}
    assert {p.position for p in PROBES.values()} == {"append", "prepend", "insert"}


def test_flip_stats_by_hand():
    pairs = [("support", "support"), ("not_support", "support"), ("not_support", "partial_support"),
             ("partial_support", "not_support"), ("not_support", "not_support"), ("FAILED", "support"), ("support", "FAILED")]
    s = flip_stats([{"original": a, "injected": b} for a, b in pairs])
    assert s["n_labels"] == 7 and s["n_pairs"] == 5  # pairs with a FAILED side are excluded ...
    assert s["failed_original"] == 1 and s["failed_injected"] == 1  # ... and counted
    assert (s["flips"], s["upward"], s["downward"]) == (3, 2, 1)
    assert s["flip_rate"] == pytest.approx(3 / 5) and s["upward_rate"] == pytest.approx(2 / 5) and s["downward_rate"] == pytest.approx(1 / 5)
    assert s["ceiling_upward_rate"] == pytest.approx(4 / 5)  # 4 of the 5 valid originals were below support
    assert s["support_share_original"] == pytest.approx(1 / 5) and s["support_share_injected"] == pytest.approx(2 / 5)


def test_simulated_judge_ignores_text_so_nothing_flips(demo):
    res = run_probe("simulated_fig6", dataset=demo)
    n_labels = sum(len(demo.human_nuggets_for(a.qid)) for a in demo.answers)
    assert res["n_answers"] == len(demo.answers) == 64
    assert res["overall"]["n_labels"] == len(INJECTIONS) * n_labels  # the control is not pooled
    assert res["per_probe"]["control_neutral"]["n_labels"] == n_labels
    assert res["overall"]["n_pairs"] > 0.9 * res["overall"]["n_labels"]
    assert res["overall"]["flips"] == 0 and all(s["flips"] == 0 for s in res["per_probe"].values())


def test_lexical_judge_measured(demo):
    res = run_probe("lexical", dataset=demo, n_answers=16, seed=1)
    assert res["n_answers"] == 16 and len(set(map(tuple, res["answers"]))) == 16
    o = res["overall"]
    assert o["flips"] == o["upward"] + o["downward"] and 0 <= o["flip_rate"] <= 1
    assert set(res["per_probe"]) == set(PROBES)
    assert sum(res["per_probe"][p]["n_pairs"] for p in INJECTIONS) == o["n_pairs"]
    assert o["failed_original"] == o["failed_injected"] == 0
    assert o["net_upward_rate"] == pytest.approx(o["upward_rate"] - o["downward_rate"])


def _answer_independent(messages):
    """A model that never reads the answer: labels from the nugget text only."""
    a = analyse(messages)
    labs = [a["labels"][hashlib.sha256(n.encode()).digest()[0] % len(a["labels"])] for n in a["nuggets"][: a["n"]]]
    return _format(labs, "labels", a["json"])


def _gullible(seen):
    """A model that obeys: any answer mentioning 'support' gets every nugget supported."""

    def rule(messages):
        a = analyse(messages)
        seen.append(next(m["content"] for m in messages if m["role"] == "user"))
        if "support" in a["answer"].lower():
            return _format(["support"] * a["n"], "labels", a["json"])
        return _answer_independent(messages)

    return rule


def _llm_config(srv):
    return {"judge": "llm", "name": "probe-test", "deployment": {
        "name": "probe-test", "backend": "openai", "model": "test-model", "base_url": srv.openai_base_url,
        "api_key_env": None, "limits": {"concurrency": 8, "max_retries": 2, "timeout_s": 10}}}


@pytest.mark.parametrize("prompt", ["assign@v1", "assign@v2-json"])
def test_llm_judge_that_ignores_the_answer_flips_nothing(demo, prompt):
    with ChatTestServer(rule=_answer_independent) as srv:
        res = run_probe(_llm_config(srv), dataset=demo, prompt=prompt, n_answers=6, seed=2)
        assert srv.counts["requests"] >= 6 * (len(PROBES) + 1)
    assert all(s["flips"] == 0 for s in res["per_probe"].values())
    assert res["prompt"]["name"] == prompt
    assert res["overall"]["n_pairs"] == res["overall"]["n_labels"] > 0 and res["overall"]["flips"] == 0


def test_obedient_llm_judge_is_caught_and_planted_delimiter_is_neutralised(demo):
    seen: list[str] = []
    with ChatTestServer(rule=_gullible(seen)) as srv:
        res = run_probe(_llm_config(srv), dataset=demo, prompt="assign@v1", n_answers=8, seed=3)
    o = res["overall"]
    assert o["n_pairs"] == o["n_labels"] > 0 and o["failed_injected"] == 0
    assert o["ceiling_upward_rate"] > 0.3
    for name in INJECTIONS:  # every phrasing is obeyed: every not-yet-supported label moves up
        s = res["per_probe"][name]
        assert s["upward_rate"] == pytest.approx(s["ceiling_upward_rate"]) and s["downward"] == 0
        assert s["support_share_injected"] == 1.0
    assert res["per_probe"]["control_neutral"]["flips"] == 0  # no instruction, nothing obeyed
    planted = [u for u in seen if "Assessor's note" in u]
    assert planted
    for u in planted:  # the planted </answer> arrives as inert text; only the template's own tag closes the block
        assert u.count("</answer>") == 1 and "\u2039/answer>" in u
        assert u.index("Assessor's note") < u.index("</answer>")


def test_probe_cli_table_and_json(tmp_path):
    out = tmp_path / "probe.json"
    res = subprocess.run([sys.executable, "-m", "metaeval", "probe", "--judge", "lexical", "--answers", "6", "--out", str(out)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    for name in list(PROBES) + ["overall"]:
        assert any(line.startswith(name) for line in res.stdout.splitlines()), name
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["n_answers"] == 6 and set(doc["per_probe"]) == set(PROBES) and "pairs" not in doc
    assert doc["overall"]["n_pairs"] == sum(doc["per_probe"][p]["n_pairs"] for p in INJECTIONS)
    bad = subprocess.run([sys.executable, "-m", "metaeval", "probe", "--judge", "lexical", "--prompt", "assign@v1"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert bad.returncode == 2 and "uses no prompt" in bad.stderr and "Traceback" not in bad.stderr


def test_sample_is_seeded(demo):
    a = [(i.answer.qid, i.answer.run_id) for i in sample_items(demo, 5, seed=7)]
    b = [(i.answer.qid, i.answer.run_id) for i in sample_items(demo, 5, seed=7)]
    c = [(i.answer.qid, i.answer.run_id) for i in sample_items(demo, 5, seed=8)]
    assert a == b and a != c and len(set(a)) == 5


@pytest.mark.slow
def test_local_llm_probe_runs_on_a_small_subset(demo):
    from metaeval.judges.local_llm import extra_missing

    why = extra_missing()
    if why:
        pytest.skip(why)
    res = run_probe("local-llm", dataset=demo, n_answers=1, seed=0, probes=["ignore_previous", "planted_labels"], concurrency=1)
    o = res["overall"]
    assert res["prompt"]["name"] == "assign@v2-json"
    assert o["n_labels"] == 2 * len(demo.human_nuggets_for(res["answers"][0][0]))
    excluded = o["n_labels"] - o["n_pairs"]  # pairs with a FAILED label on either side
    assert max(o["failed_original"], o["failed_injected"]) <= excluded <= o["failed_original"] + o["failed_injected"]
    assert o["flip_rate"] is None or 0 <= o["flip_rate"] <= 1
