"""Timestamps as the library stores and serves them.

One fixed-width UTC format (microseconds, `Z`) so that stored values sort and compare as text,
which is what `updated_since` filters and "most recent first" orderings rely on.
"""

from __future__ import annotations

from datetime import UTC, datetime

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def now() -> str:
    return format_timestamp(datetime.now(UTC))


def format_timestamp(moment: datetime) -> str:
    """Render an aware (or naive, taken as UTC) datetime in the stored format."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(_FORMAT)


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
    return moment.astimezone(UTC)


def normalise_timestamp(text: str) -> str:
    """Any accepted ISO 8601 text in the stored format (ValueError when not a date-time)."""
    return format_timestamp(parse_timestamp(text))
