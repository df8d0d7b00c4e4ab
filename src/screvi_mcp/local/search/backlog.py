"""How far search by meaning lags behind writes: the embedding queue and its drain rate.

Writes are acknowledged at commit and embedded afterwards (about 590 acknowledged a second
against 100 embedded under sustained bulk writes): a highlight written a minute ago may not
be findable by meaning yet. `embedding_backlog` says how many wait and, from the rate this
process's worker has embedded at recently, about how long until they are all searchable. The
search route puts it in a header when it matters (`SEARCH_NOTE_MIN_PENDING` or more), and a
`check` command can print it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

from screvi_mcp.local.search import registry
from screvi_mcp.local.search.embedding_queue import pending as queued
from screvi_mcp.local.storage.library import Library

# Rounds of the worker that count towards its rate: the last minute's.
RATE_WINDOW_SECONDS = 60.0
# From this many waiting highlights, search results say that meaning lags behind.
SEARCH_NOTE_MIN_PENDING = 50


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


@dataclass(frozen=True)
class Backlog:
    """Highlights waiting for a vector, and the recent rate (None: not measured here yet)."""

    pending: int
    per_second: float | None

    @property
    def lag_seconds(self) -> float | None:
        """About how long until every waiting highlight is searchable by meaning."""
        if not self.pending:
            return 0.0
        return None if not self.per_second else self.pending / self.per_second

    def header(self) -> str:
        lag = self.lag_seconds
        return f"pending={self.pending}" + ("" if lag is None else f"; lag={lag:.0f}")


def embedding_backlog(library: Library) -> Backlog:
    """The backlog of the library's English (MiniLM) queue, which search by meaning needs."""
    index = registry.semantic_index_for(library)
    worker = getattr(index, "worker", None)
    throughput = getattr(worker, "throughput", None)
    rate = throughput.per_second() if isinstance(throughput, Throughput) else None
    return Backlog(pending=queued(library.connection()), per_second=rate)
