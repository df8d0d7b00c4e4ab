"""Requests answered in the same process, without building HTTP messages.

A transport may offer `handle_in_process`: given a request in parts (method, URL, query
string, headers, body) it answers with (status, headers, body), or None for "send it as
HTTP". The client then skips httpx's request and response machinery, which costs more than
an in-process backend's own work; the answer is read as an ordinary `httpx.Response`, so
everything after (errors, retries, parsing) is the same code. The client only knows this
method, never which backend offers it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol
from urllib.parse import urlencode

import httpx

# (status, raw headers, body); None: not answered here, send the request as HTTP instead.
InProcessAnswer = tuple[int, list[tuple[bytes, bytes]], bytes] | None


class AnswersInProcess(Protocol):
    def __call__(
        self, method: str, url: str, query: str, pairs: list[tuple[str, str]], body: bytes
    ) -> Awaitable[InProcessAnswer]: ...


def in_process_handler(transport: httpx.AsyncBaseTransport | None) -> AnswersInProcess | None:
    """The transport's `handle_in_process`, if it has one."""
    handler: AnswersInProcess | None = getattr(transport, "handle_in_process", None)
    return handler if callable(handler) else None


def json_body(value: Any) -> bytes:
    """A JSON request body exactly as httpx's `json=` encodes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
        "utf-8"
    )


def query_string(params: Mapping[str, str] | None) -> str:
    """The query string httpx sends for `params=` (urlencode, no leading `?`)."""
    return urlencode(list(params.items())) if params else ""


class InProcessResponse(httpx.Response):
    """An answer given in process. Its `request` is built only if something asks for it
    (error messages do): parsing a URL per call would cost what skipping httpx saves."""

    def __init__(
        self,
        answer: tuple[int, list[tuple[bytes, bytes]], bytes],
        method: str,
        url: str,
    ) -> None:
        status, headers, content = answer
        # Given as a stream and marked read, the body skips httpx's decoder pipeline: it
        # arrives whole and unencoded, as the app rendered it.
        super().__init__(status, headers=headers, stream=httpx.ByteStream(content))
        self._content = content
        self.is_stream_consumed = True
        self._method = method
        self._url = url

    @property
    def request(self) -> httpx.Request:
        if self._request is None:
            self._request = httpx.Request(self._method, self._url)
        return self._request

    @request.setter
    def request(self, value: httpx.Request) -> None:
        self._request = value


class Borrowed(httpx.AsyncBaseTransport):
    """Another client's transport, used but not owned: closing it leaves the owner's open."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport
        # The owner's own limiters, if its API keeps them (ratelimit.limiter_for): a
        # borrower's key is limited on the same API as the owner's.
        own = getattr(transport, "rate_limiter", None)
        if callable(own):
            self.rate_limiter = own

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._transport.handle_async_request(request)

    async def handle_in_process(
        self, method: str, url: str, query: str, pairs: list[tuple[str, str]], body: bytes
    ) -> InProcessAnswer:
        handler = in_process_handler(self._transport)
        return None if handler is None else await handler(method, url, query, pairs, body)

    async def aclose(self) -> None:
        pass
