"""Round three of the hostile corpus (issue 33): every attack of the adversarial probe through the real
``metaeval`` commands, in subprocesses started together by one module fixture.

Each case names the probe's row.  Refusals end with exit 2 and ONE error line (no traceback); the usable-output
cases end with exit 4.  Where an attack aimed at a file (a link's target, an input given as the output), the file
is checked unchanged; where it aimed at a key, the key is searched in every byte the command printed or wrote.
No case needs a server: the refusals happen before any request (a sweep against a closed port for row 14).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers.cli_cases import assert_no_traceback_and_exit, assert_one_error_line, run_all

#: 30 CLI runs, three at a time, in one module fixture: on a loaded 2-core machine more than the default 900 s
pytestmark = pytest.mark.timeout(1800)

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
DEMO = ROOT / "metaeval" / "data" / "demo"
KEY = "sk-round3-sentinel-7f3a9c2b1e0d4"
KEEP = "KEEP: not metaeval's file\n"

SW = ["sweep", "--no-progress", "runtime=serial", "grid=single", "strategy=human_auto", "analysis.bootstrap=0",
      "calibration.enabled=false", "+report.enabled=false", "results_dir={tmp}/results", "--config-dir", "{tmp}/conf"]
HOSTILE = """judge: llm
name: {name}
deployment:
  name: hostile
  backend: openai
  model: {model}
  base_url: http://127.0.0.1:{port}/v1
  api_key_env: ROUND3_KEY
  params: {{temperature: 0.0, max_tokens: 64}}
  limits: {{concurrency: 4, max_retries: 0, timeout_s: 2}}
  prices: {{input_per_1m: 1.0, output_per_1m: 2.0}}
"""


@dataclass
class Case:
    id: str
    argv: list[str]
    rc: int
    must: tuple[str, ...]
    #: files (relative to the case folder) that must still hold KEEP afterwards
    untouched: tuple[str, ...] = ()
    #: whether the key must be absent from the output and every file written
    no_key: bool = False
    prepare: str = ""


def _cases() -> list[Case]:
    out = []
    for what in (".lock", "jobs.jsonl", "jobs.quarantine.jsonl"):  # row 1
        out.append(Case(f"r01-link-{what.strip('.')}", [*SW, "judge=lexical", "name=x"], 2,
                        ("is a symbolic link", what), untouched=("victim.txt",), prepare=f"link:{what}"))
    out += [
        # row 2: a key resolved by OmegaConf in the folder name, in a judge file's model; --cfg job
        Case("r02-name-oc-env", [*SW, "judge=hostile", "name=${oc.env:ROUND3_KEY}"], 2,
             ("name: holds the value of environment variable ROUND3_KEY",), no_key=True),
        Case("r02-cfg-job", [*SW, "judge=hostile", "name=${oc.env:ROUND3_KEY}", "--cfg", "job"], 2,
             ("holds the value of environment variable ROUND3_KEY",), no_key=True),
        Case("r02-model-oc-env", [*SW, "judge=hostile_model", "name=m"], 2,
             ("judge.deployment.model: holds the value",), no_key=True),
        # row 3: userinfo in base_url
        Case("r03-userinfo", ["judge", "check", "hostile", "--config-dir", "{tmp}/conf", "--base-url",
                              f"http://u:{KEY}@127.0.0.1:9/v1"], 2, ("base_url carries user info",), no_key=True),
        Case("r03-userinfo-sweep", [*SW, "judge=hostile", "name=u", "judge.deployment.base_url=http://u:pw@127.0.0.1:9/v1"],
             2, ("base_url carries user info",)),
        # row 4: a key as a parameter or a header
        Case("r04-param", [*SW, "judge=hostile", "name=p", f"+judge.deployment.params.api_key={KEY}"], 2,
             ("params.api_key",), no_key=True),
        Case("r04-param-other-key", [*SW, "judge=hostile", "name=p", "+judge.deployment.params.api_key=sk-some-other"],
             2, ("params.api_key: a credential",)),
        Case("r04-header", [*SW, "judge=hostile", "name=h", "+judge.deployment.params.extra_headers={Authorization:abc}"],
             2, ("params.extra_headers.Authorization",)),
        Case("r04-bearer", [*SW, "judge=hostile", "name=h", "+judge.deployment.params.extra_headers={X-A:'Bearer abc'}"],
             2, ("Authorization-style value",)),
        # row 5: an output that is an input
        Case("r05-score-out", ["score", "{tmp}/in.jsonl", "--out", "{tmp}/in.jsonl"], 2,
             ("--out", "is an input of this command"), untouched=("in.jsonl",), prepare="input"),
        Case("r05-score-runs-out", ["score", "{tmp}/in.jsonl", "--out", "{tmp}/s.csv", "--runs-out", "{tmp}/./in.jsonl"],
             2, ("--runs-out",), untouched=("in.jsonl",), prepare="input"),
        Case("r05-score-hard-link", ["score", "{tmp}/in.jsonl", "--out", "{tmp}/hard.jsonl"], 2,
             ("is an input",), untouched=("in.jsonl",), prepare="input,hardlink"),
        Case("r05-assign-out", ["assign", "--nuggets", f"{DEMO}/nuggets.jsonl", "--answers", "{tmp}/in.jsonl",
                                "--judge", "lexical", "--no-cache", "--out", "{tmp}/in.jsonl"], 2,
             ("--out", "is an input"), untouched=("in.jsonl",), prepare="input"),
        # row 7: one deployment name, two servers
        Case("r07-two-urls", [*SW, "--dry-run", "grid.judges=[hostile,hostile_b]", "name=t"], 2,
             ("share deployment name 'hostile' but point at different servers",)),
        # row 9: cache.path over SQLite's limit (the dry run too)
        Case("r09-cache-path", [*SW, "--dry-run", "judge=hostile", "name=c",
                                "cache.path={tmp}/" + "d" * 250 + "/" + "e" * 250 + "/x.sqlite"], 2,
             ("over SQLite's limit",)),
        # row 10
        Case("r10-grid-dict", [*SW, "--dry-run", "grid.judges=[{a:1}]", "name=g"], 2, ("grid.judges[0]", "dict")),
        Case("r10-judge-not-utf8", [*SW, "--dry-run", "judge=latin", "name=l"], 2, ("latin.yaml:3", "not UTF-8")),
        Case("r10-dev-zero", ["score", "/dev/zero"], 2, ("/dev/zero:1", "line longer than")),
        # row 13: billion laughs
        Case("r13-billion-laughs", [*SW, "--dry-run", "judge=bomb6", "name=b"], 2, ("bomb6.yaml", "billion laughs")),
        # row 14: a run that judged nothing / every label FAILED
        Case("r14-no-nuggets", [*SW, "judge=lexical", "name=n", "dataset=trec-rag-2024", "dataset.source={tmp}/nonuggets.jsonl"],
             4, ("nothing was judged",)),
        Case("r14-all-failed", [*SW, "judge=hostile", "name=f", "sweep.max_failed_rate=1.0", "cache=off"], 4,
             ("every label FAILED", "whatever sweep.max_failed_rate says"), no_key=True),
        # row 15
        Case("r15-price-inf", [*SW, "--dry-run", "judge=hostile", "name=i", "judge.deployment.prices.input_per_1m=inf"], 2,
             ("input_per_1m must be a finite number",)),
        Case("r15-timeout-nan", [*SW, "--dry-run", "judge=hostile", "name=i", "judge.deployment.limits.timeout_s=nan"], 2,
             ("timeout_s must be a finite number",)),
        Case("r15-empty-axis", ["sweep", "--dry-run", "-m", "judge=", "strategy=human_auto"], 2, ("an empty axis",)),
        # row 16: a duplicated key in assign --judge
        Case("r16-assign-dup-key", ["assign", "--nuggets", f"{DEMO}/nuggets.jsonl", "--answers", f"{DEMO}/runs.jsonl",
                                    "--judge", "{tmp}/dup.yaml", "--no-cache", "--out", "{tmp}/o.jsonl"], 2,
             ("dup.yaml:4", "appears twice")),
        # row 17: an unreachable cluster
        Case("r17-ray-cluster", [*SW, "judge=lexical", "name=r", "runtime=ray_cluster", "runtime.address=127.0.0.1:1"], 2,
             ("cannot reach a Ray cluster",)),
    ]
    return out


CASES = _cases()


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str
    tmp: Path
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: connections are refused


def _prepare(case: Case, tmp: Path) -> None:
    tmp.mkdir(parents=True, exist_ok=True)
    conf = tmp / "conf" / "judge"
    conf.mkdir(parents=True)
    port = _closed_port()
    (conf / "hostile.yaml").write_text(HOSTILE.format(name="hostile", model="test-model", port=port), encoding="utf-8")
    (conf / "hostile_b.yaml").write_text(HOSTILE.format(name="hostile_b", model="test-model", port=port + 1 if port < 65535 else 1),
                                         encoding="utf-8")
    (conf / "hostile_model.yaml").write_text(HOSTILE.format(name="hostile_model", model="${oc.env:ROUND3_KEY}", port=port),
                                             encoding="utf-8")
    if case.id == "r10-judge-not-utf8":
        (conf / "latin.yaml").write_bytes(b"judge: lexical\nname: latin\n# caf\xe9\n")
    if case.id == "r13-billion-laughs":
        lines = ["judge: lexical", "name: bomb6", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
        lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 7)]
        (conf / "bomb6.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp / "dup.yaml").write_text("judge: lexical\nname: dup\nsupport_threshold: 0.5\nsupport_threshold: 0.9\n",
                                  encoding="utf-8")
    recs = [json.loads(x) for x in (BAD / "good_small.jsonl").read_text(encoding="utf-8").splitlines()]
    (tmp / "nonuggets.jsonl").write_text("".join(json.dumps({**r, "nuggets": []}) + "\n" for r in recs), encoding="utf-8")
    if "input" in case.prepare:
        src = DEMO / "runs.jsonl" if case.id.startswith("r05-assign") else BAD / "good_small.jsonl"
        (tmp / "in.jsonl").write_bytes(src.read_bytes())
    if "hardlink" in case.prepare:
        os.link(tmp / "in.jsonl", tmp / "hard.jsonl")
    if case.prepare.startswith("link:"):
        what = case.prepare.split(":", 1)[1]
        (tmp / "victim.txt").write_text(KEEP, encoding="utf-8")
        folder = tmp / "results" / "x"
        folder.mkdir(parents=True)
        os.symlink(tmp / "victim.txt", folder / what)
    for name in case.untouched:
        if not (tmp / name).exists():
            (tmp / name).write_text(KEEP, encoding="utf-8")


def _run(case: Case, tmp: Path) -> Result:
    import time

    _prepare(case, tmp)
    before = {n: (tmp / n).read_bytes() for n in case.untouched}
    argv = [a.replace("{tmp}", str(tmp)) for a in case.argv]
    env = {**os.environ, "ROUND3_KEY": KEY}
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "metaeval", *argv], capture_output=True, text=True, timeout=600,
                         cwd=tmp, env=env)
    r = Result(res.returncode, res.stdout, res.stderr, tmp, time.monotonic() - t0)
    r.extra["before"] = before
    return r


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Result]:
    return run_all(CASES, tmp_path_factory.mktemp("round3"), _run)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_round_three_attack(case: Case, results: dict[str, Result]) -> None:
    res = results[case.id]
    output = assert_no_traceback_and_exit(res, case.rc)
    if case.rc == 2:
        assert_one_error_line(res, case.must)
    else:
        for s in case.must:
            assert s in output, f"{s!r} not in output:\n{output[-3000:]}"
    for name, data in res.extra["before"].items():
        assert (res.tmp / name).read_bytes() == data, f"{name} was changed"
    if case.no_key:
        assert KEY not in output and KEY[:12] not in output
        for p in res.tmp.rglob("*"):
            if p.is_file() and not p.is_symlink() and p.stat().st_size < 50_000_000:
                assert KEY.encode() not in p.read_bytes(), p
        assert not any(KEY in str(p) for p in res.tmp.rglob("*"))  # no file or folder named by it


def test_billion_laughs_is_refused_at_once(results: dict[str, Result]) -> None:
    """The 9^6-alias judge file held the sweep for > 100 s before (issue 33 row 13)."""
    assert results["r13-billion-laughs"].seconds < 60
