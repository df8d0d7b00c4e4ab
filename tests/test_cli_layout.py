"""The command line answers `--help` and mistakes without loading what a command needs."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "screvi_mcp.server",
    "screvi_mcp.local",
    "screvi_mcp.client",
    "screvi_mcp.models",  # the wire models: pydantic builds them on import
    "mcp",
    "httpx",
    "uvicorn",
    "pydantic",
    "fsrs",  # the review scheduler; `review --help` only lists the answers
)
# The toolset names, declared once where the tools are, in a module that imports nothing.
LIGHT = ["screvi_mcp.server", "screvi_mcp.server.toolsets"]


def test_building_the_parser_loads_no_server_library_or_client() -> None:
    # A fresh interpreter: this test process has imported everything already.
    probe = (
        "import sys; from screvi_mcp.cli import build_parser; build_parser(); "
        f"print(sorted(m for m in sys.modules if (m.split('.')[0] in {HEAVY!r} "
        f"or m.startswith({HEAVY!r})) and m not in {LIGHT!r}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert loaded.stdout.strip() == "[]", loaded.stdout
