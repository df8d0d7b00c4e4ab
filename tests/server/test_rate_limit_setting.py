"""SCREVI_RATE_LIMIT: hosted mode keeps under the server's own limit when it is not the
hosted API's 100 a minute (a stand-in such as `screvi-mcp api --rate-limit N`); a bad value
stops the server at start with a message naming the variable."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from server_testkit import LocalApi, Seed, ServerProcess, call_ok, server_env

from screvi_mcp.local.api.keys import create_key
from screvi_mcp.local.storage.library import Library
from testsupport.command import run_command

# Past the 100 a minute the client would otherwise allow itself in one burst.
CALLS = 130


@pytest.fixture(scope="module")
def raised_limit_url(
    local_api: LocalApi, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    library = Library.open(local_api.library_path)
    try:
        _, key = create_key(library, "tests: rate limit setting")  # its own budget
    finally:
        library.close()
    env = server_env(
        SCREVI_API_KEY=key, SCREVI_BASE_URL=local_api.base_url, SCREVI_RATE_LIMIT="1000"
    )
    log = tmp_path_factory.mktemp("rate-limit") / "server.log"
    server = ServerProcess(["--transport", "streamable-http", "--stateless"], log, env)
    try:
        server.wait_healthy()
        yield f"{server.root}/mcp"
    finally:
        server.close()


async def test_a_raised_limit_lets_a_burst_past_100_through(
    raised_limit_url: str, seed: Seed
) -> None:
    async with Client(streamable_http_client(raised_limit_url), cache=None) as client:
        for _ in range(CALLS):
            text = await call_ok(client, "get_highlight", {"highlight_id": seed.book_highlight_id})
    assert "Nothing in life is as important" in text


@pytest.mark.parametrize("value", ["0", "many", "1.5", "2000000"])
def test_a_bad_value_stops_the_server_naming_the_variable(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"SCREVI_API_KEY": "sk_live_unused", "SCREVI_RATE_LIMIT": value}
    code, _, err = run_command(monkeypatch, capsys, env=env)
    assert code == 2
    assert "SCREVI_RATE_LIMIT must be a whole number of requests per minute" in err
