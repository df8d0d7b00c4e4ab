"""`screvi-mcp` as a real process: stdio, streamable HTTP (stateful and stateless), SSE, the
bearer token gate, DNS-rebinding protection, the refusal to expose itself without a token,
and a remote client's own Screvi key in `X-Screvi-Api-Key`.

All HTTP servers of this module start side by side once (each on a free 127.0.0.1 port) and
are stopped in teardown. No traffic leaves 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.types import TextContent
from server_testkit import (
    ALL_TOOLS,
    READ_TOOLS,
    SCREVI_MCP,
    LocalApi,
    Seed,
    ServerProcess,
    assert_tool_error,
    call_error,
    call_ok,
    copy_library,
    server_env,
)
from server_testkit import tool_names as declared_tools

from screvi_mcp.server.toolkit import TOOLSETS
from screvi_mcp.server.transport import HttpOptions
from testsupport.servers import free_port

TOKEN = "tK4v9oQx2_Lr7WmZ8cYb3NfHs1GdJpEu6AiVnXq0TeR"  # token_urlsafe(32)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def servers(
    seeded_template: tuple[Path, Seed],
    local_api: LocalApi,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, ServerProcess]]:
    """Every HTTP server this module talks to, started together."""
    root = tmp_path_factory.mktemp("servers")

    def library(name: str) -> str:
        return str(copy_library(seeded_template[0], root / f"{name}.sqlite3"))

    # The stateless and SSE servers run hosted, against the local API (their own key can
    # write), so that only one subprocess pays for loading the embedded search model.
    hosted = server_env(SCREVI_API_KEY=local_api.write_key, SCREVI_BASE_URL=local_api.base_url)
    plans: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "http": (
            ["--library", library("http"), "--transport", "streamable-http", "--auth-token", TOKEN],
            None,
        ),
        "stateless": (["--transport", "streamable-http", "--stateless"], hosted),
        "sse": (["--transport", "sse"], hosted),
    }
    started: dict[str, ServerProcess] = {}
    try:
        for name, (args, env) in plans.items():
            started[name] = ServerProcess(args, root / f"{name}.log", env)
        for process in started.values():
            process.wait_healthy()
        yield started
    finally:
        for process in started.values():
            process.close()


def mcp_url(server: ServerProcess) -> str:
    return f"{server.root}/mcp"


def tool_names(listing: Any) -> set[str]:
    return {tool.name for tool in listing.tools}


# stdio ------------------------------------------------------------------------------------


async def test_stdio_subprocess_speaks_only_protocol_on_stdout(
    library_path: Path, tmp_path: Path
) -> None:
    stray: list[Exception] = []

    async def on_message(message: Any) -> None:
        # A line on stdout that is not JSON-RPC reaches the session as an exception.
        if isinstance(message, Exception):
            stray.append(message)

    params = StdioServerParameters(
        command=SCREVI_MCP, args=["--library", str(library_path)], env=server_env()
    )
    stderr_path = tmp_path / "stderr.log"
    with stderr_path.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            initialized = await session.initialize()
            listing = await session.list_tools()
            result = await session.call_tool("search_highlights", {"query": "falsehoods"})
    assert initialized.server_info.name == "screvi"
    assert tool_names(listing) == ALL_TOOLS
    assert not result.is_error
    assert isinstance(result.content[0], TextContent)
    assert "falsehoods" in result.content[0].text
    assert stray == []
    stderr = stderr_path.read_text()
    assert f"screvi-mcp: embedded library at {library_path}" in stderr
    assert "serving MCP over stdio" in stderr


# Streamable HTTP and SSE ------------------------------------------------------------------


# Clients the tests hand the SDK get a bound like the SDK's own (30 s): httpx's default 5 s
# read timeout ran out on a busy machine while the server answered its first call.
HTTP_TIMEOUT = httpx2.Timeout(60.0)


def authorized() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=HTTP_TIMEOUT)


async def test_streamable_http_with_token(servers: dict[str, ServerProcess], seed: Seed) -> None:
    async with (
        authorized() as http,
        Client(streamable_http_client(mcp_url(servers["http"]), http_client=http), cache=None) as c,
    ):
        assert tool_names(await c.list_tools()) == ALL_TOOLS
        text = await call_ok(c, "get_highlight", {"highlight_id": seed.book_highlight_id})
    assert "Nothing in life is as important" in text
    log = servers["http"].log()
    assert "embedded library at" in log and "streamable-http at http://127.0.0.1:" in log
    assert TOKEN not in log, "the token is never logged"


async def test_streamable_http_stateless(servers: dict[str, ServerProcess]) -> None:
    url = mcp_url(servers["stateless"])
    async with Client(streamable_http_client(url), cache=None) as client:
        assert tool_names(await client.list_tools()) == ALL_TOOLS
        created = await call_ok(client, "create_tag", {"name": "stateless"})
        listed = await call_ok(client, "list_tags")
    assert created.startswith("Created tag stateless")
    assert "stateless — 0 highlights" in listed


async def test_sse(servers: dict[str, ServerProcess], seed: Seed) -> None:
    async with Client(sse_client(f"{servers['sse'].root}/sse"), cache=None) as client:
        assert tool_names(await client.list_tools()) == ALL_TOOLS
        text = await call_ok(client, "get_source", {"source_id": seed.book_id})
    assert text.startswith("Thinking, Fast and Slow")
    assert "serving MCP over sse at http://127.0.0.1:" in servers["sse"].log()


# The token gate ---------------------------------------------------------------------------


def test_token_is_required(servers: dict[str, ServerProcess]) -> None:
    url = mcp_url(servers["http"])
    missing = httpx.post(url, json=INITIALIZE, headers=MCP_HEADERS)
    wrong = httpx.post(
        url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": "Bearer not-it"}
    )
    right = httpx.post(
        url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    )
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert missing.json()["code"] == "unauthorized"
    assert wrong.status_code == 401
    assert right.status_code == 200


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "BeArEr"])
def test_the_bearer_scheme_is_case_insensitive(
    servers: dict[str, ServerProcess], scheme: str
) -> None:
    url = mcp_url(servers["http"])
    headers = {**MCP_HEADERS, "Authorization": f"{scheme} {TOKEN}"}
    assert httpx.post(url, json=INITIALIZE, headers=headers).status_code == 200
    wrong = {**MCP_HEADERS, "Authorization": f"{scheme} {TOKEN[:-1]}"}
    assert httpx.post(url, json=INITIALIZE, headers=wrong).status_code == 401


@pytest.mark.parametrize("token", ["x", "short-password", "a" * 31])
def test_a_weak_auth_token_is_refused_at_start_up(
    captured_run: list[tuple[MCPServer, str, HttpOptions]],
    library_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    token: str,
) -> None:
    from screvi_mcp.cli import main

    http = ["--library", str(library_path), "--transport", "streamable-http"]
    assert main([*http, "--auth-token", token]) == 2
    monkeypatch.setenv("SCREVI_MCP_AUTH_TOKEN", token)
    assert main(http) == 2
    assert captured_run == []
    err = capsys.readouterr().err
    assert "at least 32 characters" in err and "secrets.token_urlsafe(32)" in err
    assert token not in err.replace("token_urlsafe", "")


def test_health_needs_no_token(servers: dict[str, ServerProcess]) -> None:
    response = httpx.get(f"{servers['http'].root}/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


# DNS-rebinding protection -----------------------------------------------------------------


def test_foreign_host_header_is_refused(servers: dict[str, ServerProcess]) -> None:
    url = mcp_url(servers["http"])
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    refused = httpx.post(url, json=INITIALIZE, headers={**headers, "Host": "evil.example"})
    served = httpx.post(url, json=INITIALIZE, headers=headers)
    assert refused.status_code == 421
    assert served.status_code == 200, "the same request with the real Host header is served"


def test_foreign_origin_is_refused(servers: dict[str, ServerProcess]) -> None:
    response = httpx.post(
        mcp_url(servers["stateless"]),
        json=INITIALIZE,
        headers={**MCP_HEADERS, "Origin": "http://evil.example"},
    )
    assert 400 <= response.status_code < 500


# A remote client's own key ----------------------------------------------------------------


async def test_client_key_header_is_used_for_that_call(
    servers: dict[str, ServerProcess], local_api: LocalApi
) -> None:
    """The server's own key can write; a call carrying a read-only key cannot."""
    async with (
        httpx2.AsyncClient(timeout=HTTP_TIMEOUT) as http,
        Client(
            streamable_http_client(mcp_url(servers["stateless"]), http_client=http), cache=None
        ) as client,
    ):
        assert "create_tag" in tool_names(await client.list_tools())
        http.headers["X-Screvi-Api-Key"] = local_api.read_key
        refused = await call_error(client, "create_tag", {"name": "from-header"})
        http.headers["X-Screvi-Api-Key"] = "sk_live_unknown"
        unknown = await call_error(client, "list_tags")
        del http.headers["X-Screvi-Api-Key"]
        created = await call_ok(client, "create_tag", {"name": "from-header"})
    assert_tool_error(refused, "insufficient_scope", "write")
    assert_tool_error(unknown, "invalid_api_key", "X-Screvi-Api-Key")
    assert created.startswith("Created tag from-header")
    assert local_api.read_key not in servers["stateless"].log(), "the key is never logged"


# The command line, in-process: what it would serve, without serving it -------------------


@pytest.fixture
def captured_run(monkeypatch: pytest.MonkeyPatch) -> list[tuple[MCPServer, str, HttpOptions]]:
    """`screvi-mcp`'s serving step replaced by a recorder."""
    from screvi_mcp.server import transport

    calls: list[tuple[MCPServer, str, HttpOptions]] = []

    def record(mcp: MCPServer, backend: Any, kind: str, options: HttpOptions) -> None:
        calls.append((mcp, kind, options))

    monkeypatch.setattr(transport, "run", record)
    for name in ("SCREVI_API_KEY", "SCREVI_BASE_URL", "SCREVI_MCP_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return calls


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--read-only"], READ_TOOLS),
        (["--toolsets", "search,tags"], declared_tools("search", "tags")),
        (
            ["--read-only", "--toolsets", "search,tags"],
            declared_tools("search", "tags", read_only=True),
        ),
    ],
    ids=["read-only", "toolsets", "both"],
)
async def test_cli_read_only_and_toolsets(
    captured_run: list[tuple[MCPServer, str, HttpOptions]],
    library_path: Path,
    flags: list[str],
    expected: set[str],
) -> None:
    from screvi_mcp.cli import main

    assert main(["--library", str(library_path), *flags]) == 0
    [(mcp, kind, _)] = captured_run
    async with Client(mcp, cache=None) as client:
        names = tool_names(await client.list_tools())
    assert kind == "stdio"
    assert names == expected


def test_non_loopback_bind_without_token_is_refused(
    captured_run: list[tuple[MCPServer, str, HttpOptions]],
    library_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # In-process: the refusal comes before anything is served (a recorder stands in for
    # serving, so a missed refusal is caught without binding 0.0.0.0).
    from screvi_mcp.cli import main

    lan = ["--host", "0.0.0.0", "--port", str(free_port())]
    status = main(["--library", str(library_path), "--transport", "streamable-http", *lan])
    assert status != 0 and captured_run == []
    out, err = capsys.readouterr()
    assert "refusing to listen on 0.0.0.0 without an auth token" in err
    assert "--auth-token" in err
    assert out == ""


def test_cli_rejects_an_unknown_toolset(
    captured_run: list[tuple[MCPServer, str, HttpOptions]],
    library_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from screvi_mcp.cli import main

    status = main(["--library", str(library_path), "--toolsets", "search,everything"])
    assert status != 0 and captured_run == []
    assert "unknown toolset(s) everything" in capsys.readouterr().err


def test_every_toolset_is_offered_by_the_cli() -> None:
    # Guards the CLI default against a toolset added to the server but not to the CLI.
    from screvi_mcp.cli import TOOLSET_NAMES

    assert set(TOOLSET_NAMES) == set(TOOLSETS)
