#!/usr/bin/env bash
# Documentation checks for CI (.ci/run calls this): install what they need, then build the documentation site
# strictly (a broken link, a missing anchor or a page left out of mkdocs.yml's nav fails the build).
#   1. TeX Live (Debian packages: pdflatex, bibtex, booktabs, natbib, tabularx; acmart from texlive-publishers;
#      pdftoppm from poppler-utils) for the LaTeX compile test tests/integration/test_report_latex_compile.py,
#      which compiles `metaeval report --latex` output in an 11pt two-column article and in acmart's sigconf layout
#      and fails on errors, an overfull box wider than 1 pt or a caption over three lines;
#   2. the `docs` extra (mkdocs, and mkdocstrings for the API reference docs/api/) into the project's venv;
#   3. mkdocs build --strict into a temporary folder.
# Usage: bash scripts/ci_docs.sh [PYTHON]   (default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-.venv/bin/python}"

if ! command -v pdflatex >/dev/null 2>&1 || ! kpsewhich booktabs.sty >/dev/null 2>&1 \
    || ! kpsewhich acmart.cls >/dev/null 2>&1 || ! command -v pdftoppm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended \
      texlive-publishers poppler-utils >/dev/null
  else
    echo "ci_docs: pdflatex/booktabs/acmart/pdftoppm missing and not root: install texlive-latex-base" \
      "texlive-latex-recommended texlive-latex-extra texlive-publishers poppler-utils" >&2
    exit 1
  fi
fi
command -v pdflatex >/dev/null && command -v bibtex >/dev/null && kpsewhich booktabs.sty >/dev/null \
  && kpsewhich acmart.cls >/dev/null && command -v pdftoppm >/dev/null

"$PY" -m pip install -q -e ".[docs]"
SITE="$(mktemp -d)"
trap 'rm -rf "$SITE"' EXIT
"$PY" -m mkdocs build --strict --site-dir "$SITE"
echo "ci_docs: mkdocs build --strict passed; pdflatex $(pdflatex --version | head -1 | cut -c1-40)"
