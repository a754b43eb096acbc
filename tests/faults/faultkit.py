"""Shared pieces of the sweep-level fault tests: a recording test server, the sweep command, and the accounting
checks every fault test ends with (no job lost, none duplicated, failures accounted for)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from metaeval.data.dataset import load_dataset
from metaeval.testing.server import ChatTestServer, Faults

CELL = "testserver__v1__human_auto"
#: one cell: the test-server judge assigning the demo's human nuggets (64 answers, one call each: <= 10 nuggets)
BASE = ["grid=single", "judge=testserver", "strategy=human_auto", "calibration.enabled=false", "analysis.bootstrap=0",
        "+report.enabled=false"]
SERIAL = ["runtime=serial", *BASE]


def limits(concurrency: int = 16, max_retries: int = 4, timeout_s: float = 10.0, backoff_base_s: float = 0.01,
           max_backoff_s: float = 0.05) -> list[str]:
    """Overrides of the test-server deployment's limits (short timeouts and backoff keep the tests fast)."""
    p = "judge.deployment.limits."
    return [f"{p}concurrency={concurrency}", f"{p}max_retries={max_retries}", f"{p}timeout_s={timeout_s}",
            f"+{p}backoff_base_s={backoff_base_s}", f"+{p}max_backoff_s={max_backoff_s}"]


class RecordingServer(ChatTestServer):
    """``ChatTestServer`` that logs every request it reads (arrival time, body hash, the answer it asks about,
    whether it is a re-ask, the HTTP status it got or ``drop``) and can switch its ``Faults`` by request index
    (``schedule(n) -> Faults``: bursts and storms).  The switch and the fault draw happen in one event-loop step
    (the body is already read when the parent reads it again), so request ``n`` gets ``schedule(n)`` exactly."""

    def __init__(self, *args: Any, schedule: Callable[[int], Faults] | None = None, hold_from: int | None = None,
                 **kw: Any):
        super().__init__(*args, **kw)
        self.schedule = schedule
        self.log: list[dict[str, Any]] = []
        self._n = 0
        #: requests from number ``hold_from`` on wait at the door until ``release()``: a run is stopped at a known
        #: point (event-driven kill windows instead of wall-clock ones)
        self.hold_from = hold_from
        self._gate: asyncio.Event | None = None

    def release(self) -> None:
        """Let every held request (and all later ones) through."""
        self.hold_from = None
        if self._gate is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._gate.set)

    async def _common(self, request: Any, flavour: str) -> Any:
        raw = await request.read()
        n, self._n = self._n, self._n + 1
        if self.schedule is not None:
            self.faults = self.schedule(n)
        try:
            msgs = json.loads(raw).get("messages", [])
        except ValueError:
            msgs = []
        entry = {"n": n, "t": time.monotonic(), "sha": hashlib.sha256(raw).hexdigest(), "status": None,
                 "answer": answer_of(msgs), "reask": sum(m.get("role") == "user" for m in msgs) > 1}
        self.log.append(entry)
        try:
            if self.hold_from is not None and n >= self.hold_from:  # logged on arrival, then held
                if self._gate is None:
                    self._gate = asyncio.Event()
                await self._gate.wait()
            resp, body, text = await super()._common(request, flavour)
        except asyncio.CancelledError:
            entry["status"] = "drop"
            raise
        entry["status"] = resp.status if resp is not None else 200
        return resp, body, text


_ANSWER = re.compile(r"<answer>\n(.*?)</answer>", re.DOTALL)


def answer_of(messages: list[dict[str, Any]]) -> str:
    """The answer text an assignment prompt carries (the delimited block, not the instructions that name the tags)."""
    for m in messages:
        if m.get("role") == "user":
            found = _ANSWER.findall(str(m.get("content", "")))
            return found[-1].strip() if found else ""
    return ""


def sweep_cmd(results_dir: Path, name: str, url: str | None, *overrides: str) -> list[str]:
    """``metaeval sweep`` into ``results_dir/name``; ``url``: the top-level (grid=single) judge's base_url."""
    return [sys.executable, "-m", "metaeval", "sweep", "--no-progress", f"results_dir={results_dir}", f"name={name}",
            *([f"judge.deployment.base_url={url}"] if url else []), *overrides]


def run_sweep(results_dir: Path, name: str, url: str | None, *overrides: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(sweep_cmd(results_dir, name, url, *overrides), capture_output=True, text=True, timeout=timeout)


def jobs(out: Path) -> list[dict[str, Any]]:
    """Complete lines of ``jobs.jsonl`` (a line cut short by a kill is not a finished job)."""
    path = out / "jobs.jsonl"
    if not path.exists():
        return []
    recs = []
    for line in path.read_bytes().split(b"\n"):
        if line.strip():
            try:
                recs.append(json.loads(line))
            except ValueError:
                pass
    return recs


def answer_keys() -> dict[str, set[tuple[str, str]]]:
    """Demo answer text (as the prompt carries it) -> the (qid, run_id) answers with that text (two demo runs give
    the same answer to q02, so their requests are identical)."""
    out: dict[str, set[tuple[str, str]]] = {}
    for a in load_dataset("demo").answers:
        out.setdefault(a.text.strip(), set()).add((a.qid, a.run_id))
    return out


def wait_for_lines(path: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> int:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            break
        time.sleep(0.02)
    return path.read_bytes().count(b"\n") if path.exists() else 0


def descendants(pid: int) -> list[int]:
    """Pids of every live descendant of ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", encoding="ascii", errors="replace") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def kill_tree(pids: list[int]) -> None:
    """SIGKILL the given pids (processes this test started, directly or through the sweep it launched)."""
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


VALID = {"support", "partial_support", "not_support"}


def latest_jobs(out: Path) -> dict[str, dict[str, Any]]:
    """key -> the last record of that job (a failed job that was retried on a rerun has a later record)."""
    return {r["key"]: r for r in jobs(out)}


def check_accounting(out: Path, cell: str = CELL) -> dict[str, Any]:
    """The invariants every fault test ends with; returns the totals for scenario-specific checks.

    * no job lost: every demo answer has exactly one line in ``cells/<cell>/labels.jsonl`` with one label per
      human nugget of its topic, and an assignment job in ``jobs.jsonl`` (``done``, or ``failed`` when no reply
      came back: such a job is retried by a rerun);
    * none duplicated: a job key has at most one ``done`` record, and no record follows a ``done`` one;
    * failures accounted for: the stored job labels equal the cell's labels, where every FAILED label in
      ``labels.jsonl`` carries its reason as raw text (the job's failure reason); a job with FAILED labels has
      failures with reasons, a job without none; ``summary.json`` ``failed_labels`` equals the FAILED count and
      ``labels`` the label count.
    """
    ds = load_dataset("demo")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    cell_summary = next(c for c in summary["cells"] if c["cell"] == cell)
    recs = [r for r in jobs(out) if r["spec"]["judge"] == cell_summary["judge_id"]]  # this cell's judge only
    seen_done: set[str] = set()
    for r in recs:
        assert r["key"] not in seen_done, f"job {r['key']} recorded again after it was done"
        if r["status"] == "done":
            seen_done.add(r["key"])
    latest = {r["key"]: r for r in recs}
    assign = {(r["spec"]["qid"], r["spec"]["run_id"]): r for r in latest.values() if r["spec"]["stage"] == "assign"}
    want = {(a.qid, a.run_id) for a in ds.answers}
    assert set(assign) == want, f"jobs lost: {sorted(want - set(assign))[:5]}; unexpected: {sorted(set(assign) - want)[:5]}"
    n_nuggets = ds.nuggets.groupby("qid").size().to_dict()
    lines = [json.loads(x) for x in (out / "cells" / cell / "labels.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    got = Counter((x["qid"], x["run_id"]) for x in lines)
    assert set(got) == want and set(got.values()) == {1}, "every answer needs exactly one labels entry"
    failed = labels_total = 0
    reasons: list[str] = []
    for x in lines:
        key = (x["qid"], x["run_id"])
        assert len(x["nuggets"]) == n_nuggets[x["qid"]], f"{key}: {len(x['nuggets'])} labels for {n_nuggets[x['qid']]} nuggets"
        cell = [n["assignment"] for n in x["nuggets"]]
        job = assign[key]
        stored = job["output"]["labels"]
        failures = job["output"].get("failures", [])
        why = [f["reason"] for f in failures if f.get("reason")]
        assert len(cell) == len(stored), f"{key}: cell and stored job differ in length"
        for c, s in zip(cell, stored):
            if s in VALID:
                assert c == s, f"{key}: cell label {c!r} differs from the stored job's {s!r}"
            else:
                assert s == "FAILED" and c not in VALID and c in why, f"{key}: FAILED label without its reason ({c!r})"
        n_failed = sum(s == "FAILED" for s in stored)
        if n_failed:
            assert why and len(why) == len(failures), f"{key}: FAILED labels without a reason"
            reasons.extend(why)
        else:
            assert not failures and job["status"] == "done", f"{key}: failures recorded but no label FAILED"
        failed += n_failed
        labels_total += len(cell)
    assert cell_summary["failed_labels"] == failed and cell_summary["labels"] == labels_total
    st = [r["stats"] for r in recs if r["spec"]["stage"] == "assign"]  # every attempt of every job
    return {
        "failed_labels": failed, "labels": labels_total, "jobs": len(assign), "reasons": reasons,
        "failed_jobs": [r for r in assign.values() if r["status"] == "failed"],
        "calls": sum(s.get("calls", 0) for s in st), "retries": sum(s.get("retries", 0) for s in st),
        "reasks": sum(s.get("reasks", 0) for s in st), "cache_hits": sum(s.get("cache_hits", 0) for s in st),
        "assign": assign, "summary_cell": cell_summary, "records": recs,
    }


def still_alive(tree: dict[int, str], grace_s: float) -> dict[int, str]:
    """The processes of ``tree`` (pid -> cmdline when seen) still running, same cmdline, after up to ``grace_s``."""
    deadline = time.time() + grace_s
    while True:
        alive = {p: c for p, c in tree.items() if c and cmdline(p) == c}
        if not alive or time.time() > deadline:
            return alive
        time.sleep(0.2)


CONCURRENCY = 4


def interrupted_then_resumed(root: Path, name: str, sig: int, extra: list[str], wait_s: float = 60,
                             sigint_ignored: bool = False) -> dict:
    """Run a sweep, send ``sig`` once >= 20 of its 64 jobs are stored, then rerun it to completion.

    ``sigint_ignored``: start the sweep with SIGINT ignored (as ``nohup`` or a shell's ``&`` job does).

    The server holds every request from the 25th on until the signal has been sent, so the signal always lands
    with 20-25 jobs stored and at most ``CONCURRENCY`` requests in flight, however slow the machine."""
    srv = RecordingServer(faults=Faults(latency_s=0.02), hold_from=25).start()
    tree: dict[int, str] = {}
    try:
        overrides = [*extra, *limits(concurrency=CONCURRENCY)]
        out = root / name
        # SIGINT at its default, as in a terminal (unless the case asks for it ignored): a test run started as a
        # background job of a non-interactive shell inherits SIGINT ignored (POSIX shells do that to '&' jobs)
        sigint = signal.SIG_IGN if sigint_ignored else signal.SIG_DFL
        proc = subprocess.Popen(sweep_cmd(root, name, srv.openai_base_url, *overrides), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, sigint))
        try:
            at_signal = wait_for_lines(out / "jobs.jsonl", 20, proc, timeout=wait_s)
            tree = {p: cmdline(p) for p in descendants(proc.pid)}  # what the driver started (Ray: its cluster)
            t_sig = time.monotonic()
            if sig == signal.SIGKILL:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                os.kill(proc.pid, sig)  # the driver only, as `kill -INT PID`
            stdout, stderr = proc.communicate(timeout=60)
            stop_s = time.monotonic() - t_sig
            srv.release()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        survivors = still_alive(tree, grace_s=10)
        kill_tree(list(survivors))
        raw = (out / "jobs.jsonl").read_bytes()
        before = {r["key"]: r for r in jobs(out) if r["status"] == "done"}
        n_first = len(srv.log)
        again = run_sweep(root, name, srv.openai_base_url, *overrides)
        return {"rc": proc.returncode, "stdout": stdout, "stderr": stderr, "stop_s": stop_s, "at_signal": at_signal,
                "raw": raw, "done_before": before, "first": srv.log[:n_first], "rerun": srv.log[n_first:],
                "again": again, "out": out, "survivors": survivors}
    finally:
        srv.stop()


def check_resumed(r: dict) -> dict:
    assert r["again"].returncode == 0, r["again"].stderr[-3000:]
    done_before = r["done_before"]
    assert 20 <= len(done_before) < 64, f"the signal should land midway ({len(done_before)} jobs done)"
    acc = check_accounting(r["out"])
    assert acc["failed_labels"] == 0
    texts = answer_keys()
    text_of = {k: t for t, keys in texts.items() for k in keys}
    done_texts = {text_of[(rec["spec"]["qid"], rec["spec"]["run_id"])] for rec in done_before.values()
                  if rec["spec"]["stage"] == "assign"}
    resent = {e["answer"] for e in r["rerun"]} & done_texts
    assert not resent, f"{len(resent)} finished job(s) were sent again"
    # every answer was asked for; the only requests sent twice are those in flight at the signal
    first = [e["answer"] for e in r["first"]]
    rerun = [e["answer"] for e in r["rerun"]]
    assert set(first) | set(rerun) == set(texts)
    twice = set(first) & set(rerun)
    assert len(twice) <= CONCURRENCY and len(set(first)) == len(first) and len(set(rerun)) == len(rerun)
    # the stored jobs of the first run are still there, unchanged, in the completed store
    final = {rec["key"]: rec for rec in jobs(r["out"])}
    assert all(final[k]["output"] == rec["output"] for k, rec in done_before.items())
    return acc


