"""What the review tests share: an injected clock, seeded libraries, a library served over
HTTP as the hosted stand-in, and FSRS's own computation of a schedule to compare with.

(A module of its own rather than `conftest`: several test folders have a conftest.py.)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import fsrs
from mcp import Client
from mcp.types import TextContent

from screvi_mcp.client import ScreviClient
from screvi_mcp.embedded import embedded_client
from screvi_mcp.local.api import keys
from screvi_mcp.local.api.app import RATE_LIMIT_SETTING, create_app
from screvi_mcp.local.storage.library import Library
from screvi_mcp.mirror.sync import SyncSettings, build_client, run_sync
from screvi_mcp.review.daily import ReviewPlace, Settings
from screvi_mcp.review.state import ReviewState
from screvi_mcp.server.app import build_server
from screvi_mcp.server.backend import Backend, BackendConfig
from testsupport.servers import asgi_server

# Far above the API's 100 a minute: a simulated month of reviews takes seconds.
SERVER_RATE = 100_000
START = datetime(2026, 3, 2, 8, 30, tzinfo=UTC)
IDS = re.compile(r"highlight_id (\S+)")


class Clock:
    """The review's clock: it moves only when a test moves it."""

    def __init__(self, moment: datetime = START) -> None:
        self.moment = moment

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, days: float = 1) -> None:
        self.moment += timedelta(days=days)


def settings(clock: Clock, size: int = 10, new: int = 10) -> Settings:
    return Settings(size=size, new_per_day=new, tz=UTC, now=clock)


async def seed(
    client: ScreviClient, *, sources: int = 4, per_source: int = 5, favourite: int | None = None
) -> dict[str, list[str]]:
    """`sources` books of `per_source` highlights each (the `favourite`-th of each a
    favourite); returns the highlight ids by source id."""
    by_source: dict[str, list[str]] = {}
    for s in range(sources):
        book = await client.create_source(f"Book {s}", "book", author=f"Author {s}")
        made = await client.create_highlights_bulk(
            [
                {
                    "content": f"Idea {n} of book {s}.",
                    "source_id": book.id,
                    "favorite": n == favourite,
                }
                for n in range(per_source)
            ]
        )
        by_source[book.id] = [h.id for h in made]
    return by_source


@contextlib.asynccontextmanager
async def library_client(path: Path) -> AsyncIterator[ScreviClient]:
    client = await embedded_client(path, rate_limit=None, server_rate_limit_per_minute=SERVER_RATE)
    async with client:
        yield client


@dataclass(frozen=True)
class Served:
    base_url: str
    key: str


@contextlib.contextmanager
def serve_library(path: Path) -> Iterator[Served]:
    """A second embedded library over HTTP on 127.0.0.1: the stand-in for hosted Screvi."""
    library = Library.open(path)
    try:
        _, secret = keys.create_key(library, "review tests", write=True)
    finally:
        library.close()
    with asgi_server(create_app(path, rate_limit_per_minute=SERVER_RATE)) as root:
        yield Served(f"{root}/api/v1", secret)


def cards(place: ReviewPlace, ids: list[str]) -> dict[str, fsrs.Card]:
    with ReviewState.open(place.path, place.account, library=place.library) as state:
        return {key: info.card for key, info in state.cards(ids).items()}


def day_ids(place: ReviewPlace, day: str) -> list[str]:
    with ReviewState.open(place.path, place.account, library=place.library) as state:
        return [item.highlight_id for item in state.day(day)]


def fsrs_card(answers: list[tuple[datetime, str]]) -> fsrs.Card:
    """The card FSRS computes for these answers, with a scheduler of its own set up as the
    review documents (no learning steps, no fuzz)."""
    scheduler = fsrs.Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    ratings = {"again": 1, "hard": 2, "good": 3, "easy": 4}
    card = fsrs.Card(card_id=1, due=answers[0][0])
    for moment, answer in answers:
        card, _ = scheduler.review_card(card, fsrs.Rating(ratings[answer]), moment)
    return card


def same_schedule(ours: fsrs.Card, theirs: fsrs.Card) -> bool:
    return (
        ours.due == theirs.due
        and ours.state == theirs.state
        and ours.last_review == theirs.last_review
        and abs((ours.stability or 0) - (theirs.stability or 0)) < 1e-9
        and abs((ours.difficulty or 0) - (theirs.difficulty or 0)) < 1e-9
    )


# Backends, each as the MCP server and `screvi-mcp review` would be configured ------------


@contextlib.asynccontextmanager
async def mcp_client(config: BackendConfig) -> AsyncIterator[Client]:
    """The SDK's in-process client of a server over `config`."""
    backend = Backend(config)
    server = build_server(backend)
    try:
        await backend.shared_client()  # opened and closed by this task
        async with Client(server, cache=None) as client:  # type: ignore[arg-type]
            yield client
    finally:
        await backend.aclose()


async def call_ok(client: Client, name: str, arguments: dict[str, Any] | None = None) -> str:
    result = await client.call_tool(name, arguments or {})
    text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
    assert not result.is_error, f"{name} failed: {text}"
    return text


def allow_fast_requests(path: Path) -> None:
    """Lift an embedded library's own rate limit (100 a minute) for a simulated week."""
    library = Library.open(path)
    try:
        library.set_setting(RATE_LIMIT_SETTING, str(SERVER_RATE))
    finally:
        library.close()


async def sync_mirror(served: Served, mirror: Path) -> None:
    sync_settings = SyncSettings(requests_per_minute=SERVER_RATE)
    client, clock_transport = build_client(served.key, served.base_url, sync_settings)
    library = Library.open(mirror)
    try:
        async with client:
            await run_sync(
                library, client, clock_transport, api_key=served.key, settings=sync_settings
            )
    finally:
        library.close()


def hosted_client(served: Served) -> ScreviClient:
    return ScreviClient.hosted(served.key, base_url=served.base_url, rate_limit=None)
