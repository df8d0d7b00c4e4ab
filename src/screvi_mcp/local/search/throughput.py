"""How fast a worker embeds: highlights per second of work over its recent rounds (the
search backlog's lag estimate, backlog.py). No imports of the search package: the worker and
the backlog both use it."""

from __future__ import annotations

import threading
import time
from collections import deque

# Rounds of the worker that count towards its rate: the last minute's.
RATE_WINDOW_SECONDS = 60.0


class Throughput:
    """Highlights embedded per second of work, over the worker's rounds of the last minute."""

    def __init__(self, clock: object = time.monotonic) -> None:
        self._clock = clock
        self._rounds: deque[tuple[float, int, float]] = deque()
        self._lock = threading.Lock()

    def note(self, embedded: int, seconds: float) -> None:
        now = self._clock()  # type: ignore[operator]
        with self._lock:
            self._rounds.append((now, embedded, seconds))
            while self._rounds and self._rounds[0][0] < now - RATE_WINDOW_SECONDS:
                self._rounds.popleft()

    def per_second(self) -> float | None:
        with self._lock:
            done = sum(count for _, count, _ in self._rounds)
            busy = sum(seconds for _, _, seconds in self._rounds)
        return done / busy if done and busy > 0 else None
