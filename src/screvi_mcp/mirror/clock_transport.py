"""An httpx transport that notes the server's clock and counts what was sent.

The sync cursor must be a time on the *server's* clock (a laptop's clock may be minutes
off), and the spec gives no endpoint for it: the standard `Date` response header does. The
transport also counts requests and 429 answers for the progress lines and the summary, notes
whether the server could be reached at all, and drops list items the sync may not store
(`boundary.py`), counting them by list.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from screvi_mcp.mirror.boundary import screened


class ClockTransport(httpx.AsyncBaseTransport):
    """Wraps another transport; records the first and latest server `Date` it saw."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx.AsyncHTTPTransport()
        self.requests = 0
        self.rate_limited = 0
        self.first_server_time: datetime | None = None
        self.latest_server_time: datetime | None = None
        self.skipped: dict[str, int] = {}
        # Why the latest request got no answer at all (refused, timed out...), until one
        # does: what a mirror tells an agent while a refresh keeps retrying.
        self.unreachable: str | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        try:
            response = await self._inner.handle_async_request(request)
        except httpx.TransportError as error:
            self.unreachable = str(error) or type(error).__name__
            raise
        self.unreachable = None
        if response.status_code == 429:
            self.rate_limited += 1
        moment = _parse_date(response.headers.get("date"))
        if moment is not None:
            if self.first_server_time is None:
                self.first_server_time = moment
            self.latest_server_time = moment
        response, kind, dropped = await screened(request, response)
        if dropped:
            self.skipped[kind] = self.skipped.get(kind, 0) + dropped
        return response

    def reset_first(self) -> None:
        """Forget the first time seen, so the next response starts a new run's clock."""
        self.first_server_time = None

    async def aclose(self) -> None:
        await self._inner.aclose()


def _parse_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
