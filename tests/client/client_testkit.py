"""Helpers of the client tests: a scriptable HTTP transport and canned replies.

A module with a name of its own (not `conftest`) so test modules can import it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import httpx

from screvi_mcp.client import ScreviClient

SCOPED_KEY = "sk_live_TESTSECRETabcdefghijklmnopqrstuvwxyz0123"
LEGACY_KEY = "0123456789abcdefLEGACYSECRET0123456789abcdef"
BASE_URL = "http://127.0.0.1:9/api/v1"  # never dialled: these clients use MockTransport


@dataclass
class Sent:
    method: str
    path: str
    raw_path: str
    params: dict[str, str]
    headers: httpx.Headers
    body: Any
    at: float


Reply = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


@dataclass
class FaultServer:
    """A transport that answers with a script of replies and records every request it got.

    Each reply is a response, an exception to raise (a timeout, a reset), or a function of
    the request. The last reply repeats once the script runs out.
    """

    replies: list[Reply] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        raw = request.content
        self.sent.append(
            Sent(
                method=request.method,
                path=request.url.path,
                raw_path=request.url.raw_path.decode("ascii"),
                params=dict(request.url.params),
                headers=request.headers,
                body=json.loads(raw) if raw else None,
                at=time.monotonic(),
            )
        )
        index = min(len(self.sent), len(self.replies)) - 1
        reply = self.replies[index]
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, httpx.Response):
            return reply
        return reply(request)

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def count(self, method: str | None = None) -> int:
        return sum(1 for s in self.sent if method is None or s.method == method)


def json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=payload, headers=headers)


def error_reply(
    status: int,
    code: str,
    message: str = "nope",
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> httpx.Response:
    return httpx.Response(status, json={"error": message, "code": code, **extra}, headers=headers)


HIGHLIGHT = {
    "id": "11111111-1111-4111-8111-111111111111",
    "content": "The map is not the territory.",
    "note": None,
    "favorite": False,
    "url": None,
    "location": None,
    "date": None,
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
    "tags": [],
    "source": {"id": "22222222-2222-4222-8222-222222222222", "name": "Notes", "type": "self"},
}


@dataclass
class Sleeps:
    """Stands in for the retry sleep: records each wait instead of waiting."""

    waits: list[float] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


MockClientFactory = Callable[..., ScreviClient]


@dataclass(frozen=True)
class Keys:
    """Keys made in the test library: scoped read-write, scoped read-only, legacy."""

    write: str
    read: str
    legacy: str


# `connect(api_key=..., server_rate_limit=..., **client_options)` -> async context manager
ClientFactory = Callable[..., AbstractAsyncContextManager[ScreviClient]]
