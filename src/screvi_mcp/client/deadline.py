"""One overall deadline for everything a client call does on behalf of one tool call.

Retries, back-off sleeps, `Retry-After` waits and the rate limiter each have their own bound,
but together they could still hold a tool call for minutes (4 attempts x 30 s against a slow
API took 122 s). The MCP layer opens `call_deadline(seconds)` around a tool call; every
request the client makes inside it stops when the deadline passes, and fails as a timeout.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# The longest one tool call may spend in client requests (configurable: SCREVI_CALL_DEADLINE).
DEFAULT_CALL_DEADLINE = 45.0

_deadline: ContextVar[float | None] = ContextVar("screvi_call_deadline", default=None)


@contextmanager
def call_deadline(seconds: float | None) -> Iterator[None]:
    """Requests made inside end by `seconds` from now (an enclosing, earlier deadline wins)."""
    if seconds is None:
        yield
        return
    at = time.monotonic() + seconds
    current = _deadline.get()
    token = _deadline.set(at if current is None else min(at, current))
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining() -> float | None:
    """Seconds left before the current deadline (never negative); None when there is none."""
    at = _deadline.get()
    return None if at is None else max(0.0, at - time.monotonic())
