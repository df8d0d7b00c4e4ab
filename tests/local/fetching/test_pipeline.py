"""Saving URLs and the background worker, end to end against the loopback site.

Fetches reach 127.0.0.1 because these tests allow private networks, except the refusal tests,
which run the strict guard against loopback targets only.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlencode

import pytest
from fetching_site import LocalSite, LoopbackRouter, loopback_resolver
from test_netguard import LetIn

from screvi_mcp.local.fetching.fetcher import Fetcher, FetchResult, FetchSettings
from screvi_mcp.local.fetching.netguard import AddressPolicy
from screvi_mcp.local.fetching.pipeline import ArticleWorker, WorkerSettings
from screvi_mcp.local.fetching.save import SaveOutcome, save_article
from screvi_mcp.local.fetching.urls import InvalidArticleURL
from screvi_mcp.local.storage.library import Library

ALLOW = AddressPolicy(allow_private=True)
FAST_RETRIES = WorkerSettings(concurrency=2, max_attempts=2, retry_base_delay=0, poll_interval=5)


def article(library: Library, article_id: str) -> dict[str, Any]:
    row = (
        library.connection()
        .execute(
            "SELECT a.*, s.name, s.type, s.author, s.image_url, s.url AS source_url "
            "FROM articles a JOIN sources s ON s.id = a.source_id WHERE a.source_id = ?",
            (article_id,),
        )
        .fetchone()
    )
    assert row is not None
    data = dict(row)
    data["parse_failure"] = json.loads(data["parse_failure"]) if data["parse_failure"] else None
    return data


@asynccontextmanager
async def running(
    library: Library, fetcher: Fetcher, settings: WorkerSettings = FAST_RETRIES
) -> AsyncIterator[ArticleWorker]:
    worker = ArticleWorker(library, fetcher, settings)
    await worker.start()
    try:
        yield worker
    finally:
        await worker.stop()


async def settle(worker: ArticleWorker) -> None:
    worker.wake()
    await asyncio.wait_for(worker.wait_idle(), 30)  # a bound against hanging, not a timing check


async def save_and_process(
    library: Library, fetcher: Fetcher, url: str, settings: WorkerSettings = FAST_RETRIES
) -> dict[str, Any]:
    async with running(library, fetcher, settings) as worker:
        outcome = await save_article(library, url, None, fetcher=fetcher, worker=worker)
        assert outcome.kind == "article" and not outcome.duplicate
        await settle(worker)
    return article(library, outcome.id)


# --- saving -----------------------------------------------------------------------------------


async def test_a_new_url_is_queued_at_once(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        outcome = await save_article(library, site.url("/article"), None, fetcher=fetcher)
    assert outcome.kind == "article"
    assert outcome.status_code == 201
    assert outcome.response_data() == {
        "id": outcome.id,
        "parse_state": "queued",
        "duplicate": False,
    }
    row = article(library, outcome.id)
    assert row["parse_state"] == "queued"
    assert row["name"] == site.url("/article") and row["type"] == "article"
    assert row["url_key"] == site.url("/article")
    assert row["content_text"] is None
    assert site.requests == []  # the page itself is fetched in the background


@pytest.mark.parametrize(
    "variant",
    [
        "/article/",
        "/article#comments",
        "/article?utm_source=newsletter&utm_medium=email",
        "/article?fbclid=xyz",
    ],
)
async def test_the_same_page_again_is_a_duplicate(
    library: Library, site: LocalSite, variant: str
) -> None:
    async with Fetcher(ALLOW) as fetcher:
        first = await save_article(library, site.url("/article"), None, fetcher=fetcher)
        again = await save_article(library, site.url(variant), None, fetcher=fetcher)
        upper = await save_article(
            library, f"HTTP://127.0.0.1:{site.port}{variant}", None, fetcher=fetcher
        )
    assert (again.id, again.duplicate, again.status_code) == (first.id, True, 200)
    assert again.response_data()["duplicate"] is True
    assert upper.id == first.id
    count = library.connection().execute("SELECT count(*) FROM articles").fetchone()[0]
    assert count == 1


async def test_a_page_saved_under_another_url_is_found_by_its_canonical_url(
    library: Library, site: LocalSite
) -> None:
    async with Fetcher(ALLOW) as fetcher:
        row = await save_and_process(library, fetcher, site.url("/variant"))
        assert row["canonical_url"] == site.url("/essays/reading-slowly")
        again = await save_article(
            library, site.url("/essays/reading-slowly/?utm_source=x"), None, fetcher=fetcher
        )
    assert again.duplicate and again.id == row["source_id"]
    assert again.parse_state == "parsed"


async def test_a_canonical_link_to_another_site_is_not_trusted(
    library: Library, site: LocalSite, second_site: LocalSite
) -> None:
    """A page on one site naming another site's URL as canonical must not capture it."""
    victim = site.url("/article")
    async with Fetcher(ALLOW) as fetcher:
        hijack = second_site.url("/declares-canonical?" + urlencode({"url": victim}))
        row = await save_and_process(library, fetcher, hijack)
        assert row["parse_state"] == "parsed"
        assert row["canonical_url"] is None and row["canonical_key"] is None
        real = await save_article(library, victim, None, fetcher=fetcher)
    assert not real.duplicate and real.id != row["source_id"]


async def test_a_canonical_link_on_the_same_site_is_trusted(
    library: Library, site: LocalSite
) -> None:
    """Same host, another scheme or a `www.` prefix: still the page's own site."""
    own = "https://www.127.0.0.1/essays/reading-slowly"
    async with Fetcher(ALLOW) as fetcher:
        row = await save_and_process(
            library, fetcher, site.url("/declares-canonical?" + urlencode({"url": own}))
        )
    assert row["canonical_url"] == own


async def test_short_links_are_resolved_before_the_duplicate_check(
    library: Library, site: LocalSite
) -> None:
    settings = FetchSettings(short_link_hosts=frozenset({"127.0.0.1"}), max_redirects=5)
    async with Fetcher(ALLOW, settings) as fetcher:
        first = await save_article(library, site.url("/article"), None, fetcher=fetcher)
        short = await save_article(library, site.url("/redirect/2"), None, fetcher=fetcher)
    assert short.url == site.url("/article")
    assert short.duplicate and short.id == first.id


async def test_an_unresolvable_short_link_is_saved_as_given(
    library: Library, site: LocalSite
) -> None:
    settings = FetchSettings(short_link_hosts=frozenset({"127.0.0.1"}), max_redirects=2)
    async with Fetcher(ALLOW, settings) as fetcher:
        outcome = await save_article(library, site.url("/loop"), None, fetcher=fetcher)
    assert outcome.url == site.url("/loop") and not outcome.duplicate


async def test_invalid_urls_are_refused(library: Library) -> None:
    async with Fetcher(ALLOW) as fetcher:
        for bad in ("not a url", "ftp://example.org/x", "javascript:alert(1)"):
            with pytest.raises(InvalidArticleURL):
                await save_article(library, bad, None, fetcher=fetcher)


async def test_the_tag_hook_runs_in_the_save_transaction(library: Library, site: LocalSite) -> None:
    calls: list[tuple[bool, str, list[str]]] = []

    def hook(conn: sqlite3.Connection, outcome: SaveOutcome, tags: list[str]) -> None:
        assert conn.in_transaction
        calls.append((outcome.duplicate, outcome.id, tags))

    async with Fetcher(ALLOW) as fetcher:
        first = await save_article(
            library, site.url("/article"), ["reading"], fetcher=fetcher, tag_hook=hook
        )
        await save_article(library, site.url("/article"), ["later"], fetcher=fetcher, tag_hook=hook)
        await save_article(library, site.url("/article"), None, fetcher=fetcher, tag_hook=hook)
    assert calls == [(False, first.id, ["reading"]), (True, first.id, ["later"])]


# --- social posts -----------------------------------------------------------------------------


class Listener:
    def __init__(self) -> None:
        self.changed: list[int] = []

    def highlights_changed(self, library: Library, seqs: list[int]) -> None:
        self.changed.extend(seqs)

    def highlights_removed(self, library: Library, seqs: list[int]) -> None:
        pass


async def test_a_social_post_becomes_a_highlight_of_a_tweet_source(
    library: Library, site: LocalSite
) -> None:
    listener = Listener()
    library.add_listener(listener)
    router = LoopbackRouter(site)
    fetcher = Fetcher(ALLOW, transport=router, resolver=loopback_resolver)
    url = "https://twitter.com/adalovelace/status/1234567890123456789?utm_source=x"
    async with fetcher:
        saved = await save_article(library, url, None, fetcher=fetcher)
        again = await save_article(
            library, "https://x.com/adalovelace/status/1234567890123456789", None, fetcher=fetcher
        )
    assert saved.kind == "highlight" and not saved.duplicate and saved.status_code == 201
    assert saved.response_data() == {
        "kind": "highlight",
        "id": saved.id,
        "source_id": saved.source_id,
        "duplicate": False,
    }
    assert (again.id, again.source_id, again.duplicate) == (saved.id, saved.source_id, True)
    conn = library.connection()
    highlight = conn.execute("SELECT * FROM highlights WHERE id = ?", (saved.id,)).fetchone()
    source = conn.execute("SELECT * FROM sources WHERE id = ?", (saved.source_id,)).fetchone()
    assert highlight["content"].startswith("The engine weaves algebraic patterns\n")
    assert highlight["url"] == "https://x.com/adalovelace/status/1234567890123456789"
    assert highlight["date"] == "2024-03-05T00:00:00.000000Z"
    assert (source["type"], source["name"], source["author"]) == (
        "tweet",
        "Ada Lovelace",
        "@adalovelace",
    )
    assert conn.execute("SELECT count(*) FROM articles").fetchone()[0] == 0
    assert listener.changed == [highlight["seq"]]
    assert len(router.seen) == 1  # the duplicate was recognised without asking again


async def test_posts_of_one_author_share_a_source(library: Library, site: LocalSite) -> None:
    router = LoopbackRouter(site)
    async with Fetcher(ALLOW, transport=router, resolver=loopback_resolver) as fetcher:
        first = await save_article(
            library, "https://x.com/adalovelace/status/1", None, fetcher=fetcher
        )
        second = await save_article(
            library, "https://x.com/adalovelace/status/2", None, fetcher=fetcher
        )
        other = await save_article(
            library,
            "https://bsky.app/profile/grace.bsky.social/post/3kabc2xyz",
            None,
            fetcher=fetcher,
        )
    assert first.id != second.id and first.source_id == second.source_id
    assert other.source_id != first.source_id and other.kind == "highlight"


async def test_an_unreadable_post_is_kept_as_an_article(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        outcome = await save_article(library, site.url("/@nobody/4242"), None, fetcher=fetcher)
    assert outcome.kind == "article" and outcome.parse_state == "queued"


# --- the worker -------------------------------------------------------------------------------


async def test_an_article_is_fetched_and_extracted(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        row = await save_and_process(library, fetcher, site.url("/redirect/1"))
    assert row["parse_state"] == "parsed"
    assert row["title"] == row["name"] == "The Quiet Art of Reading Slowly"
    assert row["author"] == "Ada Lovelace"
    assert row["site_name"] == "Example Review"
    assert row["language"] == "en-GB"
    assert row["published_date"] == "2024-03-05T00:00:00.000000Z"
    assert row["excerpt"] == "Why reading slowly makes ideas stick."
    assert row["image_url"] == site.url("/img/lead.jpg")
    # The page names https://example.org/... as canonical: another site, so not trusted; the
    # final URL after the redirect is what identifies it instead.
    assert row["canonical_url"] == site.url("/article")
    assert row["canonical_key"] == site.url("/article")
    assert row["source_domain"] == "127.0.0.1"
    assert row["word_count"] > 80 and row["reading_time_minutes"] == 1
    assert "COMMENT-MARKER" not in row["content_text"]
    assert "NAV-MARKER" not in row["content_html"] and "<script" not in row["content_html"]
    assert row["parse_error"] is None and row["parse_failure"] is None
    assert row["last_fetched_at"] is not None
    assert row["fetch_attempts"] == 1
    assert row["url"] == site.url("/redirect/1")  # the saved URL stays what was saved


async def test_a_title_set_by_the_user_is_kept(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        outcome = await save_article(library, site.url("/article"), None, fetcher=fetcher)
        with library.write() as conn:
            conn.execute("UPDATE articles SET title = 'Mine' WHERE source_id = ?", (outcome.id,))
            conn.execute("UPDATE sources SET name = 'Mine' WHERE id = ?", (outcome.id,))
        async with running(library, fetcher) as worker:
            await settle(worker)
    row = article(library, outcome.id)
    assert (row["parse_state"], row["title"], row["name"]) == ("parsed", "Mine", "Mine")


async def test_a_pdf_link_becomes_a_pdf_article(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        outcome = await save_article(library, site.url("/doc.pdf"), None, fetcher=fetcher)
        queued = article(library, outcome.id)
        assert queued["type"] == "pdf" and queued["pdf_url"] == site.url("/doc.pdf")
        async with running(library, fetcher) as worker:
            await settle(worker)
    row = article(library, outcome.id)
    assert row["parse_state"] == "parsed"
    assert row["title"] == row["name"] == "Field Notes on Slow Reading"
    assert row["author"] == "Grace Hopper"
    assert row["content_text"].startswith("Field Notes\n\nReading slowly is an old practice")
    assert row["word_count"] == len(row["content_text"].split())


async def test_a_pdf_found_by_its_content_type(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        row = await save_and_process(library, fetcher, site.url("/download"))
    assert (row["parse_state"], row["type"]) == ("parsed", "pdf")
    assert row["pdf_url"] == site.url("/download")


async def test_a_missing_page_fails_with_its_status(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        row = await save_and_process(library, fetcher, site.url("/missing"))
    assert row["parse_state"] == "failed"
    assert "404" in row["parse_error"]
    failure = row["parse_failure"]
    assert failure["reason"] == "http_error"
    assert failure["http_status"] == 404
    assert failure["content_type"] == "text/html"
    assert row["fetch_attempts"] == 1  # a 404 is not retried
    assert row["content_text"] is None


async def test_a_trickling_page_is_dropped_at_the_minimum_rate(
    library: Library, site: LocalSite
) -> None:
    """A page sending a byte now and then is given up at once (not retried): it would hold a
    fetch worker until the total timeout on every attempt."""
    settings = FetchSettings(total_timeout=6.0, min_rate_grace=1.0, min_bytes_per_second=1000)
    async with Fetcher(ALLOW, settings) as fetcher:
        row = await save_and_process(library, fetcher, site.url("/trickle"))
    assert row["parse_state"] == "failed"
    assert row["parse_failure"]["reason"] == "too_slow", row["parse_failure"]
    assert "1000 bytes/s" in row["parse_error"]
    assert row["fetch_attempts"] == 1


async def test_a_binary_fails_as_unsupported(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        row = await save_and_process(library, fetcher, site.url("/image.png"))
    assert row["parse_state"] == "failed"
    assert row["parse_failure"]["reason"] == "unsupported_content_type"
    assert row["parse_failure"]["content_type"] == "image/png"
    assert row["parse_failure"]["http_status"] == 200
    assert "image/png" in row["parse_error"]


async def test_an_oversize_page_fails(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW, FetchSettings(max_bytes=100_000)) as fetcher:
        row = await save_and_process(library, fetcher, site.url("/big"))
    assert row["parse_state"] == "failed"
    assert row["parse_failure"]["reason"] == "too_large"
    assert row["fetch_attempts"] == 1


async def test_a_slow_page_is_retried_then_fails(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW, FetchSettings(read_timeout=0.2, total_timeout=5)) as fetcher:
        row = await save_and_process(library, fetcher, site.url("/slow"))
    assert row["parse_state"] == "failed"
    assert row["parse_failure"]["reason"] == "timeout"
    assert row["parse_failure"]["attempts"] == 2
    assert row["fetch_attempts"] == 2
    assert site.hits("/slow") == 2
    assert "Traceback" not in row["parse_error"]


async def test_a_transient_server_error_is_retried(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        row = await save_and_process(library, fetcher, site.url("/flaky"))
    assert row["parse_state"] == "parsed"
    assert row["fetch_attempts"] == 2
    assert row["parse_error"] is None


async def test_a_page_without_article_text_fails(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        row = await save_and_process(library, fetcher, site.url("/empty-page"))
    assert row["parse_state"] == "failed"
    assert row["parse_failure"]["reason"] == "no_content"


async def test_a_loopback_url_is_refused_when_saved(library: Library, site: LocalSite) -> None:
    async with Fetcher(AddressPolicy(allow_private=False)) as fetcher:
        with pytest.raises(InvalidArticleURL, match="loopback"):
            await save_article(library, site.url("/article"), None, fetcher=fetcher)
    assert library.connection().execute("SELECT count(*) FROM articles").fetchone()[0] == 0
    assert site.requests == []


async def test_a_name_resolving_to_loopback_is_refused_when_fetched(
    library: Library, site: LocalSite
) -> None:
    """Only DNS knows where a name leads: such a page is saved, then fails, saying why."""
    strict = AddressPolicy(allow_private=False)
    async with Fetcher(strict, transport=LoopbackRouter(site), resolver=loopback_resolver) as f:
        row = await save_and_process(library, f, "https://essays.example/article")
    assert row["parse_state"] == "failed"
    assert row["parse_failure"]["reason"] == "blocked_address"
    assert "loopback" in row["parse_error"]
    assert row["fetch_attempts"] == 1
    assert site.requests == []


async def test_a_short_link_into_loopback_is_refused(
    library: Library, site: LocalSite, second_site: LocalSite
) -> None:
    policy = LetIn(allow_private=False, exempt=frozenset({ipaddress.ip_address("127.0.0.2")}))
    settings = FetchSettings(short_link_hosts=frozenset({"127.0.0.2"}))
    start = second_site.url(f"/redirect-to?url={site.url('/article')}")
    async with Fetcher(policy, settings) as fetcher:
        row = await save_and_process(library, fetcher, start)
    assert row["url"] == start  # resolution stopped at the refused hop
    assert row["parse_state"] == "failed"
    assert row["parse_failure"]["reason"] == "blocked_address"
    assert site.requests == []


async def test_interrupted_rows_are_resumed_at_start_up(library: Library, site: LocalSite) -> None:
    async with Fetcher(ALLOW) as fetcher:
        queued = await save_article(library, site.url("/article"), None, fetcher=fetcher)
        crashed = await save_article(library, site.url("/doc.pdf"), None, fetcher=fetcher)
        hopeless = await save_article(library, site.url("/notes.txt"), None, fetcher=fetcher)
        with library.write() as conn:  # what a crash in the middle of fetching leaves behind
            conn.execute(
                "UPDATE articles SET parse_state = 'fetching', fetch_attempts = 1 "
                "WHERE source_id = ?",
                (crashed.id,),
            )
            conn.execute(
                "UPDATE articles SET parse_state = 'fetching', fetch_attempts = 2 "
                "WHERE source_id = ?",
                (hopeless.id,),
            )
        async with running(library, fetcher) as worker:
            await settle(worker)
    assert article(library, queued.id)["parse_state"] == "parsed"
    resumed = article(library, crashed.id)
    assert (resumed["parse_state"], resumed["fetch_attempts"]) == ("parsed", 2)
    given_up = article(library, hopeless.id)
    assert given_up["parse_state"] == "failed"
    assert given_up["parse_failure"]["reason"] == "interrupted"


class GatedFetcher(Fetcher):
    """Holds every fetch at a gate, counting how many are in flight at once."""

    def __init__(self) -> None:
        super().__init__(ALLOW)
        self.gate = asyncio.Event()
        self.in_flight = 0
        self.most = 0
        self.entered = asyncio.Condition()

    async def fetch(self, url: str, *, accept: str | None = None) -> FetchResult:
        async with self.entered:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            self.entered.notify_all()
        try:
            await self.gate.wait()
            return await super().fetch(url, accept=accept)
        finally:
            self.in_flight -= 1


async def test_concurrency_is_bounded(library: Library, site: LocalSite) -> None:
    fetcher = GatedFetcher()
    async with fetcher:
        ids = [
            (await save_article(library, site.url(f"/article?n={n}"), None, fetcher=fetcher)).id
            for n in range(5)
        ]
        async with running(library, fetcher) as worker:
            async with fetcher.entered:
                await asyncio.wait_for(fetcher.entered.wait_for(lambda: fetcher.in_flight == 2), 30)
            states = [article(library, i)["parse_state"] for i in ids]
            assert states.count("fetching") == 2 and states.count("queued") == 3
            fetcher.gate.set()
            await settle(worker)
    assert fetcher.most == 2
    assert [article(library, i)["parse_state"] for i in ids] == ["parsed"] * 5


async def test_stopping_hands_in_flight_rows_back(library: Library, site: LocalSite) -> None:
    fetcher = GatedFetcher()
    async with fetcher:
        outcome = await save_article(library, site.url("/article"), None, fetcher=fetcher)
        worker = ArticleWorker(library, fetcher, FAST_RETRIES)
        await worker.start()
        async with fetcher.entered:
            await asyncio.wait_for(fetcher.entered.wait_for(lambda: fetcher.in_flight == 1), 30)
        await worker.stop()
    row = article(library, outcome.id)
    assert (row["parse_state"], row["fetch_attempts"]) == ("queued", 0)
