"""DESIGN.md's rule, held by imports: the client never knows which backend it talks to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from screvi_mcp import client as client_package
from testsupport.imports import imports_under


def test_importing_the_client_package_never_reaches_the_embedded_library() -> None:
    # A fresh interpreter: this test process has long since imported `local` for other tests.
    probe = (
        "import json, sys; import screvi_mcp.client; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('screvi_mcp'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = json.loads(done.stdout)
    assert "screvi_mcp.client.client" in loaded  # the probe really imported the client
    assert [name for name in loaded if name.startswith("screvi_mcp.local")] == []
    # Nor the MCP layer above it.
    assert [name for name in loaded if name.startswith("screvi_mcp.server")] == []


def test_no_client_module_names_the_embedded_library_even_lazily() -> None:
    folder = Path(client_package.__file__).parent
    assert imports_under(folder, "screvi_mcp.local") == []
