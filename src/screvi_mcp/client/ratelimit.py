"""Client-side rate limiting: keep every caller sharing a key under the API's rate.

The API allows 100 requests per minute per key (spec, section 8) and answers 429 beyond
that. Agents fan out tool calls concurrently, so without a limiter they would hit 429 on
their own traffic; with it, a 429 means some other program is using the same key.

The limiter is a sliding window over grant times: the n-th grant happens no earlier than the
(n - rate)-th grant plus the window, so no window-long interval ever holds more than `rate`
requests, whichever way the server aligns its own windows. A slot is reserved synchronously
(under a thread lock, never across an await) and then slept towards, so the limiter works for
any number of tasks, event loops or threads, and a cancelled waiter cannot deadlock others.

Two bounds keep one caller from holding up the rest:
- a wait cap: a caller whose slot is more than `max_wait` seconds away takes no slot and gets
  `RateLimitWaitTooLong` (the client's `[rate_limited]` with when to retry) instead of queueing
  for minutes;
- a fair share: grants are tagged with the caller's share key (the MCP server sets one per
  session, see `share_key`). Every key that asked within the last window (granted or not) is
  active, and each active key may hold at most `rate / active keys` grants of a window; one
  past it is refused at once. The share holds whether or not the window is full: greedy
  sessions that filled it while a polite one was between calls would otherwise leave the
  polite one nothing (it got 2 of 48 calls beside four greedy sessions), so each key's share
  is kept free for it. A single active key may use the whole rate.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import anyio

from screvi_mcp import contract

DEFAULT_RATE_PER_MINUTE = contract.RATE_LIMIT_PER_MINUTE
# The longest a call waits at the client's limiter before it is answered `rate_limited`.
DEFAULT_MAX_RATE_WAIT = 5.0

# Who a request is made for (an MCP session, a remote client); None: one anonymous caller.
_share_key: ContextVar[str | None] = ContextVar("screvi_rate_share_key", default=None)


@contextmanager
def share_key(key: str | None) -> Iterator[None]:
    """Count the requests made inside against `key`'s fair share of every limiter."""
    token = _share_key.set(key)
    try:
        yield
    finally:
        _share_key.reset(token)


class RateLimitWaitTooLong(Exception):
    """No slot within the wait cap (or over the caller's fair share); `retry_after` seconds."""

    def __init__(
        self,
        retry_after: float,
        *,
        over_share: bool = False,
        used: int = 0,
        share: int = 0,
        sessions: int = 1,
    ) -> None:
        super().__init__(f"next slot in {retry_after:.1f} s")
        self.retry_after = retry_after
        # True only when this caller itself holds its whole share: a refusal never blames
        # a caller for what others used.
        self.over_share = over_share
        self.used, self.share, self.sessions = used, share, sessions


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
        self._grants: deque[tuple[float, str | None]] = deque(maxlen=rate)
        # When each share key last asked: who is active, so whose share is kept free.
        self._asked: dict[str | None, float] = {}
        self._lock = threading.Lock()

    def reserve(self, max_wait: float | None = None) -> float:
        """Reserve the next free slot; returns how many seconds from now it starts.

        With `max_wait`, a slot further away than that is not taken: RateLimitWaitTooLong.
        """
        key = _share_key.get()
        with self._lock:
            now = self._clock()
            self._asked[key] = now
            slot = now
            if self._grants:
                slot = max(slot, self._grants[-1][0])
            if len(self._grants) == self.rate:
                slot = max(slot, self._grants[0][0] + self.window)
            delay = slot - now
            self._check_share(key, now, delay)
            if delay > 0 and max_wait is not None and delay > max_wait:
                raise RateLimitWaitTooLong(delay, sessions=len(self._active(now)))
            self._grants.append((slot, key))
            return delay

    def _active(self, now: float) -> set[str | None]:
        """Keys that asked within the last window (lock held); forgets older ones."""
        for key, at in list(self._asked.items()):
            if at <= now - self.window:
                del self._asked[key]
        return set(self._asked)

    def _check_share(self, key: str | None, now: float, delay: float) -> None:
        """Refuse a key that already holds its share of the window (lock held)."""
        active = self._active(now) | {key}
        if len(active) < 2:
            return
        share = max(1, math.floor(self.rate / len(active)))
        # Its own grants in the window, the ones reserved ahead of now included.
        mine = [at for at, holder in self._grants if holder == key and at > now - self.window]
        if len(mine) >= share:
            # Its own oldest grant in the window is the earliest it can count on a slot.
            raise RateLimitWaitTooLong(
                max(delay, min(mine) + self.window - now),
                over_share=True,
                used=len(mine),
                share=share,
                sessions=len(active),
            )

    async def acquire(self, max_wait: float | None = None) -> None:
        """Wait for a slot. A caller cancelled while waiting leaves its slot unused."""
        delay = self.reserve(max_wait)
        if delay > 0:
            await self._sleep(delay)


class Limiters:
    """One limiter per key and rate, each shared by every client that asks for it.

    Held weakly: a limiter lives as long as some client uses it, so short-lived keys do not
    pile up. Keyed by a hash of the key, so that the key itself is not kept in another place.
    """

    def __init__(self) -> None:
        self._held: weakref.WeakValueDictionary[tuple[str, str, int, float], RateLimiter] = (
            weakref.WeakValueDictionary()
        )
        self._lock = threading.Lock()

    def get(self, api_key: str | None, rate: int, window: float, api: str = "") -> RateLimiter:
        fingerprint = hashlib.sha256((api_key or "").encode("utf-8")).hexdigest()
        key = (fingerprint, api, rate, window)
        with self._lock:
            limiter = self._held.get(key)
            if limiter is None:
                limiter = self._held[key] = RateLimiter(rate, window)
            return limiter


_shared = Limiters()


def shared_limiter(api_key: str | None, base_url: str, rate: int, window: float) -> RateLimiter:
    """The limiter every client of this process uses for one key on one API."""
    return _shared.get(api_key, rate, window, api=base_url.rstrip("/"))


def limiter_for(
    transport: object, api_key: str | None, base_url: str, rate: int, window: float
) -> RateLimiter:
    """The limiter of `api_key` on the API behind `transport`.

    An API known by its URL has one limiter per key in the process. A transport that is an
    API of its own behind a URL others share (every embedded library answers at one
    pseudo-URL, and a copied library keeps its keys) offers `rate_limiter(api_key, rate,
    window)` with limiters of its own, so that copies never use up each other's limits.
    """
    own = getattr(transport, "rate_limiter", None)
    if callable(own):
        limiter: RateLimiter = own(api_key, rate, window)
        return limiter
    return shared_limiter(api_key, base_url, rate, window)
