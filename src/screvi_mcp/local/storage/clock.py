"""Timestamps as the library stores and serves them.

One fixed-width UTC format (four-digit zero-padded year, microseconds, `Z`), so that stored
values sort and compare as text, which is what `updated_since` filters and "most recent first"
orderings rely on: `0500-01-01T00:00:00.000000Z`. The year is padded by hand because
`strftime("%Y")` does not pad years before 1000 on glibc (`500-01-01...`, not a valid
date-time, and sorting after `1999-...`). Dates outside years 1-9999 in UTC are refused
(ValueError), which callers turn into a 422 naming the field.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


def now() -> str:
    return format_timestamp(datetime.now(UTC))


class Clock(Protocol):
    """The time a background worker reads and waits on; tests pass one that moves only
    when they move it (tests/testsupport/clocks.py), so a lease runs out without the wait."""

    def now(self) -> datetime: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        import asyncio  # here: the CLI reads timestamps without loading asyncio

        await asyncio.sleep(seconds)


SYSTEM_CLOCK = SystemClock()


def format_timestamp(moment: datetime) -> str:
    """Render an aware (or naive, taken as UTC) datetime in the stored format."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:  # year 1 or 9999 pushed out of range by its offset
        raise ValueError("outside the years 1 to 9999 in UTC") from None
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T"
        f"{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}.{utc.microsecond:06d}Z"
    )


def parse_timestamp(text: str) -> datetime:
    """Parse an ISO 8601 date-time or date; naive values are taken as UTC.

    Raises ValueError for anything else.
    """
    value = text.strip()
    if not value:
        raise ValueError("empty date-time")
    if value.endswith(("z", "Z")):
        value = value[:-1] + "+00:00"
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("outside the years 1 to 9999 in UTC") from None


def normalise_timestamp(text: str) -> str:
    """Any accepted ISO 8601 text in the stored format (ValueError when not a date-time)."""
    return format_timestamp(parse_timestamp(text))
