"""The MCP server over a mirror (`--mirror`): local reads, writes through Screvi, freshness."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent
from mirror_testkit import (
    FAST,
    StandIn,
    add_article,
    search_ids,
    seed,
    serve_stand_in,
    store_parsed,
    sync,
)
from test_sync import assert_same

from screvi_mcp.local.fetching.extract import ExtractedArticle
from screvi_mcp.local.storage.library import Library
from screvi_mcp.mirror.serving import FreshnessPolicy
from screvi_mcp.server.app import build_server
from screvi_mcp.server.backend import Backend, BackendConfig

FRESH = FreshnessPolicy(max_age=3600.0)


@asynccontextmanager
async def mirror_server(config: BackendConfig) -> AsyncIterator[Client]:
    backend = Backend(config)
    server = build_server(backend)
    try:
        await backend.shared_client()
        async with Client(server, cache=None) as client:  # type: ignore[arg-type]
            yield client
    finally:
        await backend.aclose()


def _config(stand_in: StandIn | None, mirror: Path, policy: FreshnessPolicy) -> BackendConfig:
    return BackendConfig(
        api_key=stand_in.key if stand_in else None,
        base_url=stand_in.base_url if stand_in else None,
        mirror_path=mirror,
        mirror_policy=policy,
    )


async def _call(client: Client, name: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(name, arguments)
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    assert not result.is_error, text
    return text


async def test_writes_go_to_screvi_first_and_show_up_on_both_sides(
    stand_in: StandIn, mirror_path: Path
) -> None:
    async with stand_in.client() as client:
        ids = await seed(client)
    await sync(stand_in, mirror_path)
    async with mirror_server(_config(stand_in, mirror_path, FRESH)) as mcp:
        created = await _call(
            mcp,
            "create_highlight",
            {
                "content": "Lichens are partnerships of fungi and algae.",
                "tags": ["biology"],
                "source_id": ids["book"],
            },
        )
        async with stand_in.client() as source:
            found = await search_ids(source, "lichens fungi")
            assert found, "the write did not reach the stand-in"
            new_id = found[0]
            assert new_id in created
            await _call(mcp, "update_highlight", {"highlight_id": ids["tide"], "favorite": True})
            await _call(mcp, "add_highlight_tags", {"highlight_id": new_id, "tags": ["symbiosis"]})
            await _call(mcp, "delete_highlight", {"highlight_id": ids["lone"]})
            await _call(
                mcp, "update_tag", {"tag_id": (await source.list_tags())[0].id, "color": "#00ff00"}
            )
            assert (await source.get_highlight(ids["tide"])).favorite
        # Read through the server: answered by the mirror, which already has the writes.
        listed = await _call(mcp, "search_highlights", {"query": "lichens fungi"})
        assert new_id in listed
    # Without any sync in between, the mirror equals the stand-in.
    await assert_same(stand_in, mirror_path)


async def test_a_refused_write_changes_nothing_locally(
    stand_in: StandIn, mirror_path: Path
) -> None:
    async with stand_in.client() as client:
        await seed(client)
    await sync(stand_in, mirror_path)
    async with mirror_server(_config(stand_in, mirror_path, FRESH)) as mcp:
        missing = "00000000-0000-4000-8000-000000000000"
        result = await mcp.call_tool("create_highlight", {"content": "x", "source_id": missing})
        assert result.is_error
    await assert_same(stand_in, mirror_path)


async def test_a_stale_mirror_refreshes_before_answering(
    stand_in: StandIn, mirror_path: Path
) -> None:
    async with stand_in.client() as client:
        await seed(client)
    await sync(stand_in, mirror_path)
    async with stand_in.client() as client:
        await client.create_highlight("Volcanic islands rise from the ocean floor.")
    stale = FreshnessPolicy(max_age=0.0, wait=30.0)  # the wait is a bound, not a timing check
    async with mirror_server(_config(stand_in, mirror_path, stale)) as mcp:
        text = await _call(mcp, "search_highlights", {"query": "volcanic islands"})
        assert "Volcanic islands" in text
        assert "Note:" not in text


async def test_an_unreachable_screvi_is_answered_from_the_mirror_with_its_age(
    stand_in: StandIn, mirror_path: Path
) -> None:
    async with stand_in.client() as client:
        await seed(client)
    await sync(stand_in, mirror_path)
    config = BackendConfig(
        api_key=stand_in.key,
        base_url=stand_in.base_url,
        mirror_path=mirror_path,
        mirror_policy=FreshnessPolicy(max_age=0.0, wait=0.5, sync_time_limit=5.0),
    )
    stand_in.throttle(1, window_seconds=600.0)  # one request, then 429 for ten minutes
    async with mirror_server(config) as mcp:
        text = await _call(mcp, "search_highlights", {"query": "compound interest"})
        assert "compound interest" in text  # answered
        assert "Note: Answered from the local mirror (last synced" in text


async def test_without_a_key_the_mirror_is_read_only_and_says_why(
    stand_in: StandIn, mirror_path: Path
) -> None:
    async with stand_in.client() as client:
        await seed(client)
    await sync(stand_in, mirror_path)
    async with mirror_server(_config(None, mirror_path, FreshnessPolicy(max_age=0.0))) as mcp:
        tools = {tool.name for tool in (await mcp.list_tools()).tools}
        assert "search_highlights" in tools and "create_highlight" not in tools
        assert "SCREVI_API_KEY" in (mcp.instructions or "")
        text = await _call(mcp, "list_tags", {})
        assert "ocean" in text
        assert "no API key is set" in text


async def test_mirror_lists_and_search_match_the_source_through_tools(
    stand_in: StandIn, mirror_path: Path
) -> None:
    """The same tool calls give the same answers on the mirror as on hosted mode.

    Pages of 100 as the real sync uses: highlights made in the same instant on one page keep
    the server's order among themselves (across pages their order is not knowable).
    """
    async with stand_in.client() as client:
        await seed(client)
    await sync(stand_in, mirror_path, replace(FAST, per_page=100))
    hosted = BackendConfig(api_key=stand_in.key, base_url=stand_in.base_url)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_highlights", {"response_format": "detailed"}),
        ("list_sources", {}),
        ("list_tags", {}),
        ("search_highlights", {"query": "moon tides"}),
        ("search_highlights", {"query": "patience", "response_format": "detailed"}),
    ]
    answers: dict[str, list[str]] = {}
    for name, config in (("mirror", _config(stand_in, mirror_path, FRESH)), ("hosted", hosted)):
        async with mirror_server(config) as mcp:
            answers[name] = [await _call(mcp, tool, args) for tool, args in calls]
    for (tool, args), mine, theirs in zip(calls, answers["mirror"], answers["hosted"], strict=True):
        assert mine == theirs, (tool, json.dumps(args))


async def test_reads_of_a_mirror_are_not_held_to_a_rate_limit(
    stand_in: StandIn, mirror_path: Path
) -> None:
    """The mirror file's own API limit (here 3/min, as `library rate-limit 3` sets it) does
    not apply to the server's local reads: only Screvi's traffic is rate limited."""
    from screvi_mcp.local.api.app import RATE_LIMIT_SETTING
    from screvi_mcp.local.storage.library import Library

    await sync(stand_in, mirror_path)
    library = Library.open(mirror_path)
    try:
        library.set_setting(RATE_LIMIT_SETTING, "3")
    finally:
        library.close()
    async with mirror_server(_config(stand_in, mirror_path, FRESH)) as mcp:
        for _ in range(6):
            await _call(mcp, "list_tags", {})


@pytest.fixture
def articles_then_stand_in(stand_in_path: Path) -> Iterator[tuple[StandIn, dict[str, str]]]:
    """A stand-in holding a parsed article and one Screvi has not parsed yet."""
    ids = {
        "parsed": add_article(
            stand_in_path,
            "http://127.0.0.1:9/parsed",
            title="Parsed page",
            body="Body text.",
            tags=["reading"],
        ),
        "queued": add_article(stand_in_path, "http://127.0.0.1:9/queued", title="", body=None),
    }
    # Queued, and not due for the stand-in's own fetcher before the test parses it.
    conn = sqlite3.connect(stand_in_path)
    with conn:
        conn.execute(
            "UPDATE articles SET next_attempt_at = '9999-01-01T00:00:00.000000Z' "
            "WHERE source_id = ?",
            (ids["queued"],),
        )
    conn.close()
    with serve_stand_in(stand_in_path) as server:
        yield server, ids


async def test_source_article_and_tag_writes_go_through(
    articles_then_stand_in: tuple[StandIn, dict[str, str]], mirror_path: Path
) -> None:
    stand_in, articles = articles_then_stand_in
    async with stand_in.client() as client:
        ids = await seed(client)
    await sync(stand_in, mirror_path)
    async with mirror_server(_config(stand_in, mirror_path, FRESH)) as mcp:
        made = await _call(mcp, "create_source", {"name": "Field notes", "type": "custom"})
        assert "Field notes" in made
        await _call(mcp, "update_source", {"source_id": ids["book"], "author": "R. Carson"})
        await _call(mcp, "delete_source", {"source_id": ids["notes"], "cascade": True})
        await _call(
            mcp, "update_article", {"article_id": articles["parsed"], "home_status": "archive"}
        )
        await _call(mcp, "add_article_tags", {"article_id": articles["parsed"], "tags": ["keep"]})
        await _call(mcp, "create_tag", {"name": "Someday"})
        await assert_same(stand_in, mirror_path)
        async with stand_in.client() as source:
            tags = {tag.name: tag.id for tag in await source.list_tags()}
        await _call(mcp, "delete_tag", {"tag_id": tags["reading"]})
        assert "reading" not in await _call(mcp, "list_tags", {})
    # Deleting a tag also touches the items that carried it (their updated_at, on the
    # stand-in): the mirror learns those times with its next sync (README, known limits).
    await sync(stand_in, mirror_path)
    await assert_same(stand_in, mirror_path)


async def test_a_body_screvi_parses_after_the_sync_is_read_from_screvi(
    articles_then_stand_in: tuple[StandIn, dict[str, str]], mirror_path: Path
) -> None:
    stand_in, articles = articles_then_stand_in
    await sync(stand_in, mirror_path)
    # Screvi parses the page in the background (here: behind the stand-in's API).
    library = Library.open(stand_in.path)
    try:
        with library.write() as conn:
            store_parsed(
                conn,
                articles["queued"],
                "http://127.0.0.1:9/queued",
                ExtractedArticle(
                    content_html="<p>Parsed later.</p>", content_text="Parsed later.", title="Later"
                ),
            )
    finally:
        library.close()
    async with mirror_server(_config(stand_in, mirror_path, FRESH)) as mcp:
        text = await _call(mcp, "read_article", {"article_id": articles["queued"]})
    assert "Parsed later." in text
    await sync(stand_in, mirror_path)
    await assert_same(stand_in, mirror_path)
