"""Faults over a real socket: a local server that stalls, resets or answers like a broken proxy.

The transport-level fault tests fake httpx's exceptions; these make httpx raise them itself, so
the mapping from "what the network did" to "what the client resends" is checked end to end.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx
import pytest
from client_testkit import SCOPED_KEY, Sleeps
from mcp import Client

from screvi_mcp.client import (
    RetryPolicy,
    ScreviClient,
    ScreviConnectionError,
    ScreviError,
    ScreviTimeoutError,
    UnexpectedResponseError,
)
from screvi_mcp.server.app import build_server
from screvi_mcp.server.backend import Backend, BackendConfig
from screvi_mcp.server.errors import describe
from testsupport.servers import free_port

OK_BODY = json.dumps({"data": []}).encode()
HTML_BODY = b"<html><body><h1>502 Bad Gateway</h1></body></html>"


@dataclass
class RawServer:
    """An HTTP/1.1 server that follows a script: `ok`, `html502`, `reset` or `silent`.

    `requests` lists the method of every request that arrived in full.
    """

    script: list[str]
    requests: list[str] = field(default_factory=list)
    released: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method = lines[0].split(" ", 1)[0]
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length:
                    await reader.readexactly(length)
                self.requests.append(method)
                step = self.script[min(len(self.requests), len(self.script)) - 1]
                if step == "silent":
                    await self.released.wait()
                    return
                if step == "reset":
                    # SO_LINGER 0: close with a TCP RST, as a crashing peer or a proxy would.
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    return
                status, body, kind = (
                    (b"200 OK", OK_BODY, b"application/json")
                    if step == "ok"
                    else (b"502 Bad Gateway", HTML_BODY, b"text/html")
                )
                writer.write(
                    b"HTTP/1.1 " + status + b"\r\nContent-Type: " + kind + b"\r\n"
                    b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()


@asynccontextmanager
async def raw_server(script: list[str]) -> AsyncIterator[tuple[RawServer, str]]:
    fault = RawServer(script)
    server = await asyncio.start_server(fault.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield fault, f"http://127.0.0.1:{port}/api/v1"
    finally:
        fault.released.set()
        server.close()
        await server.wait_closed()


def client_for(base_url: str, sleeps: Sleeps, retries: int = 2) -> ScreviClient:
    return ScreviClient(
        SCOPED_KEY,
        base_url=base_url,
        timeout=httpx.Timeout(0.5),
        rate_limit=None,
        retry=RetryPolicy(max_retries=retries),
        sleep=sleeps,
    )


async def test_stalled_post_times_out_once_and_is_not_resent(sleeps: Sleeps) -> None:
    async with raw_server(["silent"]) as (fault, url), client_for(url, sleeps) as client:
        with pytest.raises(ScreviTimeoutError):
            await client.create_tag("ideas")
    assert fault.requests == ["POST"]
    assert sleeps.waits == []


async def test_stalled_get_is_retried_then_succeeds(sleeps: Sleeps) -> None:
    async with raw_server(["silent", "ok"]) as (fault, url), client_for(url, sleeps) as client:
        assert await client.list_tags() == []
    assert fault.requests == ["GET", "GET"]
    assert len(sleeps.waits) == 1


async def test_reset_post_is_not_resent(sleeps: Sleeps) -> None:
    async with raw_server(["reset", "ok"]) as (fault, url), client_for(url, sleeps) as client:
        with pytest.raises(ScreviConnectionError) as caught:
            await client.create_highlight("sent once")
    assert not isinstance(caught.value, ScreviTimeoutError)
    assert fault.requests == ["POST"]


async def test_reset_delete_is_not_resent(sleeps: Sleeps) -> None:
    async with raw_server(["reset", "ok"]) as (fault, url), client_for(url, sleeps) as client:
        with pytest.raises(ScreviConnectionError):
            await client.remove_highlight_tags("h1", ["a"])
    assert fault.requests == ["DELETE"]


async def test_reset_get_is_retried_until_the_retries_run_out(sleeps: Sleeps) -> None:
    async with (
        raw_server(["reset"]) as (fault, url),
        client_for(url, sleeps, retries=2) as client,
    ):
        with pytest.raises(ScreviConnectionError):
            await client.list_tags()
    assert fault.requests == ["GET", "GET", "GET"]


async def test_proxy_html_502_then_ok_on_get(sleeps: Sleeps) -> None:
    async with raw_server(["html502", "ok"]) as (fault, url), client_for(url, sleeps) as client:
        assert await client.list_tags() == []
        fault.script = ["html502"]
        fault.requests.clear()
        with pytest.raises(UnexpectedResponseError) as caught:
            await client.create_tag("x")
    assert fault.requests == ["POST"]
    assert caught.value.status == 502
    assert "502 Bad Gateway" in caught.value.message


async def test_refused_connection_is_retried_even_for_a_post(sleeps: Sleeps) -> None:
    # A port that was free a moment ago: nothing listens, the connection is refused, and the
    # request provably never reached a server, so resending the POST is safe.
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    async with client_for(f"http://127.0.0.1:{port}/api/v1", sleeps, retries=2) as client:
        with pytest.raises(ScreviConnectionError) as caught:
            await client.create_highlight("x")
    assert len(sleeps.waits) == 2
    assert not isinstance(caught.value, ScreviTimeoutError)


# What the agent is told: a write whose outcome is unknown is never "just try again" --------


@pytest.mark.parametrize("fault", ["silent", "reset", "html502"])
async def test_a_write_with_an_unknown_outcome_says_so_and_how_to_check(
    sleeps: Sleeps, fault: str
) -> None:
    async with raw_server([fault]) as (_, url), client_for(url, sleeps) as client:
        with pytest.raises(ScreviError) as caught:
            await client.create_highlight("did this land?")
        with pytest.raises(ScreviError) as bulk:
            await client.create_highlights_bulk([{"content": "a"}, {"content": "b"}])
        with pytest.raises(ScreviError) as source:
            await client.create_source("A Book", "book")
    checks = ((caught, "list_highlights"), (bulk, "list_highlights"), (source, "list_sources"))
    for error, check in checks:
        advice = describe(error.value)
        assert "unknown" in advice and check in advice, advice
        assert "try the call again" not in advice and "try again shortly" not in advice, advice
        assert "Next: " in advice


@pytest.mark.parametrize("fault", ["silent", "reset"])
async def test_a_failed_read_may_simply_be_tried_again(sleeps: Sleeps, fault: str) -> None:
    async with raw_server([fault]) as (_, url), client_for(url, sleeps, retries=0) as client:
        with pytest.raises(ScreviConnectionError) as caught:
            await client.list_tags()
    advice = describe(caught.value)
    assert "again" in advice and "unknown" not in advice, advice


async def test_a_write_that_never_left_may_simply_be_tried_again(sleeps: Sleeps) -> None:
    url = f"http://127.0.0.1:{free_port()}/api/v1"  # closed: nobody listens
    async with client_for(url, sleeps, retries=0) as client:
        with pytest.raises(ScreviConnectionError) as caught:
            await client.create_highlight("x")
    advice = describe(caught.value)
    assert "unknown" not in advice and "again" in advice, advice


# One overall deadline per tool call ---------------------------------------------------------


@asynccontextmanager
async def mcp_over(base_url: str, call_deadline: float) -> AsyncIterator[Client]:
    backend = Backend(
        BackendConfig(api_key=SCOPED_KEY, base_url=base_url, call_deadline=call_deadline)
    )
    server = build_server(backend)
    try:
        async with Client(server, cache=None) as client:  # type: ignore[arg-type]
            yield client
    finally:
        await backend.aclose()


async def test_a_stalled_api_holds_a_tool_call_no_longer_than_its_deadline() -> None:
    """Each attempt's own timeout is 30 s and reads are resent 3 times; the call's deadline
    (1.5 s here) still ends the whole call, with a timeout the agent can act on."""
    async with raw_server(["silent"]) as (fault, url), mcp_over(url, 1.5) as client:
        read = await client.call_tool("list_tags", {})
        write = await client.call_tool("create_tag", {"name": "ideas"})
    assert read.is_error and write.is_error
    read_text = read.content[0].text  # type: ignore[union-attr]
    write_text = write.content[0].text  # type: ignore[union-attr]
    assert read_text.startswith("[timeout]") and "unknown" not in read_text, read_text
    assert write_text.startswith("[timeout]") and "list_tags" in write_text, write_text
    assert "unknown" in write_text
    # One GET: its 30 s timeout never came, so neither did a resend; the deadline ended it.
    assert fault.requests == ["GET", "POST"]
