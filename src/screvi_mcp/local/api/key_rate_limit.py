"""Per-key request rate limit: a sliding window of the last minute's requests.

In memory, per process: the embedded library serves one user, so one process's view is the
whole view.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass

WINDOW_SECONDS = 60.0


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    limit: int
    remaining: int
    reset_at: float  # epoch seconds when the oldest counted request leaves the window
    retry_after: int  # seconds to wait before the next request can pass (0 when allowed)

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(math.ceil(self.reset_at)),
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class KeyRateLimiter:
    def __init__(self, per_minute: int, window_seconds: float = WINDOW_SECONDS) -> None:
        self.per_minute = per_minute
        self.window = window_seconds
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def check(self, key_id: str) -> Verdict:
        """Count one request for `key_id` if it fits in the window."""
        now = time.monotonic()
        wall = time.time()
        with self._lock:
            hits = self._hits.setdefault(key_id, deque())
            while hits and hits[0] <= now - self.window:
                hits.popleft()
            if len(hits) < self.per_minute:
                hits.append(now)
                allowed = True
            else:
                allowed = False
            oldest = hits[0] if hits else now
            wait = max(0.0, oldest + self.window - now)
            return Verdict(
                allowed=allowed,
                limit=self.per_minute,
                remaining=max(0, self.per_minute - len(hits)),
                reset_at=wall + wait,
                retry_after=0 if allowed else max(1, math.ceil(wait)),
            )
