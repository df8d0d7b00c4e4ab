#!/usr/bin/env bash
# Set up on a fresh machine and run the main job: the MCP server on the embedded library,
# over streamable HTTP at http://127.0.0.1:8000/mcp (stdio hosts launch .venv/bin/screvi-mcp
# themselves; see the README).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[local]'
bin="$(pwd)/.venv/bin/screvi-mcp"
cat >&2 <<INFO
screvi-mcp is installed at $bin
  Claude Code:    claude mcp add --transport http screvi http://127.0.0.1:${PORT:-8000}/mcp
  Claude Desktop: add {"command": "$bin"} under mcpServers (see claude_desktop_config.example.json)
  Sample data:    $bin sample        (loads public-domain passages to try search)
INFO
exec "$bin" --transport streamable-http --host 127.0.0.1 --port "${PORT:-8000}" "$@"
