"""The bound on one MCP request body over HTTP: past it a 413 with a JSON-RPC error that says
what to do; within it the request is served as before. Real servers on 127.0.0.1: the app
`screvi-mcp` serves, run by uvicorn with a small bound, and (for the default bound) the
`screvi-mcp` process itself."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from server_testkit import LocalApi, ServerProcess, assert_tool_error, call_error, server_env

from screvi_mcp.server.app import build_server
from screvi_mcp.server.backend import Backend, BackendConfig
from screvi_mcp.server.body_limit import MAX_MCP_BODY_BYTES
from screvi_mcp.server.transport import HttpOptions, http_app
from testsupport.servers import asgi_server

SMALL = 64 * 1024
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _assert_too_large(status: int, body: bytes, limit: int) -> None:
    assert status == 413
    answer = json.loads(body)
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None
    error = answer["error"]
    assert error["data"] == {"code": "payload_too_large", "limit_bytes": limit}
    assert error["message"].startswith("[payload_too_large] ")
    assert f"limit of {limit} bytes" in error["message"] and "Next:" in error["message"]


def _declared_only(url: str, length: int) -> tuple[int, bytes]:
    """POST that declares `length` bytes and sends none: the answer must not wait for them."""
    parsed = httpx.URL(url)
    with socket.create_connection((parsed.host, parsed.port), timeout=10) as sock:
        sock.sendall(
            f"POST {parsed.path} HTTP/1.1\r\nHost: {parsed.host}:{parsed.port}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {length}\r\n\r\n".encode()
        )
        received = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def _tool_call(highlight_id: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "get_highlight", "arguments": {"highlight_id": highlight_id}},
    }


@pytest.fixture(scope="module")
def small_bound_url() -> Iterator[str]:
    """The streamable HTTP app with a 64 KiB bound (stateless: no session to open first).
    Its hosted backend is never reached: every call here fails validation or the bound."""
    backend = Backend(BackendConfig(api_key="sk_live_unused", base_url="http://127.0.0.1:9/api/v1"))
    options = HttpOptions(stateless=True, max_body_bytes=SMALL)
    with asgi_server(http_app(build_server(backend), "streamable-http", options)) as root:
        yield f"{root}/mcp"


def test_a_declared_length_past_the_bound_is_refused_unread(small_bound_url: str) -> None:
    status, body = _declared_only(small_bound_url, SMALL + 1)
    _assert_too_large(status, body, SMALL)


def test_a_chunked_body_past_the_bound_is_refused(small_bound_url: str) -> None:
    payload = json.dumps(_tool_call("x" * (SMALL + 100))).encode()

    def chunks() -> Iterator[bytes]:  # no Content-Length: sent chunked, counted on arrival
        for start in range(0, len(payload), 8192):
            yield payload[start : start + 8192]

    response = httpx.post(small_bound_url, content=chunks(), headers=MCP_HEADERS, timeout=30)
    assert "content-length" not in response.request.headers
    _assert_too_large(response.status_code, response.content, SMALL)


async def test_a_body_within_the_bound_is_served(small_bound_url: str) -> None:
    # A 60 KB id: within the bound, so the tool itself answers (the id is too long).
    async with Client(streamable_http_client(small_bound_url), cache=None) as client:
        text = await call_error(client, "get_highlight", {"highlight_id": "x" * 60_000})
    assert_tool_error(text, "invalid_arguments", "highlight_id")
    # And a chunked one: counted, then handed on whole.
    payload = json.dumps(_tool_call("y" * 50_000)).encode()
    response = httpx.post(
        small_bound_url, content=iter([payload[:1000], payload[1000:]]), headers=MCP_HEADERS
    )
    assert response.status_code == 200, response.text
    assert "invalid_arguments" in response.text


@pytest.fixture(scope="module")
def screvi_mcp_url(local_api: LocalApi, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`screvi-mcp --transport streamable-http --stateless` as a process, default bound."""
    env = server_env(SCREVI_API_KEY=local_api.write_key, SCREVI_BASE_URL=local_api.base_url)
    log = tmp_path_factory.mktemp("body-limit") / "server.log"
    server = ServerProcess(["--transport", "streamable-http", "--stateless"], log, env)
    try:
        server.wait_healthy()
        yield f"{server.root}/mcp"
    finally:
        server.close()


async def test_the_server_process_bounds_bodies_at_32_mib_not_the_sdk_s_4(
    screvi_mcp_url: str,
) -> None:
    status, body = _declared_only(screvi_mcp_url, MAX_MCP_BODY_BYTES + 1)
    _assert_too_large(status, body, MAX_MCP_BODY_BYTES)
    # 5 MB, past the SDK's own 4 MiB default: served (the tool refuses the id, not the size).
    async with Client(streamable_http_client(screvi_mcp_url), cache=None) as client:
        text = await call_error(client, "get_highlight", {"highlight_id": "z" * 5_000_000})
    assert_tool_error(text, "invalid_arguments", "highlight_id")
