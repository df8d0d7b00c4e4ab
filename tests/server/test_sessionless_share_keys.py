"""Sessionless HTTP clients (streamable HTTP without `mcp-session-id`) get a fair share of
the rate limit each, keyed by their remote address and the Screvi key they present: they
used to share one key, so one busy client left every other its sliver. The key in a share
key is a digest, never the key. Real requests over 127.0.0.0/8, from two source addresses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from server_testkit import LocalApi

from screvi_mcp.server import backend as backend_module
from screvi_mcp.server.app import build_server
from screvi_mcp.server.backend import Backend, BackendConfig
from screvi_mcp.server.transport import HttpOptions, http_app
from testsupport.servers import asgi_server

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LIST_TAGS = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "list_tags", "arguments": {}},
}


@pytest.fixture
def share_keys(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """Every share key a tool call counted its requests against, in order."""
    seen: list[str | None] = []
    real = backend_module.share_key

    @contextmanager
    def recording(key: str | None) -> Iterator[None]:
        seen.append(key)
        with real(key):
            yield

    monkeypatch.setattr(backend_module, "share_key", recording)
    return seen


async def _call(url: str, source: str, own_key: str | None = None) -> Any:
    headers = dict(MCP_HEADERS)
    if own_key:
        headers["X-Screvi-Api-Key"] = own_key
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=60) as client:
        response = await client.post(url, content=json.dumps(LIST_TAGS), headers=headers)
    assert response.status_code == 200, response.text
    assert "mcp-session-id" not in response.headers  # sessionless indeed
    return response


async def test_each_address_and_key_gets_a_share_of_its_own(
    local_api: LocalApi, share_keys: list[str | None]
) -> None:
    # The backend's client lives on the server's event loop (uvicorn's thread) and ends
    # with it, as in test_body_limit.
    backend = Backend(BackendConfig(api_key=local_api.write_key, base_url=local_api.base_url))
    app = http_app(build_server(backend), "streamable-http", HttpOptions(stateless=True))
    with asgi_server(app) as root:
        url = f"{root}/mcp"
        await _call(url, "127.0.0.1")
        await _call(url, "127.0.0.1")
        await _call(url, "127.0.0.2")
        await _call(url, "127.0.0.1", local_api.read_key)
        await _call(url, "127.0.0.1", local_api.legacy_key)
    assert len(share_keys) == 5
    first, again, other_address, own_key, other_key = share_keys
    assert first == again  # one client, two requests: one share
    assert len({first, other_address, own_key, other_key}) == 4
    for key in share_keys:
        assert key is not None
        assert local_api.read_key not in key and local_api.legacy_key not in key
        assert local_api.write_key not in key
