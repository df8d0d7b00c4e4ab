"""cli/ sits above every layer (docs/architecture.md): argument parsing and what a command
prints live there, and no layer below it imports it, even inside a function."""

from __future__ import annotations

from pathlib import Path

import screvi_mcp
from testsupport.imports import imports_under


def test_only_the_command_line_imports_the_command_line() -> None:
    package = Path(screvi_mcp.__file__).parent
    below = [
        found
        for found in imports_under(package, "screvi_mcp.cli")
        if found.split(": ")[1].split(".")[:2] == ["screvi_mcp", "cli"]  # not .client
        # `python -m screvi_mcp` is the command's own entry point.
        and not found.startswith(("cli/", "__main__.py:"))
    ]
    assert below == []
