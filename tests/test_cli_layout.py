"""The command line answers `--help` and mistakes without loading what a command needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import screvi_mcp
from testsupport.imports import imports_under

HEAVY = ("screvi_mcp.server", "screvi_mcp.local", "screvi_mcp.client", "mcp", "httpx", "uvicorn")
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


def test_only_the_command_line_imports_the_command_line() -> None:
    """cli/ sits above every layer (docs/architecture.md): argument parsing and its messages
    live there, and no layer below it imports it, even inside a function. `__main__` is
    the command's entry point."""
    package = Path(screvi_mcp.__file__).parent
    below = [
        found
        for found in imports_under(package, "screvi_mcp.cli")
        if found.split(": ")[1].split(".")[:2] == ["screvi_mcp", "cli"]  # not .client
        and not found.startswith(("cli/", "__main__.py:"))
    ]
    assert below == []
