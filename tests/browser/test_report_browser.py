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

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = next((p for p in (os.environ.get("CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
                             "/usr/bin/chromium") if p and os.path.exists(p)), None)
BROWSER_SERVICE_HOSTS = ("google.com", "googleapis.com", "gvt1.com")

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (Debian package `chromium`; "
                                    ".ci/run installs it)")


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
    assert [r for r in refs if not (r.startswith("#") or r.startswith("data:"))] == []
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
