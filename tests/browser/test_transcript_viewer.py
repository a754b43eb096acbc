"""The transcript viewer in headless Chromium, opened from the report's disagreement link.

A real sweep on the demo with an LLM judge (metaeval's wire-compatible test server, so every unit has a prompt and a
raw reply): the report's "nugget labels that differ" rows link to ``cells/<cell>/transcripts.html#qid=..&run=..
&disagree=1``.  The test follows such a link as written in ``report.html``, lets Chromium run the page (its own
script applies the link's filters), then changes the run filter and the disagreement filter the way a user does
(select value + ``change`` event) and reads back what the page shows: the listed units, the selected unit's
prompt and raw reply, and its items with the judge's and the human label.  Everything is checked against the
transcripts and the human labels on disk.
"""

from __future__ import annotations

import html as html_mod
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser.chromium import BASE_FLAGS, require_chromium

pytestmark = pytest.mark.browser

# runs after the page's own script: records what the fragment filters show, then filters by another run and
# "judge agrees" / "judge differs" through the selects, recording each state
PROBE = r"""
(function () {
  const state = () => ({
    count: document.getElementById('count').textContent,
    units: [...document.querySelectorAll('#list li')].map(li => li.textContent),
    selected: (document.querySelector('#list li.sel') || {textContent: null}).textContent,
    heading: (document.querySelector('#detail h2') || {textContent: null}).textContent,
    prompt: [...document.querySelectorAll('#detail pre.prompt')].map(p => p.textContent),
    reply: [...document.querySelectorAll('#detail pre.reply')].map(p => p.textContent),
    items: [...document.querySelectorAll('#items tr')].slice(1).map(tr => ({
      cells: [...tr.children].map(td => td.textContent), differs: tr.className === 'dis'})),
    filters: {qid: document.getElementById('f-qid').value, run: document.getElementById('f-run').value,
              disagree: document.getElementById('f-disagree').value}});
  const set = (id, value) => { const s = document.getElementById(id); s.value = value; s.dispatchEvent(new Event('change')); };
  const out = {from_link: state(), runs: [...document.getElementById('f-run').options].map(o => o.value).filter(Boolean)};
  set('f-qid', '');
  const other = out.runs.find(r => r !== out.from_link.filters.run);
  set('f-run', other); set('f-disagree', '0');
  out.other_agree = state();
  set('f-disagree', '1');
  out.other_differ = state();
  const pre = document.createElement('pre'); pre.id = 'metaeval-probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    require_chromium()
    from metaeval.testing.server import ChatTestServer

    root = tmp_path_factory.mktemp("viewer")
    with ChatTestServer() as srv:
        cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "runtime=serial", "grid=single",
               "judge=testserver", f"judge.deployment.base_url={srv.openai_base_url}", "strategy=human_auto",
               "analysis.bootstrap=200", "cache.enabled=false", f"results_dir={root}", "name=viewer"]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return root / "viewer"


def run_probe(page: Path, fragment: str, tmp: Path) -> dict:
    """Open a copy of ``page`` (same folder) at ``#fragment`` with :data:`PROBE` appended; what it recorded."""
    probe = page.with_name("transcripts.probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", f"<script>{PROBE}</script></body>"),
                     encoding="utf-8")
    cmd = [require_chromium(), *BASE_FLAGS, f"--user-data-dir={tmp / 'profile'}", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--window-size=1400,1000", "--virtual-time-budget=10000", "--dump-dom", probe.resolve().as_uri() + "#" + fragment]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="metaeval-probe">(.*?)</pre>', res.stdout, flags=re.S)
    assert res.returncode == 0 and m, (res.returncode, res.stderr[-2000:])
    probe.unlink()
    return json.loads(html_mod.unescape(m.group(1)))


def test_viewer_from_the_report_link_filters_by_run_and_disagreement(results, tmp_path):
    cell = "testserver__v1__human_auto"
    report = (results / "report.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="(cells/[^"#]+/transcripts\.html#[^"]*disagree=1[^"]*)">open</a>', report)
    assert links, "no disagreement row links to the transcript viewer"
    href = html_mod.unescape(links[0])
    page = results / href.split("#")[0]
    assert page == results / "cells" / cell / "transcripts.html" and page.is_file()
    frag = dict(kv.split("=", 1) for kv in href.split("#", 1)[1].split("&"))
    # the page is self-contained and offline: no script, style or image from anywhere
    text = page.read_text(encoding="utf-8")
    assert not re.search(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', text)

    out = run_probe(page, href.split("#", 1)[1], tmp_path)
    human = {(r["qid"], r["run_id"], n["text"]): n["assignment"]
             for r in map(json.loads, Path(_demo_assignments()).read_text(encoding="utf-8").splitlines())
             for n in r["nuggets"]}
    records = [json.loads(x) for x in (results / "cells" / cell / "transcripts.jsonl").read_text(encoding="utf-8").splitlines()]
    by_unit = {(r["qid"], r["run_id"]): r for r in records if r["stage"] == "assign"}

    # 1. as the link opens it: that topic and run, disagreements only, the unit selected and shown in full
    got = out["from_link"]
    assert got["filters"] == {"qid": frag["qid"], "run": frag["run"], "disagree": "1"}
    assert got["count"] == "1 of 64 units" and len(got["units"]) == 1 and "disagrees" in got["units"][0]
    rec = by_unit[(frag["qid"], frag["run"])]
    assert got["heading"] == f"Topic {frag['qid']}, run {frag['run']} (assign)"
    call = rec["calls"][-1]
    assert got["reply"][-1] == call["raw_reply"]  # the raw reply, as the model sent it
    assert call["messages"][-1]["content"] in got["prompt"][-1]  # beside the prompt it was sent
    assert [i["cells"][1] for i in got["items"]] == rec["items"]
    for i, item in zip(got["items"], rec["items"]):
        judge, hum = i["cells"][2], i["cells"][3]
        assert judge == rec["labels"][rec["items"].index(item)] and hum == human[(frag["qid"], frag["run"], item)]
        assert i["differs"] == (judge != hum)
    assert any(i["differs"] for i in got["items"])

    # 2. another run, "judge agrees": every listed unit is that run's and none has a differing label
    other = out["other_agree"]["filters"]["run"]
    assert other and other != frag["run"]
    agree = [u for u in by_unit.values() if u["run_id"] == other
             and all(lab == human[(u["qid"], other, it)] for it, lab in zip(u["items"], u["labels"]))]
    differ = [u for u in by_unit.values() if u["run_id"] == other and u not in agree]
    assert out["other_agree"]["count"] == f"{len(agree)} of 64 units"
    assert all(f"/ {other}" in u and "disagrees" not in u for u in out["other_agree"]["units"])
    # 3. the same run, "judge differs": the complement, each with a marked row
    assert out["other_differ"]["count"] == f"{len(differ)} of 64 units" and len(differ) > 0
    assert all(f"/ {other}" in u and "disagrees" in u for u in out["other_differ"]["units"])
    assert any(i["differs"] for i in out["other_differ"]["items"])


def test_viewer_screenshot(results, tmp_path):
    """The page renders (not blank) at the link's filters; the PNG is kept for the change notes when asked."""
    import os
    import shutil

    from tests.browser.test_report_browser import distinct_colours

    page = results / "cells" / "testserver__v1__human_auto" / "transcripts.html"
    view = json.loads((page.parent / "transcript_view.json").read_text(encoding="utf-8"))
    unit = next(u for u in view["units"] if u["disagree"])
    shot = tmp_path / "viewer.png"
    cmd = [require_chromium(), *BASE_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
           "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1400,1000", "--virtual-time-budget=5000",
           f"--screenshot={shot}", page.resolve().as_uri() + f"#run={unit['run_id']}&disagree=1&unit={unit['id']}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and shot.exists(), res.stderr[-2000:]
    assert distinct_colours(shot) > 50
    if os.environ.get("METAEVAL_VIEWER_PNG"):  # where to keep the screenshot (not a repository path)
        shutil.copy(shot, os.environ["METAEVAL_VIEWER_PNG"])


def _demo_assignments() -> Path:
    from metaeval.paths import PACKAGE_DIR

    return Path(PACKAGE_DIR) / "data" / "demo" / "assignments.jsonl"
