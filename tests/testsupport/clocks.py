"""A clock that moves only when a test moves it (`screvi_mcp.local.storage.clock.Clock`).

A lease or a retry delay then runs out at once, by `advance`, instead of by waiting it out in
wall time (slow, and a race on a busy machine). `sleep` returns once the clock has been moved
past its end, so a worker's timed step (a lease renewal) runs exactly when the test says.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

START = datetime(2026, 3, 2, 8, 30, tzinfo=UTC)


class ManualClock:
    def __init__(self, moment: datetime = START) -> None:
        self.moment = moment
        self._sleepers: list[tuple[datetime, asyncio.Future[None]]] = []

    def now(self) -> datetime:
        return self.moment

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.moment + timedelta(seconds=seconds), future))
        await future

    def advance(self, seconds: float) -> None:
        """Move the clock on, waking every sleep that has run out (on their event loop)."""
        self.moment += timedelta(seconds=seconds)
        waiting = []
        for end, future in self._sleepers:
            if future.done():
                continue  # cancelled
            if end <= self.moment:
                future.get_loop().call_soon_threadsafe(_wake, future)
            else:
                waiting.append((end, future))
        self._sleepers = waiting

    @property
    def sleeping(self) -> int:
        """How many sleeps wait for the clock to move."""
        return sum(not future.done() for _, future in self._sleepers)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
