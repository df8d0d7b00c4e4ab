"""The MCP Bundle (.mcpb): built by scripts/build_bundle.py, validated by the official mcpb
CLI, unpacked, and started exactly as a host starts it — the command, arguments and
environment come from @anthropic-ai/mcpb's own `getMcpConfigForManifest`, with the options a
user fills in — then driven over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from e2e_harness import NODE, REPO, quiet_env
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

from screvi_mcp.local.search.mpnet.convert import cache_root
from screvi_mcp.server.app import all_tool_specs

pytestmark = pytest.mark.e2e

BUILD = REPO / "scripts" / "build_bundle.py"
HOST_CONFIG = REPO / "e2e" / "bundle_config.mjs"


def _uv_cache() -> Path:
    """uv's download cache: the one scripts/test.sh's uv filled the venv from, so the host's
    install finds its wheels there (on a clean clone, a cache of its own fetched ~800 MB on
    every run); else one kept in the checkout's venv. Where uv keeps wheels, not what the
    host runs."""
    uv = REPO / ".venv" / "bin" / "uv"
    if uv.is_file():
        found = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True, timeout=60)
        if found.returncode == 0 and found.stdout.strip():
            return Path(found.stdout.strip())
    return REPO / ".venv" / "uv-cache"


UV_CACHE = _uv_cache()
NETWORK_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY")
NETWORK_SETTINGS += tuple(name.lower() for name in NETWORK_SETTINGS[2:])


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "screvi-mcp.mcpb"
    subprocess.run([sys.executable, BUILD, "--out", out], check=True, timeout=300)
    target = out.parent / "unpacked"
    with zipfile.ZipFile(out) as bundle:
        bundle.extractall(target)
    return target


def host_config(unpacked: Path, user_config: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [NODE, HOST_CONFIG, unpacked, json.dumps(user_config)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    config: dict[str, Any] = json.loads(done.stdout)
    return config


def test_manifest_asks_for_the_key_as_a_secret_and_lists_every_tool(unpacked: Path) -> None:
    manifest = json.loads((unpacked / "manifest.json").read_text())
    assert manifest["server"]["type"] == "uv"
    options = manifest["user_config"]
    assert options["api_key"]["sensitive"] is True
    assert {"api_key", "base_url", "library_path"} <= set(options)
    assert {tool["name"] for tool in manifest["tools"]} == {s.name for s in all_tool_specs()}
    # The host installs the embedded library's dependencies, not the hosted-only base.
    assert "onnxruntime" in (unpacked / "pyproject.toml").read_text()
    assert (unpacked / "uv.lock").exists()


async def test_the_server_starts_as_a_host_starts_it_and_answers_tools(
    unpacked: Path, tmp_path: Path
) -> None:
    library = tmp_path / "library.sqlite3"
    # What a user who fills in only the library file gets; the key stays empty.
    config = host_config(unpacked, {"library_path": str(library)})
    assert config["env"]["SCREVI_API_KEY"] == ""
    env = quiet_env(tmp_path, {"UV_CACHE_DIR": str(UV_CACHE), "UV_PYTHON_DOWNLOADS": "never"})
    # The converted English model where this machine's user keeps it (scripts/test.sh's
    # `install-model` made it), as a real user's second install would find it: the private
    # HOME would otherwise convert it again (half a minute, 2.4 GB).
    env["SCREVI_MODEL_CACHE"] = str(cache_root())
    # The host puts its own uv on PATH; here it is the venv's. uv reaches the package index
    # through this machine's own TLS and proxy settings, as any program the host starts would.
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    env.update({name: os.environ[name] for name in NETWORK_SETTINGS if name in os.environ})
    env.update(config["env"])
    params = StdioServerParameters(command=config["command"], args=config["args"], env=env)
    stderr_path = tmp_path / "stderr.log"
    with stderr_path.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listing = await session.list_tools()
            created = await session.call_tool(
                "create_highlight",
                {"content": "Bundles install in one click, on every platform uv serves."},
            )
            found = await session.call_tool("search_highlights", {"query": "one click"})
    assert {tool.name for tool in listing.tools} == {s.name for s in all_tool_specs()}
    assert not created.is_error and not found.is_error
    assert isinstance(found.content[0], TextContent)
    assert "Bundles install in one click" in found.content[0].text
    assert library.exists()  # the file the user chose, not the default
    assert f"embedded library at {library}" in stderr_path.read_text()
