"""Client-side rate limiting: keep every caller sharing a key under the API's rate.

The API allows 100 requests per minute per key (spec, section 8) and answers 429 beyond
that. Agents fan out tool calls concurrently, so without a limiter they would hit 429 on
their own traffic; with it, a 429 means some other program is using the same key.

The limiter is a sliding window over grant times: the n-th grant happens no earlier than the
(n - rate)-th grant plus the window, so no window-long interval ever holds more than `rate`
requests, whichever way the server aligns its own windows. A slot is reserved synchronously
(under a thread lock, never across an await) and then slept towards, so the limiter works for
any number of tasks, event loops or threads, and a cancelled waiter cannot deadlock others.
"""

from __future__ import annotations

import hashlib
import threading
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable

import anyio

DEFAULT_RATE_PER_MINUTE = 100


class RateLimiter:
    """At most `rate` grants in any `window` seconds."""

    def __init__(
        self,
        rate: int = DEFAULT_RATE_PER_MINUTE,
        window: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        if rate < 1:
            raise ValueError("rate must be at least 1")
        if window <= 0:
            raise ValueError("window must be positive")
        self.rate = rate
        self.window = window
        self._clock = clock
        self._sleep = sleep
        self._grants: deque[float] = deque(maxlen=rate)
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Reserve the next free slot; returns how many seconds from now it starts."""
        with self._lock:
            now = self._clock()
            slot = now
            if self._grants:
                slot = max(slot, self._grants[-1])
            if len(self._grants) == self.rate:
                slot = max(slot, self._grants[0] + self.window)
            self._grants.append(slot)
            return slot - now

    async def acquire(self) -> None:
        """Wait for a slot. A caller cancelled while waiting leaves its slot unused."""
        delay = self.reserve()
        if delay > 0:
            await self._sleep(delay)


# Weak: a limiter lives as long as some client uses it, so short-lived keys do not pile up.
_shared: weakref.WeakValueDictionary[tuple[str, str, int, float], RateLimiter] = (
    weakref.WeakValueDictionary()
)
_shared_lock = threading.Lock()


def shared_limiter(api_key: str | None, base_url: str, rate: int, window: float) -> RateLimiter:
    """The limiter every client of this process uses for one key on one API.

    Keyed by a hash of the key, so that the key itself is not kept in another place.
    """
    fingerprint = hashlib.sha256((api_key or "").encode("utf-8")).hexdigest()
    key = (fingerprint, base_url.rstrip("/"), rate, window)
    with _shared_lock:
        limiter = _shared.get(key)
        if limiter is None:
            limiter = _shared[key] = RateLimiter(rate, window)
        return limiter
