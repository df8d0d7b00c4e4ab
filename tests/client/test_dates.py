"""Dates across the whole range the API can represent (year 1 to 9999), end to end.

Timestamps are stored as text and compared as text, so every one the library writes must be
in one zero-padded, fixed-width form: `0500-01-01T00:00:00.000000Z`, never `500-01-01...`.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from client_testkit import ClientFactory

from screvi_mcp.client import ValidationFailedError

DATES = [
    "0001-01-01T00:00:00Z",
    "0009-02-03T04:05:06Z",
    "0099-12-31T23:59:59Z",
    "0500-01-01T00:00:00Z",
    "0999-06-15T12:00:00Z",
    "1000-01-01T00:00:00Z",
    "1969-07-20T20:17:40Z",
    "2024-05-01T12:00:00Z",
    "9999-12-31T23:59:59Z",
]


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_dates_from_year_1_to_9999_round_trip(connect: ClientFactory) -> None:
    async with connect() as client:
        made = {}
        for text in DATES:
            highlight = await client.create_highlight(f"ancient wisdom from {text}", date=text)
            assert highlight.date == moment(text), text
            made[highlight.id] = text
        bulk = await client.create_highlights_bulk(
            [{"content": f"bulk wisdom {text}", "date": text} for text in DATES]
        )
        assert [h.date for h in bulk] == [moment(text) for text in DATES]
        for highlight_id, text in made.items():
            assert (await client.get_highlight(highlight_id)).date == moment(text)
        listed = await client.list_highlights(per_page=100)
        assert {h.id for h in listed.data} >= set(made)
        found = await client.search("ancient wisdom", min_relevance=0, per_page=50)
        assert {h.id for h in found.data} >= set(made)

        # `updated_since` compares timestamps: an early year must not sort after a late one.
        for since in ("0001-01-01T00:00:00Z", "0500-01-01T00:00:00Z", "0999-12-31T00:00:00Z"):
            page = await client.list_highlights(updated_since=since, per_page=100)
            assert page.pagination.total == 2 * len(DATES), since
        future = await client.list_highlights(updated_since="9999-01-01T00:00:00Z")
        assert future.pagination.total == 0
        early = datetime(1, 1, 1, tzinfo=UTC)
        assert (await client.list_sources(updated_since=early)).pagination is not None
        assert (await client.list_articles(updated_since=early)).pagination.total == 0


@pytest.mark.parametrize(
    "date",
    [
        "0000-01-01T00:00:00Z",
        "10000-01-01T00:00:00Z",
        "-0001-01-01T00:00:00Z",
        "0001-01-01T00:00:00+01:00",  # before year 1 once in UTC
        "9999-12-31T23:59:59-01:00",  # after year 9999 once in UTC
    ],
)
async def test_a_date_the_api_cannot_represent_is_a_422_naming_the_field(
    connect: ClientFactory, date: str
) -> None:
    async with connect() as client:
        with pytest.raises(ValidationFailedError) as raised:
            await client.create_highlight("out of range", date=date)
        assert "date" in (raised.value.fields or {}), raised.value
        assert (await client.list_highlights()).pagination.total == 0
