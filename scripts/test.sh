#!/usr/bin/env bash
# Set up on a fresh machine and run every check: lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[local,test]'
.venv/bin/screvi-mcp install-model
# What scripts/serve.sh checks to start without reinstalling (a superset of its install).
python3 scripts/install_stamp.py >.venv/.screvi-mcp-installed
.venv/bin/ruff check src tests bench scripts
.venv/bin/ruff format --check src tests bench scripts
.venv/bin/mypy
npm ci --prefix e2e --no-audit --no-fund --loglevel=error
.venv/bin/python -m pytest -q "$@"
# The package as users get it: built, installed from the wheel into a clean venv, and run.
# Skipped when pytest was given arguments (a partial run while developing).
if [ "$#" -eq 0 ]; then bash scripts/check_wheel.sh; fi
