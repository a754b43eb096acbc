#!/usr/bin/env bash
# Quickstart command 1: create .venv, install metaeval with its test extras, run the main job on the bundled demo data.
# Offline, no API key.  Outputs go to results/demo/ (summary.md, summary.json, analysis/, cells/).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
.venv/bin/metaeval sweep
