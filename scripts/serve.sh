#!/usr/bin/env bash
# Set up on a fresh machine and run the main job: the embedded library's API.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[local]'
exec .venv/bin/screvi-mcp api "$@"
