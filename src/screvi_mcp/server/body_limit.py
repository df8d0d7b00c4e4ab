"""The bound on one MCP request body over HTTP, refused with an error an agent can act on.

The SDK's own cap answers a plain-text "Request body too large" at 4 MiB, which is below
the largest valid tool call (a bulk create of 100 highlights with 20,000-character texts
and notes is about 8 MB as UTF-8). This middleware, outside the SDK's, applies the REST
API's bound instead and answers past it with a JSON-RPC error saying what to do.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from screvi_mcp import contract, extensions

# The same bound as the embedded REST API's request bodies.
MAX_MCP_BODY_BYTES: Final = extensions.MAX_BODY_BYTES


def too_large_body(limit: int) -> bytes:
    """The JSON-RPC error answered (with HTTP 413) for a body over `limit` bytes."""
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": (
                    f"[payload_too_large] The request body is larger than this server's "
                    f"limit of {limit} bytes. Next: send fewer or smaller items per call "
                    f"(create_highlights_bulk takes at most {contract.MAX_BULK} highlights)."
                ),
                "data": {"code": "payload_too_large", "limit_bytes": limit},
            },
        }
    ).encode()


class RequestBodyLimit:
    """ASGI middleware: HTTP request bodies over `max_bytes` are answered 413 unread.

    A declared Content-Length over the bound is refused before a byte is read; a body sent
    without one (chunked) is counted as it arrives and refused as soon as it passes. A body
    within the bound is handed on unchanged.
    """

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_MCP_BODY_BYTES) -> None:
        if max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send)
            return
        if declared is not None or scope.get("method") in ("GET", "HEAD", "DELETE"):
            # A declared length within the bound is held to by the server (h11 and httptools
            # refuse a body longer than its Content-Length): nothing to count.
            await self.app(scope, receive, send)
            return
        # No declared length: read the body here, counting, then replay it to the app.
        messages: deque[Message] = deque()
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await self._refuse(send)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.popleft() if messages else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        body = too_large_body(self.max_bytes)
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers") or ():
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None
