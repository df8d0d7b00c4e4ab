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
# Test files in memory where there is a tmpfs: the suite writes thousands of small SQLite
# files, and on a disk their fsyncs set its pace (tests/client and tests/transfer: 71 s on
# disk, 42 s in /dev/shm, the same CPU).
shm=/dev/shm; { [ -d "$shm" ] && [ -w "$shm" ]; } || shm="${TMPDIR:-/tmp}"
scratch="$(mktemp -d "$shm/screvi-tests.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
# Two processes, one a core (tests/conftest.py keeps each fixture on one of them; 118 s ->
# 66 s for tests/mirror, local/fetching and local/api); `-n 0` in the arguments runs one.
# A short --basetemp: a test binds a UNIX socket in its tmp_path (at most 107 bytes).
TMPDIR="$scratch" .venv/bin/python -m pytest -q -n 2 --dist loadgroup --basetemp="$scratch/t" "$@"
# The package as users get it: built, installed from the wheel into a clean venv, and run.
# Skipped when pytest was given arguments (a partial run while developing).
if [ "$#" -eq 0 ]; then bash scripts/check_wheel.sh; fi
