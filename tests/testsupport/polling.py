"""Waiting in tests: poll a condition until it holds, within a bound.

A test never sleeps a fixed time for something to happen (on a busy machine that is a
race); it waits for something it can observe, polled, and fails saying what never came once
the bound has passed. A condition may raise: an exception in `transient` (a port not yet
listening) counts as "not yet", any other one ends the wait (a process that died early).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
Message = str | Callable[[], str]


def wait_until(
    condition: Callable[[], T],
    *,
    timeout: float,
    what: Message,
    every: float = 0.05,
    transient: tuple[type[BaseException], ...] = (),
) -> T:
    """The condition's first truthy value; AssertionError naming `what` past `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = condition()
        except transient:
            result = None  # type: ignore[assignment]
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{_said(what)}: not within {timeout:g} s")
        time.sleep(every)


async def async_wait_until(
    condition: Callable[[], Awaitable[T]] | Callable[[], T],
    *,
    timeout: float,
    what: Message,
    every: float = 0.05,
) -> T:
    """As `wait_until`, on the event loop; `condition` may be a coroutine function."""
    import inspect

    import anyio

    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(f"{_said(what)}: not within {timeout:g} s")
        await anyio.sleep(every)


def _said(what: Message) -> str:
    return what() if callable(what) else what
