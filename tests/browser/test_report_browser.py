"""``report.html`` in headless Chromium: it renders (the screenshot is not blank) and makes no external request.

How "no external request" is checked (two independent ways):

1. statically: no ``src``/``href``/``srcset``/``url()``/``@import`` in the HTML points anywhere but ``#anchor`` or
   ``data:``, and there is no script;
2. dynamically: Chromium runs with ``--proxy-server`` pointing at a recording proxy on 127.0.0.1 (every http/https
   request the page makes goes to it: a plain ``GET http://...`` or a ``CONNECT host:443``; the proxy answers 403)
   and ``--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"`` (nothing but the proxy resolves, so nothing can bypass it).  A control
   page with one external image and one external stylesheet must show up in the proxy log, proving the detector
   sees page requests; the report must not add any host to it.  Chromium's own service traffic, which it sends
   even with background networking disabled (update.googleapis.com, accounts.google.com, clients2.google.com),
   is excluded by host suffix (``BROWSER_SERVICE_HOSTS``) - the report names no host at all, so this exclusion
   cannot hide one of its requests unless it pointed at Google's own services, which check 1 rules out.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.browser.chromium import CHROMIUM, require_chromium

pytestmark = pytest.mark.browser

BROWSER_SERVICE_HOSTS = ("google.com", "googleapis.com", "gvt1.com")
_require_chromium = require_chromium


@pytest.fixture
def chromium() -> str:
    _require_chromium()
    return CHROMIUM


needs_chromium = pytest.mark.usefixtures("chromium")


class RecordingProxy:
    """Accepts connections on 127.0.0.1, records each request line, answers 403."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.port = self.sock.getsockname()[1]
        self.requests: list[str] = []
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def _loop(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    data = conn.recv(8192)
                    self.requests.append(data.split(b"\r\n", 1)[0].decode("latin-1"))
                    conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def hosts(self) -> set[str]:
        out = set()
        for line in self.requests:
            m = re.match(r"CONNECT ([^:\s]+):\d+", line) or re.match(r"[A-Z]+ https?://([^/:\s]+)", line)
            if m:
                out.add(m.group(1).lower())
        return out

    def page_hosts(self) -> set[str]:
        return {h for h in self.hosts() if not any(h == s or h.endswith("." + s) for s in BROWSER_SERVICE_HOSTS)}


def render(page: Path, shot: Path, tmp: Path) -> RecordingProxy:
    with RecordingProxy() as proxy:
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--disable-quic", f"--user-data-dir={tmp / 'profile'}",
               f"--proxy-server=http://127.0.0.1:{proxy.port}", "--proxy-bypass-list=<-loopback>",
               "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", f"--screenshot={shot}", "--window-size=1280,2000",
               page.resolve().as_uri()]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
        assert res.returncode == 0 and shot.exists(), res.stderr[-3000:]
    return proxy


def distinct_colours(png: Path) -> int:
    import numpy as np
    from matplotlib.image import imread

    img = imread(str(png))
    assert img.ndim == 3 and img.shape[0] >= 1000 and img.shape[1] >= 1000, img.shape
    rgb = (np.asarray(img)[..., :3] * 255).round().astype(np.uint32)
    return len(np.unique(rgb[..., 0] << 16 | rgb[..., 1] << 8 | rgb[..., 2]))


@pytest.fixture(scope="module")
def report_html(tmp_path_factory) -> Path:
    _require_chromium()
    root = tmp_path_factory.mktemp("browser")
    cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "runtime=serial", "grid.optional_judges=[]",
           "analysis.bootstrap=200", f"results_dir={root}", "name=demo"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return root / "demo" / "report.html"


@needs_chromium
def test_detector_sees_external_requests(tmp_path):
    """Control: a page with external resources shows up in the proxy log (so the next test can fail)."""
    page = tmp_path / "bad.html"
    page.write_text('<html><body><p>x</p><img src="http://example.invalid/a.png">'
                    '<link rel="stylesheet" href="https://fonts.example.invalid/b.css"></body></html>', encoding="utf-8")
    proxy = render(page, tmp_path / "bad.png", tmp_path)
    assert {"example.invalid", "fonts.example.invalid"} <= proxy.page_hosts(), proxy.requests


@needs_chromium
def test_report_renders_offline_and_not_blank(report_html, tmp_path):
    html = report_html.read_text(encoding="utf-8")
    refs = re.findall(r'(?:src|href|srcset)\s*=\s*["\']?([^"\'\s>]+)', html, flags=re.I) + re.findall(r'url\(\s*["\']?([^"\')]+)', html)
    # in-page anchors, inline data, and the cells' transcript viewers beside the report (relative, no host)
    local = [r for r in refs if not (r.startswith("#") or r.startswith("data:"))]
    assert local and all(re.fullmatch(r"cells/[A-Za-z0-9._-]+/transcripts\.html#[^/]*", r) for r in local), local
    assert all((report_html.parent / r.split("#")[0]).is_file() for r in local)
    shot = tmp_path / "report.png"
    proxy = render(report_html, shot, tmp_path)
    assert proxy.page_hosts() == set(), proxy.requests
    n = distinct_colours(shot)
    assert n > 200, f"screenshot looks blank: {n} distinct colours"
    # a blank page gives (almost) one colour: the same measure on it, so the threshold means something
    blank = tmp_path / "blank.html"
    blank.write_text("<html><body></body></html>", encoding="utf-8")
    render(blank, tmp_path / "blank.png", tmp_path)
    assert distinct_colours(tmp_path / "blank.png") < 5


# ------------------------------------------------------------------ the report reads like a paper (issue 14.5)
CHECK_JS = Path(__file__).with_name("layout_check.js")


def layout_check(page: Path, tmp: Path, width: int = 1280) -> dict:
    """Open a copy of ``page`` with ``layout_check.js`` appended in headless Chromium (``--dump-dom`` after the
    script ran) and return what the script measured: page heights (details closed / all opened), horizontal
    overflow, the summary section's text, per figure the SVG text/legend/axes counts and every overlapping pair
    (text x text, legend x axes area, legend x text outside it, text outside the figure, svg x caption), and
    overlapping sibling blocks
    on the page (with every <details> opened)."""
    import html as html_mod
    import json

    src = page.read_text(encoding="utf-8")
    probe = tmp / f"probe-{page.stem}.html"
    probe.write_text(src.replace("</body>", f"<script>{CHECK_JS.read_text(encoding='utf-8')}</script></body>"), encoding="utf-8")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
           f"--user-data-dir={tmp / 'profile-check'}", "--host-resolver-rules=MAP * ~NOTFOUND",
           f"--window-size={width},1000", "--virtual-time-budget=10000", "--dump-dom", probe.resolve().as_uri()]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="metaeval-check">(.*?)</pre>', res.stdout, flags=re.S)
    assert res.returncode == 0 and m, (res.returncode, res.stderr[-2000:])
    return json.loads(html_mod.unescape(m.group(1)))


@needs_chromium
def test_overlap_detector_catches_a_legend_on_the_data_and_overlapping_blocks(tmp_path):
    """Control: a legend drawn inside the axes, two texts on top of each other and two overlapping page blocks are
    all reported - so an empty list in the next test means something."""
    from matplotlib.figure import Figure

    from metaeval.report.plots import RC, inline_svg, svg

    import matplotlib

    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(5, 3), layout="constrained")
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 1], label="a long legend entry")
        ax.legend(loc="center")
        ax.text(0.1, 0.9, "first label", transform=ax.transAxes)
        ax.text(0.12, 0.9, "second label", transform=ax.transAxes)
        fig.text(0.97, 0.5, "cut off at the right edge")
        doc = svg(fig)
    page = tmp_path / "bad.html"
    page.write_text(f'<html><body><main><figure id="fig-bad">{inline_svg(doc, "fig-bad", "bad")}</figure>'
                    '<p style="margin-top:-40px">a paragraph pulled up over the figure</p></main></body></html>',
                    encoding="utf-8")
    out = layout_check(page, tmp_path)
    (fig_out,) = out["figures"]
    assert fig_out["legends"] == 1 and fig_out["axes"] == 1
    assert any(o.startswith("legend") and " x axes " in o for o in fig_out["overlaps"]), fig_out
    assert any("first label" in o and "second label" in o for o in fig_out["overlaps"]), fig_out
    assert any(o.startswith("text outside the figure") and "cut off" in o for o in fig_out["overlaps"]), fig_out
    assert out["page"], out


def test_report_summary_plots_and_layout(report_html, tmp_path):
    """The demo report: a plain-language summary first whose figures are summary.json's; >= 6 SVG plots with
    legends outside the axes and no overlapping text; no page block overlapping another; a short page."""
    import json

    out = layout_check(report_html, tmp_path)
    summary = json.loads((report_html.parent / "summary.json").read_text(encoding="utf-8"))
    html = report_html.read_text(encoding="utf-8")
    # the summary comes first and says, per cell, what the numbers mean
    assert html.index('<section id="summary">') < html.index('<section id="verdict">') < html.index('<section id="tau">')
    text = out["summary"]
    lines = [x.strip() for x in (text or "").splitlines() if x.strip()]
    # the demo's labels are made up: that comes before any figure, then the verdict
    assert lines[0] == "Summary" and lines[1].startswith("Synthetic data: ILLUSTRATIVE DEMO DATA"), lines[:2]
    del lines[1]
    assert re.match(r"Verdict: (PASS|FAIL)", lines[1]), lines[:2]
    judged = [c for c in summary["cells"] if not c.get("skipped")]
    for c in judged:
        run = c["analysis"]["metrics"]["v_strict"]["run"]
        if run["tau"] is None:
            assert f"{c['cell']}: " in text and "run ranking tau undefined" in text
            continue
        lo, hi = run["ci"]
        want = f"run ranking tau {run['tau']:.2f} [{lo:.2f}, {hi:.2f}], " + (
            "fine for leaderboards" if lo >= 0.8 else "not reliable for leaderboards")
        line = next(x for x in lines if x.startswith(f"{c['cell']}: "))
        assert want in line, (want, line)
        assert re.search(r"per-topic tau (-?\d\.\d\d \[-?\d\.\d\d, -?\d\.\d\d\], (fine for|not for) per-topic decisions|undefined)", line), line
    assert any("of the assessors' supports became partial" in x for x in lines)  # strictness in words
    failing = [c["cell"] for c in json.loads((report_html.parent / "report.json").read_text(encoding="utf-8"))["verdict"]["cells"]
               if c["status"] == "fail"]
    for cid in failing:  # the verdict's reasons sit with the verdict
        assert f"{cid} fails: " in lines[1], lines[1]
    # >= 6 plots, all SVG, each with axes and text; legends present and checked
    figs = out["figures"]
    assert len(figs) >= 6 and all(f["svg"] for f in figs), figs
    assert all(f["axes"] >= 1 and f["texts"] >= 5 for f in figs), figs
    assert sum(f["legends"] for f in figs) >= 4
    assert {"fig-bias", "fig-strictness_importance", "fig-forest"} <= {f["id"] for f in figs}
    # nothing overlaps: texts, legends vs axes/texts, blocks on the page (with every <details> open)
    assert [f"{f['id']}: {o}" for f in figs for o in f["overlaps"]] == []
    assert out["page"] == []
    assert out["scroll_width"] <= out["viewport"], "the page scrolls sideways"
    assert out["height"] < 10000, f"page is {out['height']} px long with the details closed"
