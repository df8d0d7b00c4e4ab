#!/usr/bin/env bash
# Set up on a fresh machine and run every check: lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[local,test]'
.venv/bin/ruff check src tests
.venv/bin/mypy
npm ci --prefix e2e --no-audit --no-fund --loglevel=error
.venv/bin/python -m pytest -q "$@"
