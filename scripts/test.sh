#!/usr/bin/env bash
# Set up on a fresh machine and run every check: lint, types, tests.
# Each step prints its time on stderr ("test.sh: <step> <seconds>"), so a slow one shows.
set -euo pipefail
cd "$(dirname "$0")/.."
now() { echo "${EPOCHREALTIME/./}"; }  # microseconds
took() { printf 'test.sh: %-7s %5d s\n' "$1" $((($(now) - $2 + 500000) / 1000000)) >&2; }
step() {  # step NAME COMMAND...: run it and say how long it took
  local name="$1" start
  start="$(now)"
  shift
  "$@"
  took "$name" "$start"
}
began="$(now)"
# Python may keep what it compiles. With PYTHONDONTWRITEBYTECODE set (this machine's image
# sets it) and a venv installed without .pyc files, every process compiled every module it
# imported, every time: a server start cost ~3 CPU-s instead of 1, and each test worker
# compiled the test modules and their imports again (12 CPU-s instead of 4.5 to collect).
unset PYTHONDONTWRITEBYTECODE
# Single-process steps side by side (two cores), each one's output shown only when it fails:
# the e2e clients (npm needs nothing of ours) and the package as users get it (built,
# installed from the wheel into a clean venv, and run; skipped when pytest is given
# arguments: a partial run while developing) while the venv fills; then the model's wheels
# and the static checks.
logs="$(mktemp -d "${TMPDIR:-/tmp}/screvi-test-logs.XXXXXX")"
scratch=""
trap 'rm -rf "$logs" ${scratch:+"$scratch"}' EXIT
step npm npm ci --prefix e2e --no-audit --no-fund --loglevel=error >"$logs/npm" 2>&1 &
jobs=("npm:$!")
[ -x .venv/bin/python ] || step venv python3 -m venv .venv
# uv fills the venv: pip fetched every wheel again on each run here (it kept no cache: 35 s
# idle, and as long again for the wheel check's venv); uv fetches in parallel and keeps its
# cache (~/.cache/uv: 19 s cold, 8 s warm under load). pip when uv cannot be had.
# (pip warns once per configured local index that has no uv; those lines say nothing here.)
if [ -x .venv/bin/uv ] || step uv .venv/bin/python -m pip install -q --no-compile uv \
  2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); then
  install=(.venv/bin/uv pip install -q --python .venv/bin/python)
else
  echo "test.sh: uv could not be installed; pip fills the venv instead (slower)" >&2
  install=(.venv/bin/python -m pip install -q --no-compile)
fi
# The wheel check builds and installs with uv alone, so it runs beside the install.
if [ "$#" -eq 0 ] && [ -x .venv/bin/uv ]; then
  step wheel bash scripts/check_wheel.sh >"$logs/wheel" 2>&1 &
  jobs+=("wheel:$!")
fi
step install "${install[@]}" -e '.[local,test]'
if [ "$#" -eq 0 ] && [ ! -x .venv/bin/uv ]; then  # pip's way needs `build` from the install
  step wheel bash scripts/check_wheel.sh >"$logs/wheel" 2>&1 &
  jobs+=("wheel:$!")
fi
# What scripts/serve.sh checks to start without reinstalling (a superset of its install).
python3 scripts/install_stamp.py >.venv/.screvi-mcp-installed
checks() {
  step ruff .venv/bin/ruff check src tests bench scripts
  step format .venv/bin/ruff format --check src tests bench scripts
  step mypy .venv/bin/mypy
}
step model .venv/bin/screvi-mcp install-model >"$logs/model" 2>&1 &
jobs+=("model:$!")
checks >"$logs/checks" 2>&1 &
jobs+=("checks:$!")
# Compile once what the test workers import (the test modules as pytest rewrites them, src,
# the SDK...), so that three workers starting together do not each compile it all.
step compile .venv/bin/python -m pytest --collect-only -q -p no:cacheprovider >"$logs/compile" 2>&1 &
jobs+=("compile:$!")
finish() {  # wait for the background jobs named in "$@"; show a failed one's output
  local failed=0 job
  for job in "$@"; do
    if ! wait "${job#*:}"; then
      cat "$logs/${job%%:*}" >&2
      echo "test.sh: ${job%%:*} failed" >&2
      failed=1
    else
      grep '^test.sh:' "$logs/${job%%:*}" >&2 || true
    fi
  done
  return "$failed"
}
finish "${jobs[@]}" || exit 1

# Test files in memory where there is a tmpfs: the suite writes thousands of small SQLite
# files, and on a disk their fsyncs set its pace (tests/client and tests/transfer: 71 s on
# disk, 42 s in /dev/shm, the same CPU).
shm=/dev/shm; { [ -d "$shm" ] && [ -w "$shm" ]; } || shm="${TMPDIR:-/tmp}"
scratch="$(mktemp -d "$shm/screvi-tests.XXXXXX")"
# Three processes on two cores (tests/conftest.py keeps each fixture on one of them and hands
# out the long groups first): many tests wait on a subprocess or a socket, and a third
# worker fills those waits (pytest 327 -> 293 s idle here); `-n 0` in the arguments runs one.
# A short --basetemp: a test binds a UNIX socket in its tmp_path (at most 107 bytes).
TMPDIR="$scratch" step pytest .venv/bin/python -m pytest -q -n 3 --dist loadgroup \
  --basetemp="$scratch/t" "$@"
took total "$began"
