"""Fixtures of the end-to-end tests with third-party MCP clients.

Everything runs on 127.0.0.1 and is built once per session:

- `library`: a fresh embedded library seeded over its own REST API (`screvi-mcp api`, kept
  running), with a write key for setup and checks, and a scoped read-only key.
- `site`: a static web server for e2e/fixtures, the article page the clients save.
- `mcp_http`: `screvi-mcp` over streamable HTTP on that library, and a second one that talks
  to the REST API with the read-only key (for the `[insufficient_scope]` step).
- `stdio_config` / `http_config`: host config files (Claude Desktop's `mcpServers` shape)
  rendered from e2e/configs with this session's paths, keys and ports.
"""

from __future__ import annotations

import functools
import http.server
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from e2e_harness import (
    FIXTURES,
    SCREVI_MCP,
    TARGET_HIGHLIGHT,
    Library,
    McpHttp,
    Service,
    model_choice,
    quiet_env,
    render_config,
    start_service,
)

from testsupport.servers import free_port

SEED_HIGHLIGHTS = [
    {
        "content": TARGET_HIGHLIGHT,
        "note": "The whole case for keeping highlights, in one line.",
        "tags": ["memory"],
    },
    {
        "content": "Ten or twenty headings that describe the questions you care about gather "
        "better neighbourhoods of passages than a sprawling taxonomy.",
        "tags": ["tags", "method"],
    },
    {
        "content": "The harbour froze early that winter, and the ferries stopped until March.",
        "tags": ["fiction"],
    },
    {
        "content": "Compound interest rewards patience more than it rewards cleverness.",
        "favorite": True,
    },
]


@pytest.fixture(scope="session")
def e2e_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="session")
def client_home(e2e_root: Path) -> Path:
    home = e2e_root / "home"
    home.mkdir()
    return home


@pytest.fixture(scope="session")
def logs(e2e_root: Path) -> Path:
    path = e2e_root / "logs"
    path.mkdir()
    return path


def _server_env(home: Path, **extra: str) -> dict[str, str]:
    # The article page is served from loopback, which the fetcher refuses unless told.
    return quiet_env(home, {"SCREVI_ALLOW_PRIVATE_NETWORKS": "1", **model_choice(), **extra})


def _create_key(library: Path, name: str, *, write: bool, env: dict[str, str]) -> str:
    argv = [str(SCREVI_MCP), "keys", "create", "--library", str(library), "--name", name]
    if write:
        argv.append("--write")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=True)
    key = done.stdout.strip()
    assert key.startswith("sk_"), done
    return key


@pytest.fixture(scope="session")
def library(e2e_root: Path, client_home: Path, logs: Path) -> Iterator[Library]:
    path = e2e_root / "library.sqlite3"
    env = _server_env(client_home)
    write_key = _create_key(path, "e2e-setup", write=True, env=env)
    readonly_key = _create_key(path, "e2e-readonly", write=False, env=env)
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api/v1"
    headers = {"X-API-Key": write_key}
    api = start_service(
        "rest-api",
        [SCREVI_MCP, "api", "--library", path, "--port", str(port)],
        env=env,
        logs=logs,
        ready_url=f"{api_url}/tags",
        headers=headers,
    )
    try:
        created = httpx.post(
            f"{api_url}/highlights/bulk",
            json={"highlights": SEED_HIGHLIGHTS},
            headers=headers,
            timeout=60,
        )
        assert created.status_code == 201, created.text
        yield Library(path, api_url, write_key, readonly_key)
    finally:
        api.stop()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """Base URL of a static server for e2e/fixtures; `article_url(site, who)` per client."""
    handler = functools.partial(_QuietHandler, directory=str(FIXTURES))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="e2e-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def mcp_http(library: Library, client_home: Path, logs: Path) -> Iterator[McpHttp]:
    services: list[Service] = []
    try:
        port = free_port()
        services.append(
            start_service(
                "mcp-http",
                [
                    SCREVI_MCP,
                    "--library",
                    library.path,
                    "--transport",
                    "streamable-http",
                    "--port",
                    str(port),
                ],
                env=_server_env(client_home),
                logs=logs,
                ready_url=f"http://127.0.0.1:{port}/health",
            )
        )
        readonly_port = free_port()
        services.append(
            start_service(
                "mcp-http-readonly",
                [SCREVI_MCP, "--transport", "streamable-http", "--port", str(readonly_port)],
                env=_server_env(
                    client_home,
                    SCREVI_API_KEY=library.readonly_key,
                    SCREVI_BASE_URL=library.api_url,
                ),
                logs=logs,
                ready_url=f"http://127.0.0.1:{readonly_port}/health",
            )
        )
        yield McpHttp(
            url=f"http://127.0.0.1:{port}/mcp",
            readonly_url=f"http://127.0.0.1:{readonly_port}/mcp",
        )
    finally:
        for service in services:
            service.stop()


@pytest.fixture(scope="session")
def stdio_config(library: Library, e2e_root: Path) -> Path:
    """A Claude Desktop config: `screvi` on the embedded library, `screvi-readonly` on the
    REST API with the read-only key. Hosts spawn both over stdio."""
    return render_config(
        "claude_desktop_config.json.tmpl",
        e2e_root / "claude_desktop_config.json",
        screvi_mcp=str(SCREVI_MCP),
        library=str(library.path),
        readonly_key=library.readonly_key,
        api_base_url=library.api_url,
    )


@pytest.fixture(scope="session")
def http_config(mcp_http: McpHttp, e2e_root: Path) -> Path:
    """The same two servers as URL entries (Claude Code / Cursor style), streamable HTTP."""
    return render_config(
        "http_config.json.tmpl",
        e2e_root / "http_config.json",
        mcp_url=mcp_http.url,
        readonly_mcp_url=mcp_http.readonly_url,
    )
