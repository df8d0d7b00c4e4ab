"""stdio: answer a request the SDK cannot parse because a string in it holds a lone UTF-16
surrogate (`"\\ud800"`: valid JSON text, but no Unicode character).

The SDK's stdio reader hands such a line on as a parse exception, and the server drops it:
the agent gets no answer and waits until its own timeout. Python's own JSON reader accepts
the line, so the request's id is known and it gets a JSON-RPC error saying what to fix.
Every other message passes through untouched.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any, Self

import pydantic
from mcp import types
from mcp.shared.message import SessionMessage

SURROGATE_ADVICE = (
    "The request's JSON holds a lone UTF-16 surrogate escape (such as \\ud800), which is "
    "not a Unicode character; nothing was done. Send the text as valid UTF-8 (a character "
    "outside the BMP as its surrogate pair, or as itself) and call again."
)


def surrogate_answer(item: object) -> types.JSONRPCError | None:
    """The error for a request line the SDK refused for a lone surrogate (Python's JSON
    reader accepts it); None for anything else, which passes on as before."""
    if not isinstance(item, pydantic.ValidationError):
        return None
    errors = item.errors()
    if not errors or errors[0]["type"] != "json_invalid":
        return None
    try:
        request = json.loads(str(errors[0]["input"]))
    except ValueError:
        return None  # not JSON at all: no id to answer to
    request_id = request.get("id") if isinstance(request, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return None  # a notification (or no id at all): nothing to answer
    if not _holds_surrogate(request):
        return None
    error = types.ErrorData(code=types.INVALID_PARAMS, message=SURROGATE_ADVICE)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def _holds_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= char <= "\udfff" for char in value)
    if isinstance(value, dict):
        return any(_holds_surrogate(k) or _holds_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_surrogate(v) for v in value)
    return False


class SurrogateGuard:
    """The server's read stream, answering lone-surrogate requests on the write stream."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    def __getattr__(self, name: str) -> Any:  # `last_context` and the like: the inner's
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            answer = surrogate_answer(item)
            if answer is None:
                return item
            await self._write.send(SessionMessage(answer))

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()
