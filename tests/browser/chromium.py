"""Headless Chromium for the browser tier: where it is, and the rule that CI must have it."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = next((p for p in (os.environ.get("CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
                             "/usr/bin/chromium") if p and os.path.exists(p)), None)
REQUIRED = bool(os.environ.get("CI") or os.environ.get("METAEVAL_REQUIRE_BROWSER"))
#: flags every headless run here uses (no sandbox as root, no first-run, no background traffic)
BASE_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def require_chromium() -> str:
    """In CI (``CI`` or ``METAEVAL_REQUIRE_BROWSER`` set) a missing Chromium FAILS the test; elsewhere it skips."""
    if CHROMIUM is None:
        msg = "headless Chromium not installed (Debian package `chromium`; .ci/run installs it)"
        if REQUIRED:
            pytest.fail(msg + " - required in CI: the report's browser checks cannot run")
        pytest.skip(msg)
    return CHROMIUM
