"""k = 5 samples of a sampling LLM judge through the real pipeline (sweep -> client -> cache -> wire -> parse)
against metaeval's test server, then ``metaeval plan`` on the k label sets and ``metaeval report`` on the first.

Run from the repository root (about 3-6 minutes on 2 busy cores):

    .venv/bin/python experiments/assessor_plan/sampling_sweep.py [--k 5] [--alpha 2]

The server's rule is a *sampling Figure 6 judge*: for each (nugget, answer) it finds the NIST human label (by
normalised nugget text and answer text), gives the pair a fixed propensity ``p ~ Dirichlet(alpha * C[h, :])``
(seeded by the pair, so every request sees the same ``p``) and answers each request with a fresh draw from
``p`` - what an LLM at temperature > 0 does.  Pairs it cannot match get the default test-server label.
The k samples are ONE sweep with ``sweep.samples=k`` at temperature 0.7 (sample i of a call is its own request:
the sample index is part of the response-cache key); the study writes the judge's self-consistency
(``cells/<cell>/consistency.json``, the summary and the report's "Judge self-consistency" section).

Outputs in ``results/assessor_plan/sampling_sweep/``: ``sampled/`` (the sweep's results folder), ``plan/``
(``metaeval plan --judge sampled/cells/<cell>``, which reads all k draws; also written into ``sampled/study/`` so
``metaeval report`` shows it), ``sampled/report.html``, ``run.json`` (commands, match rate, timings).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from metaeval.calibration.pairing import normalise_text  # noqa: E402
from metaeval.io import load_labels  # noqa: E402
from metaeval.simulation import labels_to_codes, resolve_confusion  # noqa: E402
from metaeval.testing import rules  # noqa: E402
from metaeval.testing.server import ChatTestServer  # noqa: E402

NIST = ROOT.parent / "shared" / "data" / "trec-rag-2024" / "nugget_assignment.20241108.jl"
OUT = ROOT / "results" / "assessor_plan" / "sampling_sweep"
CELL = "testserver__v1__human_auto"
LABELS = ("not_support", "partial_support", "support")


def _answer_key(text: str) -> str:
    return " ".join(str(text).split())


def sampling_rule(human, alpha: float, seed: int):
    """The server rule (module docstring) and a counter of matched / unmatched nuggets."""
    C = resolve_confusion("paper-fig6-edits")
    lab = human.labels
    texts = dict(zip(zip(human.answers["qid"], human.answers["run_id"]), human.answers["answer_text"]))
    codes = labels_to_codes(lab["support"].astype(object).to_numpy())
    table: dict[tuple[str, str], int] = {}
    for q, r, nug, c in zip(lab["qid"], lab["run_id"], lab["nugget"], codes):
        table[(normalise_text(nug), _answer_key(texts[(q, r)] or ""))] = int(c)
    rng = random.Random(seed)
    lock = threading.Lock()
    counts = {"matched": 0, "unmatched": 0}

    def rule(messages):
        a = rules.analyse(messages)
        if a["task"] != "assign" or "partial_support" not in a["labels"]:
            return rules.label_rule(messages)
        out = []
        ans = _answer_key(a["answer"])
        for nug in a["nuggets"][: a["n"]]:
            h = table.get((normalise_text(nug), ans))
            if h is None or h < 0:
                counts["unmatched"] += 1
                out.append(rules._pick(a["labels"], nug, a["answer"]))
                continue
            counts["matched"] += 1
            pair = np.random.default_rng(int.from_bytes(hashlib.sha256(f"{nug}\x1f{ans}".encode()).digest()[:8], "little"))
            p = pair.gamma(alpha * np.maximum(C[h], 1e-9))
            p /= p.sum()
            with lock:
                u = rng.random()
            out.append(LABELS[int(np.searchsorted(np.cumsum(p), u, side="right").clip(0, 2))])
        out += ["not_support"] * (a["n"] - len(out))
        return rules._format(out, "labels", a["json"])

    return rule, counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--alpha", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    human = load_labels(NIST, name="nist")
    rule, counts = sampling_rule(human, args.alpha, args.seed)
    log: dict = {"args": vars(args), "commands": [], "sweep_s": []}
    t0 = time.time()
    with ChatTestServer(rule=rule) as srv:
        cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "grid=single", "judge=testserver",
               "strategy=human_auto", "dataset=trec-rag-2024", f"dataset.source={NIST}", "runtime=serial",
               f"judge.deployment.base_url={srv.openai_base_url}", "judge.deployment.params.temperature=0.7",
               f"sweep.samples={args.k}", "calibration.enabled=false", "analysis.bootstrap=200",
               f"results_dir={OUT}", "name=sampled",
               # its own response cache, so every run sends its requests (results/.cache may hold these draws)
               f"cache.path={OUT / 'sampled.cache.sqlite'}"]
        t1 = time.time()
        for attempt in range(3):  # finished jobs are reused (content-hashed); retry transient failures
            res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=3600)
            if res.returncode == 0:
                break
            time.sleep(10)
        log["commands"].append(" ".join(cmd[1:]).replace(srv.openai_base_url, "http://127.0.0.1:PORT/v1"))
        log["sweep_s"].append(time.time() - t1)
        if res.returncode != 0:
            raise SystemExit(f"sweep failed (rc {res.returncode}):\n{res.stderr[-3000:]}")
        print(f"[{time.time() - t0:.0f}s] {args.k} samples: {counts}", flush=True)
        print("\n".join(line for line in res.stdout.splitlines() if "flip rate" in line or "held-out run MAE" in line))
        log["requests"] = srv.counts["requests"]
    log["match"] = dict(counts)
    judges = ["--judge", str(OUT / "sampled" / "cells" / CELL)]  # a sampled cell folder: all k draws
    plan_cmd = [sys.executable, "-m", "metaeval", "plan", "--reference", str(NIST), *judges, "--metric", "V_strict",
                "--total-topics", "301", "--reps", "400", "--replay-reps", "100", "--out", str(OUT / "plan"),
                "--results", str(OUT / "sampled")]
    res = subprocess.run(plan_cmd, capture_output=True, text=True, cwd=ROOT, timeout=1800)
    print(res.stdout[-4000:], res.stderr[-2000:])
    log["plan_command"] = " ".join(plan_cmd[1:])
    rep = subprocess.run([sys.executable, "-m", "metaeval", "report", str(OUT / "sampled")], capture_output=True,
                         text=True, cwd=ROOT, timeout=600)
    log["report_rc"] = rep.returncode
    print(rep.stdout[-1500:], rep.stderr[-1500:])
    log["wall_s"] = time.time() - t0
    (OUT / "run.json").write_text(json.dumps(log, indent=2), encoding="utf-8")
    print(f"wrote {OUT} in {log['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
