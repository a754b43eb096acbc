#!/usr/bin/env bash
# Quickstart command 1: create .venv, install metaeval with its test extras, run the main job on the bundled demo data.
# Offline, no API key.  Outputs go to results/demo/ (summary.md, summary.json, analysis/, cells/).
#
# Installer: uv (https://github.com/astral-sh/uv, `uv pip install`: parallel downloads and installs) when `uv` is on
# PATH or pip can install it into .venv; plain pip otherwise, or when METAEVAL_INSTALLER=pip.  Both install the
# same requirement, `-e ".[test]"`, from the same index (uv does not read pip.conf: set UV_INDEX_URL /
# UV_EXTRA_INDEX_URL where pip's index is configured there).
#
# Bytecode is compiled at install (uv's --compile-bytecode; pip compiles by default), and metaeval's own sources
# (an editable install: they stay in metaeval/) by compileall, so that no process pays for compiling its imports
# from source - the whole cost where PYTHONDONTWRITEBYTECODE is set (issue 34: 31% of a zero-latency serial sweep).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv

uv_command() {
  # Prints the uv to use, or nothing (then pip installs).
  [ "${METAEVAL_INSTALLER:-uv}" = pip ] && return 0
  if command -v uv >/dev/null 2>&1; then
    command -v uv
  elif [ -x .venv/bin/uv ] || .venv/bin/python -m pip install -q uv >/dev/null 2>&1; then
    echo .venv/bin/uv
  fi
  return 0
}

UV="$(uv_command)"
if [ -n "$UV" ] && "$UV" pip install -q --compile-bytecode --python .venv/bin/python -e ".[test]"; then
  :
else
  [ -n "$UV" ] && echo "quickstart: uv pip install failed; installing with pip" >&2
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[test]"
fi
.venv/bin/python -m compileall -q -j 0 metaeval >/dev/null
.venv/bin/metaeval sweep
