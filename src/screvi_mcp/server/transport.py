"""Serving the MCP server: stdio, SSE or streamable HTTP, with the HTTP safety rules.

- HTTP binds 127.0.0.1 by default, with DNS-rebinding protection (a bad Host gets 421).
- Binding anywhere else refuses to start without an auth token; with a token, every request
  but `/health` must carry `Authorization: Bearer <token>` or gets 401.
- A request body over `max_body_bytes` (32 MiB) is answered 413 with a JSON-RPC error.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio
from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from screvi_mcp.server.backend import Backend
from screvi_mcp.server.body_limit import MAX_MCP_BODY_BYTES, RequestBodyLimit

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

log = logging.getLogger("screvi_mcp.server")

Transport = Literal["stdio", "sse", "streamable-http"]
HEALTH_PATH = "/health"


@dataclass(frozen=True)
class HttpOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    stateless: bool = False
    auth_token: str | None = None
    allowed_hosts: list[str] = field(default_factory=list)
    max_body_bytes: int = MAX_MCP_BODY_BYTES


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class StartupRefused(Exception):
    """The options would expose the server unsafely; the message says how to fix them."""


# A bearer token guards a network port: anything shorter is too easy to guess or brute-force.
MIN_AUTH_TOKEN_CHARS = 32
MAKE_A_TOKEN = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"


# Length alone lets `a`×32 pass: a token also needs this many different characters and this
# much entropy by its own character counts (a token_hex(16) has about 118 bits, `a`×32 none).
MIN_AUTH_TOKEN_DISTINCT = 10
MIN_AUTH_TOKEN_BITS = 100


def token_weakness(token: str) -> str | None:
    """Why a bearer token cannot guard a port, or None. Never quotes the token."""
    if any(not char.isprintable() or char.isspace() for char in token):
        # A header value is stripped: a token of or with spaces could never be presented.
        return "it holds spaces or control characters"
    if len(token) < MIN_AUTH_TOKEN_CHARS:
        return f"it must be at least {MIN_AUTH_TOKEN_CHARS} characters (it has {len(token)})"
    counts = Counter(token).values()
    bits = -sum(n * math.log2(n / len(token)) for n in counts)
    if len(counts) < MIN_AUTH_TOKEN_DISTINCT or bits < MIN_AUTH_TOKEN_BITS:
        return "it has too few different characters to be hard to guess"
    return None


def check_exposure(options: HttpOptions) -> None:
    token = options.auth_token
    weakness = None if token is None else token_weakness(token)
    if weakness is not None:
        raise StartupRefused(
            f"the auth token is too weak to guard a network port: {weakness}. Make one "
            f"with: {MAKE_A_TOKEN}"
        )
    if not is_loopback(options.host) and not options.auth_token:
        raise StartupRefused(
            f"refusing to listen on {options.host} without an auth token: anyone who can "
            "reach it could use the library. Set --auth-token or SCREVI_MCP_AUTH_TOKEN, or "
            "bind to 127.0.0.1."
        )


def transport_security(options: HttpOptions) -> TransportSecuritySettings:
    """DNS-rebinding protection: only Host headers naming this server are served."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    if not is_loopback(options.host):
        hosts.append(f"{options.host}:*")
    hosts.extend(options.allowed_hosts)
    origins = [f"http://{host}" for host in hosts] + [f"https://{host}" for host in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class BearerTokenGate:
    """ASGI middleware: every HTTP request but /health needs the bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") == HEALTH_PATH:
            await self.app(scope, receive, send)
            return
        presented = dict(scope.get("headers") or []).get(b"authorization", b"")
        # The scheme is case-insensitive (RFC 9110, 11.1): `bearer x` is as good as `Bearer x`.
        scheme, _, credentials = presented.strip().partition(b" ")
        if scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self.expected):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {"error": "Missing or wrong bearer token for this MCP server", "code": "unauthorized"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="screvi-mcp"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def http_app(mcp: MCPServer, transport: Transport, options: HttpOptions) -> ASGIApp:
    """The ASGI app for an HTTP transport, with /health, the body bound and the token gate
    (outermost: nobody without the token gets a body read)."""
    security = transport_security(options)
    # The SDK's own bound (4 MiB by default) is set to ours, which answers first and better.
    limit = options.max_body_bytes
    starlette: Starlette
    if transport == "sse":
        starlette = mcp.sse_app(
            transport_security=security, host=options.host, max_request_body_size=limit
        )
    else:
        starlette = mcp.streamable_http_app(
            stateless_http=options.stateless,
            transport_security=security,
            host=options.host,
            max_request_body_size=limit,
        )
    app: ASGIApp = RequestBodyLimit(starlette, limit)
    if options.auth_token:
        return BearerTokenGate(app, options.auth_token)
    return app


def add_health_route(mcp: MCPServer) -> None:
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    @mcp.custom_route(HEALTH_PATH, methods=["GET"])  # type: ignore[untyped-decorator]
    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})


def lowlevel_server(mcp: MCPServer) -> Server[Any]:
    """The SDK's low-level server behind `mcp`: the one private access to the SDK.

    stdio_guard must wrap the stdio read stream, and mcp 2.x offers no public way to: the
    read stream is built inside `MCPServer.run_stdio_async`, no property exposes the
    low-level server, and `MCPServer.middleware` never sees the parse exceptions the guard
    answers. The SDK's own in-memory client reaches it the same way. Any SDK change that
    moves it fails here, loudly, and in test_stdio_surrogates.py, before a user meets it.
    """
    from mcp.server.lowlevel import Server

    server = getattr(mcp, "_lowlevel_server", None)
    if not isinstance(server, Server):
        raise RuntimeError(
            "this mcp SDK has no MCPServer._lowlevel_server: screvi-mcp's stdio transport "
            "(server/transport.py, lowlevel_server) must be adapted to it"
        )
    return server


async def _run_stdio(mcp: MCPServer) -> None:
    """`mcp.run_stdio_async()`, with a lone-surrogate request answered, not dropped."""
    from mcp.server.stdio import stdio_server

    from screvi_mcp.server.stdio_guard import SurrogateGuard

    server = lowlevel_server(mcp)
    async with stdio_server() as (read_stream, write_stream):
        guarded = SurrogateGuard(read_stream, write_stream)
        await server.run(guarded, write_stream, server.create_initialization_options())


async def serve(
    mcp: MCPServer, backend: Backend, transport: Transport, options: HttpOptions
) -> None:
    """Run until stopped; the backend's client is closed on the way out."""
    try:
        if transport == "stdio":
            await _run_stdio(mcp)
            return
        import uvicorn

        check_exposure(options)
        config = uvicorn.Config(
            http_app(mcp, transport, options),
            host=options.host,
            port=options.port,
            log_level="warning",
            lifespan="on",
        )
        await uvicorn.Server(config).serve()
    finally:
        with anyio.CancelScope(shield=True):
            await backend.aclose()


def run(mcp: MCPServer, backend: Backend, transport: Transport, options: HttpOptions) -> None:
    anyio.run(serve, mcp, backend, transport, options)


def describe_endpoint(transport: Transport, options: HttpOptions) -> str:
    if transport == "stdio":
        return "stdio"
    path = "/sse" if transport == "sse" else "/mcp"
    return f"{transport} at http://{options.host}:{options.port}{path}"
