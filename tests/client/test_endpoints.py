"""Every client method against the embedded library's real app, in-process and over a socket.

Each test runs twice (the `backend` fixture): through the `EmbeddedLibrary` transport (no socket)
and through `ScreviClient.hosted` against uvicorn on 127.0.0.1. Same assertions both ways: the
client must not care which it talks to.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import httpx
import pytest
from client_testkit import ClientFactory, Keys

from screvi_mcp import contract
from screvi_mcp.client import (
    UNSET,
    ConflictError,
    InsufficientScopeError,
    InvalidApiKeyError,
    LegacyKeyReadOnlyError,
    MissingApiKeyError,
    NewHighlight,
    NotFoundError,
    RateLimitedError,
    RetryPolicy,
    ScreviClient,
    SubscriptionRequiredError,
    ValidationFailedError,
)
from screvi_mcp.models import ArticleWithContent, Highlight, Page, SearchResult, Source
from testsupport.polling import async_wait_until

# Article URLs point at a closed port on this machine: nothing leaves 127.0.0.1 even if a
# background fetcher tries them. The library refuses loopback pages at save time unless
# private networks are allowed, so these tests allow them.
ARTICLE_URL = "http://127.0.0.1:9/essays/on-attention"


@pytest.fixture(autouse=True)
def _loopback_pages_may_be_saved(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCREVI_ALLOW_PRIVATE_NETWORKS", "1")


@pytest.fixture
def missing_page() -> Iterator[str]:
    """A loopback page answering 404: its article settles at once as `failed` (a closed
    port is a transient failure, retried with back-off)."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse

    from testsupport.servers import asgi_server

    app = Starlette()
    app.add_route("/{path:path}", lambda request: PlainTextResponse("gone", status_code=404))
    with asgi_server(app) as root:
        yield f"{root}/essays/on-attention"


# Highlights ------------------------------------------------------------------------------


async def test_create_get_and_list_highlights(connect: ClientFactory) -> None:
    async with connect() as client:
        created = await client.create_highlight(
            "Attention is the rarest and purest form of generosity.",
            note="Simone Weil",
            favorite=True,
            location=42,
            tags=["Attention", "generosity"],
            metadata={"imported_from": "tests"},
        )
        fetched = await client.get_highlight(created.id, include_metadata=True)
        plain = await client.get_highlight(created.id)
        listed = await client.list_highlights(favorite=True, tag="attention")
    assert isinstance(created, Highlight)
    assert created.content.startswith("Attention is")
    assert (created.note, created.favorite, created.location) == ("Simone Weil", True, 42)
    assert sorted(t.name for t in created.tags) == ["Attention", "generosity"]
    assert fetched.id == created.id
    assert fetched.metadata == {"imported_from": "tests"}
    assert plain.metadata is None
    assert [h.id for h in listed.data] == [created.id]
    assert listed.pagination.total == 1
    assert listed.pagination.has_more is False


async def test_list_highlights_pages(connect: ClientFactory) -> None:
    async with connect() as client:
        await client.create_highlights_bulk([{"content": f"Line {i}"} for i in range(5)])
        first = await client.list_highlights(per_page=2)
        last = await client.list_highlights(per_page=2, page=3)
        walked = [h.content async for h in client.iterate(client.list_highlights, per_page=2)]
        capped = [h async for h in client.iterate(client.list_highlights, max_items=3)]
    assert (first.pagination.total, first.pagination.total_pages) == (5, 3)
    assert first.pagination.has_more and not last.pagination.has_more
    assert len(last.data) == 1
    assert sorted(walked) == [f"Line {i}" for i in range(5)]
    assert len(capped) == 3


async def test_update_highlight_changes_only_what_is_sent(connect: ClientFactory) -> None:
    async with connect() as client:
        created = await client.create_highlight(
            "Original", note="keep me?", url="https://example.com/x", tags=["a"]
        )
        cleared = await client.update_highlight(created.id, note=None, favorite=True)
        retagged = await client.update_highlight(created.id, tags=["b", "c"], content=UNSET)
        untouched = await client.update_highlight(created.id)
    assert cleared.note is None
    assert cleared.favorite is True
    assert cleared.url == "https://example.com/x"
    assert cleared.content == "Original"
    assert sorted(t.name for t in retagged.tags) == ["b", "c"]
    assert untouched.favorite is True and untouched.note is None


async def test_highlight_tags_are_added_and_removed(connect: ClientFactory) -> None:
    async with connect() as client:
        created = await client.create_highlight("Tag me", tags=["keep"])
        after_add = await client.add_highlight_tags(created.id, ["New", "KEEP"])
        after_remove = await client.remove_highlight_tags(created.id, ["new"])
        tags = {t.name.lower(): t for t in await client.list_tags()}
    assert sorted(t.name.lower() for t in after_add) == ["keep", "new"]
    assert [t.name for t in after_remove] == ["keep"]
    assert "new" in tags  # the tag itself remains
    assert tags["new"].highlight_count == 0


async def test_delete_highlight_is_soft_and_idempotent(connect: ClientFactory) -> None:
    async with connect() as client:
        created = await client.create_highlight("Short-lived")
        await client.delete_highlight(created.id)
        await client.delete_highlight(created.id)
        with pytest.raises(NotFoundError):
            await client.get_highlight(created.id)
        live = await client.list_highlights()
        with_tombstones = await client.list_highlights(include_deleted=True)
    assert live.data == []
    assert [(h.id, h.deleted) for h in with_tombstones.data] == [(created.id, True)]


async def test_unknown_and_malformed_ids_are_not_found(connect: ClientFactory) -> None:
    async with connect() as client:
        for call in (
            client.get_highlight("00000000-0000-4000-8000-000000000000"),
            client.get_highlight("not-a-uuid"),
            client.delete_highlight("00000000-0000-4000-8000-000000000000"),
            client.get_source("nope"),
            client.get_article("nope"),
            client.update_tag("nope", name="x"),
        ):
            with pytest.raises(NotFoundError) as caught:
                await call
            assert caught.value.status == 404
            assert caught.value.from_server


async def test_random_highlights(connect: ClientFactory) -> None:
    async with connect() as client:
        with pytest.raises(NotFoundError):
            await client.get_random_highlights()
        book = await client.create_source("Walden", "book")
        await client.create_highlights_bulk(
            [
                {"content": "One", "favorite": True},
                {"content": "Two"},
                {"content": "Three", "source_id": book.id},
            ]
        )
        single = await client.get_random_highlights()
        several = await client.get_random_highlights(count=3)
        favourites = await client.get_random_highlights(count=5, favorite=True)
        by_type = await client.get_random_highlights(count=3, types=["book", "podcast"])
    assert len(single) == 1
    assert sorted(h.content for h in several) == ["One", "Three", "Two"]
    assert [h.content for h in favourites] == ["One"]
    assert [h.content for h in by_type] == ["Three"]


async def test_bulk_creates_all_or_nothing(connect: ClientFactory) -> None:
    async with connect() as client:
        created = await client.create_highlights_bulk(
            [NewHighlight(content="First", tags=["bulk"]), {"content": "Second", "location": 7}]
        )
        with pytest.raises(ValidationFailedError) as caught:
            await client.create_highlights_bulk(
                [
                    {"content": "Would be fine"},
                    {"content": "Orphan", "source_id": "00000000-0000-4000-8000-000000000000"},
                ]
            )
        listed = await client.list_highlights()
    assert [h.content for h in created] == ["First", "Second"]
    assert caught.value.from_server
    assert any(name.startswith("highlights[1].") for name in caught.value.fields)
    assert sorted(h.content for h in listed.data) == ["First", "Second"]


# Search ----------------------------------------------------------------------------------


async def test_search_finds_by_keyword(connect: ClientFactory) -> None:
    async with connect() as client:
        await client.create_highlights_bulk(
            [
                {"content": "The obstacle is the way.", "tags": ["stoic"]},
                {"content": "Waste no more time arguing about what a good man should be."},
                {"content": "Bananas are berries."},
            ]
        )
        result = await client.search("obstacle", per_page=contract.MAX_SEARCH_PER_PAGE)
        tagged = await client.search("obstacle", tag="stoic", min_relevance=0.5, verify=False)
        nothing = await client.search("obstacle", tag="no-such-tag")
    assert isinstance(result, Page)
    assert [r.content for r in result.data] == ["The obstacle is the way."]
    hit = result.data[0]
    assert isinstance(hit, SearchResult)
    assert hit.match_type in ("keyword", "both")
    assert [r.content for r in tagged.data] == ["The obstacle is the way."]
    assert nothing.data == []
    assert result.pagination.per_page == contract.MAX_SEARCH_PER_PAGE


# Sources ---------------------------------------------------------------------------------


async def test_source_lifecycle(connect: ClientFactory) -> None:
    async with connect() as client:
        book = await client.create_source(
            "Meditations", "book", author="Marcus Aurelius", isbn="9780140449334"
        )
        await client.create_highlights_bulk(
            [{"content": f"Passage {i}", "source_id": book.id} for i in range(3)]
        )
        detail = await client.get_source(book.id, per_page=2)
        listed = await client.list_sources(type="book", search="marcus")
        renamed = await client.update_source(book.id, name="Meditations (Hays)", author=None)
        with pytest.raises(ConflictError):
            await client.delete_source(book.id)
        await client.delete_source(book.id, cascade=True)
        after = await client.list_highlights()
        tombstones = await client.list_sources(include_deleted=True)
    assert isinstance(book, Source)
    assert (book.type, book.author) == ("book", "Marcus Aurelius")
    assert detail.data.id == book.id
    assert detail.data.highlight_count == 3
    assert len(detail.data.highlights) == 2
    assert detail.pagination.total == 3 and detail.pagination.has_more
    assert [s.id for s in listed.data] == [book.id]
    assert (renamed.name, renamed.author, renamed.type) == ("Meditations (Hays)", None, "book")
    assert after.data == []
    assert any(s.id == book.id and s.deleted for s in tombstones.data)


async def test_second_self_source_conflicts_with_the_existing_id(connect: ClientFactory) -> None:
    async with connect() as client:
        mine = await client.create_source("My notes", "self")
        with pytest.raises(ConflictError) as caught:
            await client.create_source("More notes", "self")
    assert caught.value.status == 409
    assert caught.value.source_id == mine.id


async def test_empty_source_deletes_without_cascade(connect: ClientFactory) -> None:
    async with connect() as client:
        podcast = await client.create_source("Hardcore History", "podcast")
        await client.delete_source(podcast.id)
        with pytest.raises(NotFoundError):
            await client.get_source(podcast.id)


# Articles --------------------------------------------------------------------------------


async def test_article_save_list_get_update(connect: ClientFactory) -> None:
    async with connect() as client:
        saved = await client.save_article(ARTICLE_URL, tags=["reading"])
        again = await client.save_article(ARTICLE_URL)
        listed = await client.list_articles(tag="reading", sort_by="saved_at", order="desc")
        article = await client.get_article(saved.id, format="text", offset=0, max_chars=1000)
        updated = await client.update_article(
            saved.id, home_status="later", favorite=True, note="read on Sunday", title=None
        )
        later = await client.list_articles(home_status="later", favorite=True)
        inbox = await client.list_articles(home_status="inbox")
    assert (saved.duplicate, saved.kind, saved.parse_state) == (False, "article", "queued")
    assert (again.id, again.duplicate) == (saved.id, True)
    assert [a.id for a in listed.data] == [saved.id]
    assert listed.data[0].url == ARTICLE_URL
    assert listed.data[0].screvi_url
    assert isinstance(article, ArticleWithContent)
    assert article.content_format == "text"
    assert article.parse_state in ("queued", "fetching", "failed", "parsed")
    assert (updated.home_status, updated.favorite, updated.note) == (
        "later",
        True,
        "read on Sunday",
    )
    assert [a.id for a in later.data] == [saved.id]
    assert inbox.data == []


async def test_article_tags_and_highlights(connect: ClientFactory) -> None:
    async with connect() as client:
        saved = await client.save_article(ARTICLE_URL)
        added = await client.add_article_tags(saved.id, ["Essays", "later-read"])
        removed = await client.remove_article_tags(saved.id, ["LATER-READ"])
        highlight = await client.create_highlight("A line from the essay", article_id=saved.id)
        by_source = await client.list_highlights(source_id=saved.id)
        article = await client.get_article(saved.id)
        with_highlights = await client.list_articles(has_highlights=True)
    assert sorted(t.name for t in added) == ["Essays", "later-read"]
    assert [t.name for t in removed] == ["Essays"]
    assert [h.id for h in by_source.data] == [highlight.id]
    assert [h.id for h in article.highlights] == [highlight.id]
    assert [a.id for a in with_highlights.data] == [saved.id]


async def test_article_body_without_highlights(connect: ClientFactory, missing_page: str) -> None:
    """Reading a body chunk by chunk need not carry the article's highlights each time."""
    async with connect() as client:
        saved = await client.save_article(missing_page)
        await client.create_highlight("A line from the essay", article_id=saved.id)

        # The background fetcher moves the article from `fetching` to `failed` at any moment;
        # compare the two reads only once it has settled, or the race is what gets compared.
        async def settled() -> bool:
            return (await client.get_article(saved.id)).parse_state not in ("queued", "fetching")

        await async_wait_until(settled, timeout=10, what="the fetch never ended", every=0.02)
        full = await client.get_article(saved.id, format="text", max_chars=1000)
        body = await client.get_article(saved.id, format="text", max_chars=1000, highlights=False)
    assert len(full.highlights) == 1
    assert body.highlights == []
    assert body.model_dump(exclude={"highlights"}) == full.model_dump(exclude={"highlights"})


class IgnoresPreferences(httpx.AsyncBaseTransport):
    """A server that knows no `Prefer` token, as RFC 7240 lets hosted Screvi be: the real
    embedded library behind it never sees the header, so it sends every highlight."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.preferences: list[str | None] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.preferences.append(request.headers.get("prefer"))
        if "prefer" in request.headers:
            del request.headers["prefer"]
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_article_body_without_highlights_from_a_server_that_ignores_it(
    library_path: Path, missing_page: str
) -> None:
    from screvi_mcp.local.api.seam import EmbeddedLibrary

    library = EmbeddedLibrary(library_path)
    await library.start()
    server = IgnoresPreferences(library)
    settings = {**library.client_options(), "transport": server}
    async with ScreviClient(**settings, retry=RetryPolicy(max_retries=0)) as client:
        saved = await client.save_article(missing_page)
        await client.create_highlight("A line from the essay", article_id=saved.id)
        # The fetch worker settles the article first (here: fails it, the page answering
        # 404); otherwise the two reads may straddle that change.
        worker = library.app.state.article_worker
        worker.wake()
        with anyio.fail_after(30):  # a bound against hanging only
            await worker.wait_idle()
        body = await client.get_article(saved.id, highlights=False)
        full = await client.get_article(saved.id)
    assert server.preferences[-2:] == ["omit-highlights", None]
    assert body.highlights == [] and len(full.highlights) == 1
    assert body.model_dump(exclude={"highlights"}) == full.model_dump(exclude={"highlights"})


async def test_articles_filtered_by_save_time(connect: ClientFactory) -> None:
    async with connect() as client:
        saved = await client.save_article(ARTICLE_URL)
        hour = timedelta(hours=1)
        now = datetime.now(UTC)
        recent = await client.list_articles(saved_since=now - hour, saved_before=now + hour)
        future = await client.list_articles(saved_since=now + hour)
    assert [a.id for a in recent.data] == [saved.id]
    assert future.data == []


# Tags ------------------------------------------------------------------------------------


async def test_tag_lifecycle(connect: ClientFactory) -> None:
    async with connect() as client:
        created = await client.create_tag("Ideas", color="#ff8800")
        existing = await client.create_tag("IDEAS")
        other = await client.create_tag("Other")
        highlight = await client.create_highlight("Tagged", tags=[created.id])
        counted = {t.id: t for t in await client.list_tags()}
        renamed = await client.update_tag(created.id, name="Big ideas", color=None)
        with pytest.raises(ValidationFailedError) as clash:
            await client.update_tag(other.id, name="big IDEAS")
        carried = await client.get_highlight(highlight.id)
        await client.delete_tag(created.id)
        after = await client.get_highlight(highlight.id)
        remaining = [t.name for t in await client.list_tags()]
    assert (created.created, existing.created) == (True, False)
    assert existing.id == created.id
    assert created.color == "#ff8800"
    assert counted[created.id].highlight_count == 1
    assert (renamed.name, renamed.color) == ("Big ideas", None)
    assert clash.value.from_server and "name" in clash.value.fields
    assert [t.name for t in carried.tags] == ["Big ideas"]
    assert after.tags == []
    assert remaining == ["Other"]


# Skill file ------------------------------------------------------------------------------


async def test_skill_file_is_served_by_the_app(connect: ClientFactory) -> None:
    async with connect() as client:
        skill = await client.get_skill_file(fallback=False)
    assert skill.origin == "api"
    assert skill.content.strip()
    assert skill.location.endswith("/.well-known/skills/default/skill.md")


# Auth, scopes, subscription, server-side rate limit --------------------------------------


async def test_missing_and_invalid_keys(connect: ClientFactory) -> None:
    async with connect(None) as anonymous:
        with pytest.raises(MissingApiKeyError) as missing:
            await anonymous.list_tags()
        skill = await anonymous.get_skill_file(fallback=False)  # needs no key
    async with connect("sk_live_not-a-real-key") as unknown:
        with pytest.raises(InvalidApiKeyError) as invalid:
            await unknown.list_tags()
    assert (missing.value.status, missing.value.code) == (401, "missing_api_key")
    assert (invalid.value.status, invalid.value.code) == (401, "invalid_api_key")
    assert skill.origin == "api"


async def test_read_only_scoped_key_reads_but_cannot_write(
    connect: ClientFactory, keys: Keys
) -> None:
    async with connect(keys.read) as client:
        assert not client.read_only  # only the server knows this key's scopes
        await client.list_highlights()
        with pytest.raises(InsufficientScopeError) as caught:
            await client.create_tag("nope")
    assert (caught.value.status, caught.value.code) == (403, "insufficient_scope")


async def test_legacy_key_reads_warns_once_and_never_sends_writes(
    connect: ClientFactory, keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="screvi_mcp.client")
    async with connect(keys.legacy) as client:
        assert client.read_only
        await client.list_highlights()
        await client.list_tags()
        with pytest.raises(LegacyKeyReadOnlyError) as caught:
            await client.create_highlight("never sent")
    async with connect() as writer:
        assert (await writer.list_highlights()).data == []
    deprecations = [r for r in caplog.records if "Deprecation" in r.getMessage()]
    assert len(deprecations) == 1
    assert not caught.value.from_server
    assert keys.legacy not in caplog.text


async def test_subscription_required(connect: ClientFactory, library_path: object) -> None:
    from screvi_mcp.local.storage.library import Library

    async with connect() as client:
        await client.list_tags()
        library = Library.open(library_path)  # type: ignore[arg-type]
        try:
            library.set_setting("subscription_active", "0")
        finally:
            library.close()
        with pytest.raises(SubscriptionRequiredError) as caught:
            await client.list_tags()
    assert (caught.value.status, caught.value.code) == (403, "subscription_required")


async def test_server_rate_limit_surfaces_as_rate_limited_with_retry_after(
    connect: ClientFactory,
) -> None:
    # The client's own limiter is off, to stand in for another program sharing the key.
    budget = RetryPolicy(max_retries=2, max_total_wait=0.5)
    async with connect(server_rate_limit=3, rate_limit=None, retry=budget) as client:
        for _ in range(3):
            await client.list_tags()
        with pytest.raises(RateLimitedError) as caught:
            await client.list_tags()
    assert caught.value.status == 429
    assert caught.value.retry_after is not None and caught.value.retry_after > 0.5


async def test_embedded_client_must_be_started_first(library_path: Path) -> None:
    from screvi_mcp.local.api.seam import EmbeddedLibrary

    library = EmbeddedLibrary(library_path)
    client = ScreviClient("sk_live_any", base_url=library.base_url, transport=library)
    with pytest.raises(RuntimeError, match="async with"):
        await client.list_tags()
    await library.start()
    client = ScreviClient(**library.client_options())
    async with client:
        assert await client.list_tags() == []
    # Closed means closed: the library is no longer served.
    with pytest.raises(RuntimeError):
        await client.list_tags()
