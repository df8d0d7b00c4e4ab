"""A stand-in for hosted Screvi, and ways to compare a mirror with it.

The stand-in is a second embedded library served by uvicorn on 127.0.0.1 (a real server
with real rate limits, 429s and `Date` headers); the test changes it through its HTTP API
with a `ScreviClient`, as a Screvi user's other apps would. Articles, whose bodies the
stand-in would otherwise fetch from the web, are written into its file before it starts.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from screvi_mcp import contract
from screvi_mcp.client.client import ScreviClient
from screvi_mcp.local.api.app import create_app
from screvi_mcp.local.api.key_rate_limit import KeyRateLimiter
from screvi_mcp.local.api.seam import EmbeddedLibrary
from screvi_mcp.local.fetching import article_rows as fetching_store
from screvi_mcp.local.fetching.extract import ExtractedArticle
from screvi_mcp.local.fetching.urls import normalise_url
from screvi_mcp.local.storage.library import Library
from screvi_mcp.mirror.sync import SyncSettings, SyncSummary, build_client, run_sync
from testsupport.keys import new_key
from testsupport.servers import asgi_server

# A fast test budget: far above the hosted one, so tests take seconds.
FAST = SyncSettings(requests_per_minute=100_000, per_page=4, body_chunk_chars=1000)

LONG_BODY = " ".join(
    f"Paragraph {n} of a long essay about tide pools and moon phases." for n in range(80)
)


@dataclass
class StandIn:
    """The running stand-in: its file, its API address and a read-write key."""

    path: Path
    base_url: str
    key: str
    app: Any

    def client(self, **options: Any) -> ScreviClient:
        options.setdefault("rate_limit", None)
        return ScreviClient.hosted(self.key, base_url=self.base_url, **options)

    def throttle(self, per_window: int, window_seconds: float) -> None:
        """Give the running server a tighter rate limit (same code path as its own)."""
        self.app.state.rate_limiter = KeyRateLimiter(per_window, window_seconds=window_seconds)


def add_article(
    path: Path, url: str, *, title: str, body: str | None, tags: list[str] | None = None
) -> str:
    """A saved article with a parsed body, written into a library that is not served yet."""
    library = Library.open(path)
    try:
        with library.write() as conn:
            article_id = fetching_store.insert_article(conn, url, normalise_url(url))
            if body is not None:
                store_parsed(
                    conn,
                    article_id,
                    url,
                    ExtractedArticle(
                        content_html=f"<article><p>{body}</p></article>",
                        content_text=body,
                        title=title,
                        author="A. Writer",
                        word_count=len(body.split()),
                        reading_time_minutes=max(1, len(body.split()) // 200),
                    ),
                )
            from screvi_mcp.local.storage.store import tags as tag_store

            if tags:
                ids = tag_store.resolve(conn, tags)
                conn.executemany(
                    "INSERT INTO source_tags(source_id, tag_id) VALUES (?, ?)",
                    [(article_id, tag_id) for tag_id in ids],
                )
        return article_id
    finally:
        library.close()


def store_parsed(conn: Any, article_id: str, url: str, article: ExtractedArticle) -> None:
    """Write a parsed body into a stand-in's article, as its own fetcher would (which first
    claims the row: `fetching`, with an owner)."""
    conn.execute(
        "UPDATE articles SET parse_state = 'fetching', claim_owner = 'test' WHERE source_id = ?",
        (article_id,),
    )
    claim = fetching_store.Claim(article_id, url, 1, "test")
    fetching_store.store_parsed(conn, claim, article, final_url=url)


@contextlib.contextmanager
def serve_stand_in(path: Path, wrap: Callable[[Any], Any] | None = None) -> Iterator[StandIn]:
    """The stand-in served on 127.0.0.1; `wrap`, when given, puts an ASGI app in front of it
    (a test's fault at the server side)."""
    secret = new_key(path, "sync")
    app = create_app(path, rate_limit_per_minute=100_000)
    with asgi_server(wrap(app) if wrap else app) as url:
        yield StandIn(path, url + "/api/v1", secret, app)


async def seed(client: ScreviClient) -> dict[str, str]:
    """A small library with every kind of item; returns some ids by role."""
    book = await client.create_source("The Sea Around Us", "book", author="Rachel Carson")
    notes = await client.create_source("Loose notes", "custom")
    empty = await client.create_source("An empty shelf", "podcast", note="nothing yet")
    tide = await client.create_highlight(
        "The tides pull the oceans twice a day, following the moon.",
        source_id=book.id,
        tags=["ocean", "Moon"],
        note="look up spring tides",
        location=12,
        metadata={"chapter": 3},
    )
    await client.create_highlight(
        "Plankton blooms colour the spring sea green.", source_id=book.id, tags=["ocean"]
    )
    await client.create_highlights_bulk(
        [
            {"content": f"Note {n}: compound interest rewards patience.", "source_id": notes.id}
            for n in range(6)
        ]
    )
    lone = await client.create_highlight("A standalone thought about gardens.", favorite=True)
    return {"book": book.id, "notes": notes.id, "empty": empty.id, "tide": tide.id, "lone": lone.id}


async def sync(stand_in: StandIn, mirror: Path, settings: SyncSettings = FAST) -> SyncSummary:
    client, clock = build_client(stand_in.key, stand_in.base_url, settings)
    library = Library.open(mirror)
    try:
        async with client:
            return await run_sync(library, client, clock, api_key=stand_in.key, settings=settings)
    finally:
        library.close()


@contextlib.asynccontextmanager
async def embedded_client(path: Path) -> AsyncIterator[ScreviClient]:
    """A client of a library file served in-process (the mirror, or any embedded library)."""
    library = EmbeddedLibrary(path)
    await library.start()
    async with ScreviClient(**{**library.client_options(), "rate_limit": None}) as client:
        yield client


mirror_client = embedded_client


def _strip(item: dict[str, Any]) -> dict[str, Any]:
    # screvi_url links into the web app of whoever serves the list: not mirrored data.
    return {k: v for k, v in item.items() if k != "screvi_url"}


async def snapshot(client: ScreviClient) -> dict[str, Any]:
    """Everything a client can list, in list order, for comparing two libraries."""

    async def every(method: Any, **filters: Any) -> list[dict[str, Any]]:
        items = [
            _strip(item.model_dump(mode="json"))
            async for item in client.iterate(
                method, max_items=None, per_page=contract.MAX_PER_PAGE, **filters
            )
        ]
        return _ties_by_id(items)

    articles = await every(client.list_articles)
    bodies = {}
    for article in articles:
        for fmt in ("html", "text"):
            full = await client.get_article(article["id"], format=fmt)
            detail = _strip(full.model_dump(mode="json"))
            bodies[(article["id"], fmt)] = detail
    return {
        "tags": [t.model_dump(mode="json") for t in await client.list_tags()],
        "highlights": await every(client.list_highlights, include_metadata=True),
        "sources": await every(client.list_sources, include_empty=True, include_metadata=True),
        "articles": articles,
        "bodies": bodies,
    }


def _ties_by_id(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The list order, with items of equal timestamps put in id order.

    Lists are "most recent first"; the order among items created in the same instant (a bulk
    create) is the server's insertion order, which a mirror cannot see, and the spec leaves
    it open. Everything else about the order is compared as is.
    """
    position = {id(item): index for index, item in enumerate(items)}
    key_field = "saved_at" if items and "saved_at" in items[0] else "created_at"
    groups: dict[Any, list[dict[str, Any]]] = {}
    for item in items:
        groups.setdefault(item.get(key_field), []).append(item)
    ordered = sorted(groups.values(), key=lambda group: position[id(group[0])])
    return [item for group in ordered for item in sorted(group, key=lambda i: i["id"])]


async def search_ids(client: ScreviClient, query: str) -> list[str]:
    page = await client.search(query, per_page=contract.MAX_SEARCH_PER_PAGE)
    return [item.id for item in page.data]
