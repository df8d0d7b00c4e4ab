"""How far search by meaning lags behind writes: the embedding queue and its drain rate.

Writes are acknowledged at commit and embedded afterwards (about 590 acknowledged a second
against 100 embedded under sustained bulk writes): a highlight written a minute ago may not
be findable by meaning yet. `embedding_backlog` says how many wait and, from the rate this
process's worker has embedded at recently, about how long until they are all searchable. The
search route puts it in a header when it matters (`SEARCH_NOTE_MIN_PENDING` or more), and a
`check` command can print it.
"""

from __future__ import annotations

from dataclasses import dataclass

from screvi_mcp.local.search import interim, registry
from screvi_mcp.local.search.embedding_queue import pending as queued
from screvi_mcp.local.search.throughput import RATE_WINDOW_SECONDS as RATE_WINDOW_SECONDS
from screvi_mcp.local.search.throughput import Throughput
from screvi_mcp.local.storage.library import Library

# From this many waiting highlights, search results say that meaning lags behind.
SEARCH_NOTE_MIN_PENDING = 50


@dataclass(frozen=True)
class Backlog:
    """Highlights not yet findable by meaning, and the recent rate (None: not measured here
    yet). With a fast model first (interim.py), `full_pending` counts those still waiting
    for the English model's vector (findable meanwhile through the fast model's)."""

    pending: int
    per_second: float | None
    full_pending: int | None = None

    @property
    def lag_seconds(self) -> float | None:
        """About how long until every waiting highlight is searchable by meaning."""
        if not self.pending:
            return 0.0
        return None if not self.per_second else self.pending / self.per_second

    def header(self) -> str:
        lag = self.lag_seconds
        text = f"pending={self.pending}" + ("" if lag is None else f"; lag={lag:.0f}")
        return text + ("" if self.full_pending is None else f"; full_pending={self.full_pending}")

    @property
    def worth_saying(self) -> bool:
        """Whether search results should carry the header."""
        waiting = max(self.pending, self.full_pending or 0)
        return waiting >= SEARCH_NOTE_MIN_PENDING


def embedding_backlog(library: Library) -> Backlog:
    """The backlog of the library's English queue, which search by meaning needs, or with a
    fast model first, what neither model has embedded yet and what the English one has not."""
    conn = library.connection()
    fast = interim.index_for(library)
    if fast is None:
        return Backlog(pending=queued(conn), per_second=_rate(registry.semantic_index_for(library)))
    unfindable = conn.execute(
        "SELECT count(*) FROM embedding_queue q WHERE NOT EXISTS"
        f" (SELECT 1 FROM {fast.tables.vectors} f WHERE f.seq = q.seq)"
    ).fetchone()[0]
    return Backlog(int(unfindable), _rate(fast), full_pending=queued(conn))


def _rate(index: object) -> float | None:
    throughput = getattr(getattr(index, "worker", None), "throughput", None)
    return throughput.per_second() if isinstance(throughput, Throughput) else None
