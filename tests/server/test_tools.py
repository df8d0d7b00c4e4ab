"""Every tool through the SDK's in-process client: one success and one failure each.

Failures must read `[code] … Next: …` and name what the agent has to fix: the id that was
not found, the argument that was rejected, the conflicting item.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from mcp import Client
from server_testkit import (
    SAVE_URL,
    Seed,
    assert_tool_error,
    call_error,
    call_ok,
    insert_article,
    mcp_client,
)

from screvi_mcp import contract

MISSING_ID = "00000000-0000-4000-8000-000000000000"

# Tests that take `client` share one server and library (see `shared_client`): they only read,
# or fail without writing. Tests that write open their own over a copy of the library.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def client(shared_client: Client) -> Client:
    return shared_client


def set_subscription(library_path: Path, active: bool) -> None:
    from screvi_mcp.local.api.auth import SUBSCRIPTION_SETTING

    conn = sqlite3.connect(library_path)
    try:
        with conn:
            conn.execute(
                "INSERT INTO settings(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (SUBSCRIPTION_SETTING, "1" if active else "0"),
            )
    finally:
        conn.close()


# Search -----------------------------------------------------------------------------------


async def test_search_highlights_finds_by_keyword(client: Client, seed: Seed) -> None:
    text = await call_ok(client, "search_highlights", {"query": "falsehoods repetition"})
    assert "falsehoods" in text
    assert seed.second_book_highlight_id in text
    assert "Thinking, Fast and Slow by Daniel Kahneman" in text


async def test_search_highlights_rejects_an_empty_query(client: Client) -> None:
    text = await call_error(client, "search_highlights", {"query": ""})
    assert_tool_error(text, "invalid_arguments", "query")


# Highlights -------------------------------------------------------------------------------


async def test_list_highlights_filters_by_source(client: Client, seed: Seed) -> None:
    text = await call_ok(client, "list_highlights", {"source_id": seed.book_id})
    assert seed.book_highlight_id in text and seed.second_book_highlight_id in text
    assert seed.note_highlight_id not in text
    assert "Page 1 of 1 (2 highlights)" in text


async def test_list_highlights_rejects_a_bad_date(client: Client) -> None:
    text = await call_error(client, "list_highlights", {"updated_since": "last tuesday"})
    assert_tool_error(text, "invalid_parameter", "updated_since")


async def test_get_highlight(client: Client, seed: Seed) -> None:
    text = await call_ok(client, "get_highlight", {"highlight_id": seed.book_highlight_id})
    assert "Nothing in life is as important" in text
    assert "tags: psychology" in text
    assert "location 10" in text


async def test_get_highlight_not_found_names_the_id(client: Client) -> None:
    text = await call_error(client, "get_highlight", {"highlight_id": MISSING_ID})
    assert_tool_error(text, "not_found", f"Highlight {MISSING_ID}")


async def test_get_random_highlights(client: Client, seed: Seed) -> None:
    text = await call_ok(client, "get_random_highlights", {"count": 1, "favorite": True})
    assert seed.note_highlight_id in text


async def test_get_random_highlights_none_matching(client: Client) -> None:
    text = await call_error(client, "get_random_highlights", {"tag": "no-such-tag"})
    assert_tool_error(text, "not_found", "highlight")


async def test_create_highlight(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(
            client,
            "create_highlight",
            {"content": "Slow is smooth.", "source_id": seed.book_id, "tags": ["Craft"]},
        )
        created = re.search(r"id ([0-9a-f-]{36})", text)
        assert created is not None
        fetched = await call_ok(client, "get_highlight", {"highlight_id": created.group(1)})
    assert text.startswith("Created:")
    assert "Slow is smooth." in fetched and "tags: craft" in fetched


async def test_create_highlight_with_source_and_article(client: Client, seed: Seed) -> None:
    text = await call_error(
        client,
        "create_highlight",
        {"content": "Both?", "source_id": seed.book_id, "article_id": seed.article_id},
    )
    assert_tool_error(text, "validation_failed", "article_id")


async def test_create_highlights_bulk(library_path: Path, seed: Seed) -> None:
    items = [
        {"content": "First of two.", "source_id": seed.book_id},
        {"content": "Second of two.", "tags": ["bulk"]},
    ]
    async with mcp_client(library_path) as client:
        text = await call_ok(client, "create_highlights_bulk", {"highlights": items})
        listed = await call_ok(client, "list_highlights", {"tag": "bulk"})
    assert text.startswith("Created 2 highlights:")
    assert "Second of two." in listed


async def test_create_highlights_bulk_names_the_bad_item(client: Client, seed: Seed) -> None:
    items = [
        {"content": "Fine.", "source_id": seed.book_id},
        {"content": "Orphan.", "source_id": MISSING_ID},
    ]
    text = await call_error(client, "create_highlights_bulk", {"highlights": items})
    listed = await call_ok(client, "search_highlights", {"query": "Fine"})
    assert_tool_error(text, "validation_failed", "highlights[1].source_id")
    assert "Fine." not in listed, "a failed bulk request must write nothing"


async def test_update_highlight(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(
            client,
            "update_highlight",
            {"highlight_id": seed.book_highlight_id, "note": "see chapter 38", "favorite": True},
        )
        cleared = await call_ok(
            client, "update_highlight", {"highlight_id": seed.book_highlight_id, "clear": ["note"]}
        )
    assert text.startswith("Updated:")
    assert "note: see chapter 38" in text and "favorite" in text
    assert "note:" not in cleared


async def test_update_highlight_not_found(client: Client) -> None:
    text = await call_error(
        client, "update_highlight", {"highlight_id": MISSING_ID, "favorite": True}
    )
    assert_tool_error(text, "not_found", MISSING_ID)


async def test_delete_highlight(library_path: Path, seed: Seed) -> None:
    arguments = {"highlight_id": seed.second_book_highlight_id}
    async with mcp_client(library_path) as client:
        text = await call_ok(client, "delete_highlight", arguments)
        again = await call_ok(client, "delete_highlight", arguments)
        listed = await call_ok(client, "list_highlights", {"source_id": seed.book_id})
    assert text == f"Deleted highlight {seed.second_book_highlight_id}."
    assert again == text, "deleting twice is harmless"
    assert seed.second_book_highlight_id not in listed


async def test_delete_highlight_not_found(client: Client) -> None:
    text = await call_error(client, "delete_highlight", {"highlight_id": MISSING_ID})
    assert_tool_error(text, "not_found", MISSING_ID)


async def test_add_highlight_tags(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(
            client,
            "add_highlight_tags",
            {"highlight_id": seed.book_highlight_id, "tags": ["Focus", "PSYCHOLOGY"]},
        )
    head = f"Highlight {seed.book_highlight_id} now has tags: "
    assert text.startswith(head), text
    assert sorted(text.removeprefix(head).split(", ")) == ["Focus", "psychology"]


async def test_add_highlight_tags_not_found(client: Client) -> None:
    text = await call_error(
        client, "add_highlight_tags", {"highlight_id": MISSING_ID, "tags": ["x"]}
    )
    assert_tool_error(text, "not_found", MISSING_ID)


async def test_remove_highlight_tags(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(
            client,
            "remove_highlight_tags",
            {"highlight_id": seed.book_highlight_id, "tags": ["psychology"]},
        )
    assert text == f"Highlight {seed.book_highlight_id} now has no tags."


async def test_remove_highlight_tags_needs_tags(client: Client, seed: Seed) -> None:
    text = await call_error(
        client, "remove_highlight_tags", {"highlight_id": seed.book_highlight_id, "tags": []}
    )
    assert_tool_error(text, "invalid_arguments", "tags")


# Sources ----------------------------------------------------------------------------------


async def test_list_sources(client: Client, seed: Seed) -> None:
    text = await call_ok(client, "list_sources", {"type": "book"})
    assert "Thinking, Fast and Slow by Daniel Kahneman (book) — 2 highlights" in text
    assert seed.book_id in text
    assert "An empty notebook" not in text


async def test_list_sources_rejects_an_unknown_type(client: Client) -> None:
    text = await call_error(client, "list_sources", {"type": "magazine"})
    assert_tool_error(text, "invalid_arguments", "type")


async def test_get_source(client: Client, seed: Seed) -> None:
    text = await call_ok(client, "get_source", {"source_id": seed.book_id})
    assert text.startswith("Thinking, Fast and Slow by Daniel Kahneman")
    # Reading order: by location.
    assert text.index("Nothing in life") < text.index("reliable way")


async def test_get_source_not_found(client: Client) -> None:
    text = await call_error(client, "get_source", {"source_id": MISSING_ID})
    assert_tool_error(text, "not_found", f"Source {MISSING_ID}")


async def test_create_source(library_path: Path) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(
            client,
            "create_source",
            {"name": "The Knowledge Project", "type": "podcast", "author": "Shane Parrish"},
        )
    assert text.startswith("Created:\nThe Knowledge Project by Shane Parrish (podcast)")


async def test_create_second_self_source_conflicts(client: Client, seed: Seed) -> None:
    text = await call_error(client, "create_source", {"name": "More notes", "type": "self"})
    assert text.startswith("[conflict] "), text
    assert seed.self_source_id in text, "the conflict names the existing source"
    assert "Next:" in text, f"no 'Next:' hint in: {text}"


async def test_update_source(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(
            client, "update_source", {"source_id": seed.book_id, "note": "reread part II"}
        )
    assert text.startswith("Updated:")
    assert "note: reread part II" in text


async def test_update_source_rejects_a_long_name(client: Client, seed: Seed) -> None:
    text = await call_error(
        client,
        "update_source",
        {"source_id": seed.book_id, "name": "x" * (contract.MAX_SOURCE_NAME + 1)},
    )
    assert_tool_error(text, "invalid_arguments", "name")


async def test_delete_source(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(client, "delete_source", {"source_id": seed.empty_source_id})
        gone = await call_error(client, "get_source", {"source_id": seed.empty_source_id})
    assert text == f"Deleted source {seed.empty_source_id}."
    assert_tool_error(gone, "not_found", seed.empty_source_id)


async def test_delete_source_with_highlights_conflicts(client: Client, seed: Seed) -> None:
    text = await call_error(client, "delete_source", {"source_id": seed.book_id})
    assert text.startswith("[conflict] "), text
    assert "cascade" in text
    assert "Next:" in text, f"no 'Next:' hint in: {text}"


# Articles ---------------------------------------------------------------------------------


async def test_list_articles(client: Client, seed: Seed) -> None:
    text = await call_ok(client, "list_articles", {"home_status": "inbox"})
    assert "On attention" in text and seed.article_id in text


async def test_embedded_articles_show_no_dead_web_app_link(client: Client, seed: Seed) -> None:
    text = await call_ok(client, "list_articles", {"response_format": "detailed"})
    assert seed.article_id in text and "saved " in text
    assert "screvi.embedded" not in text and "/app/articles" not in text


async def test_screvi_web_app_links_are_kept() -> None:
    from screvi_mcp.server.render import web_app_link

    assert web_app_link("https://app.screvi.com/articles/1") == "https://app.screvi.com/articles/1"
    assert web_app_link("http://127.0.0.1:8080/app/articles/1") is None


async def test_list_articles_rejects_a_bad_date(client: Client) -> None:
    text = await call_error(client, "list_articles", {"saved_since": "yesterday-ish"})
    assert_tool_error(text, "invalid_parameter", "saved_since")


async def test_save_article_is_queued(library_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCREVI_ALLOW_PRIVATE_NETWORKS", "1")  # SAVE_URL is on loopback
    async with mcp_client(library_path) as client:
        text = await call_ok(client, "save_article", {"url": SAVE_URL, "tags": ["later"]})
    match = re.fullmatch(
        r"Saved: article [0-9a-f-]{36} \(parse_state queued\)\. It is still being fetched; "
        r"read_article will have it shortly\.",
        text,
    )
    assert match is not None, text


async def test_save_article_rejects_a_non_url(client: Client) -> None:
    text = await call_error(client, "save_article", {"url": "not a url"})
    assert_tool_error(text, "validation_failed", "url")


async def test_read_article_in_two_chunks(client: Client, seed: Seed) -> None:
    first = await call_ok(client, "read_article", {"article_id": seed.article_id})
    more = re.search(r"call read_article with offset=(\d+) to continue", first)
    assert more is not None, first
    offset = int(more.group(1))
    second = await call_ok(
        client, "read_article", {"article_id": seed.article_id, "offset": offset}
    )
    # The first chunk ends between two words, within the default 8000 characters.
    assert 7900 < offset <= 8000 and seed.article_text[offset - 1].isspace()
    assert f"Characters 0–{offset} of {len(seed.article_text)}" in first
    assert seed.article_text[:200] in first
    assert "This is the end of the article." in second
    assert f"Characters {offset}–{len(seed.article_text)}" in second
    assert seed.article_text[-200:] in second
    assert "offset=" not in second


async def test_read_article_without_body_says_to_wait(library_path: Path) -> None:
    async with mcp_client(library_path) as client:
        await call_ok(client, "list_tags")  # the library's start-up hooks have run
        article_id = insert_article(
            library_path,
            url="http://127.0.0.1:9/slow-page",
            title="A slow page",
            parse_state="fetching",
        )
        text = await call_ok(client, "read_article", {"article_id": article_id})
    assert "parse_state fetching" in text
    assert "Wait a few seconds and call read_article again" in text


async def test_read_article_not_found(client: Client) -> None:
    text = await call_error(client, "read_article", {"article_id": MISSING_ID})
    assert_tool_error(text, "not_found", f"Article {MISSING_ID}")


async def test_update_article(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(
            client,
            "update_article",
            {"article_id": seed.article_id, "home_status": "later", "favorite": True},
        )
    assert text.startswith("Updated:")
    assert "later" in text and "favorite" in text


async def test_update_article_rejects_a_long_title(client: Client, seed: Seed) -> None:
    text = await call_error(
        client,
        "update_article",
        {"article_id": seed.article_id, "title": "t" * (contract.MAX_ARTICLE_TITLE + 1)},
    )
    assert_tool_error(text, "invalid_arguments", "title")


async def test_add_article_tags(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(
            client, "add_article_tags", {"article_id": seed.article_id, "tags": ["attention"]}
        )
    assert text == f"Article {seed.article_id} now has tags: attention"


async def test_add_article_tags_not_found(client: Client) -> None:
    text = await call_error(client, "add_article_tags", {"article_id": MISSING_ID, "tags": ["x"]})
    assert_tool_error(text, "not_found", f"Article {MISSING_ID}")


async def test_remove_article_tags(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        await call_ok(
            client, "add_article_tags", {"article_id": seed.article_id, "tags": ["a", "b"]}
        )
        text = await call_ok(
            client, "remove_article_tags", {"article_id": seed.article_id, "tags": ["a"]}
        )
    assert text == f"Article {seed.article_id} now has tags: b"


async def test_remove_article_tags_not_found(client: Client) -> None:
    text = await call_error(
        client, "remove_article_tags", {"article_id": MISSING_ID, "tags": ["x"]}
    )
    assert_tool_error(text, "not_found", f"Article {MISSING_ID}")


# Tags -------------------------------------------------------------------------------------


async def test_list_tags(client: Client, seed: Seed) -> None:
    text = await call_ok(client, "list_tags")
    assert text.startswith("2 tags:")
    assert f"psychology — 1 highlight, 0 articles (id {seed.tag_id})" in text


async def test_list_tags_without_subscription(library_path: Path) -> None:
    set_subscription(library_path, active=False)
    async with mcp_client(library_path) as client:
        text = await call_error(client, "list_tags")
    assert_tool_error(text, "subscription_required", "subscription")


async def test_create_tag(library_path: Path) -> None:
    async with mcp_client(library_path) as client:
        created = await call_ok(client, "create_tag", {"name": "ideas", "color": "#ff8800"})
        again = await call_ok(client, "create_tag", {"name": "IDEAS"})
    assert created.startswith("Created tag ideas (id ")
    assert again.startswith("Already exists: tag ideas")


async def test_create_tag_rejects_a_bad_colour(client: Client) -> None:
    text = await call_error(client, "create_tag", {"name": "ideas", "color": "orange"})
    assert_tool_error(text, "invalid_arguments", "color")


async def test_update_tag(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(client, "update_tag", {"tag_id": seed.tag_id, "name": "mind"})
        highlight = await call_ok(client, "get_highlight", {"highlight_id": seed.book_highlight_id})
    assert text == f"Updated tag mind (id {seed.tag_id})"
    assert "tags: mind" in highlight


async def test_update_tag_name_clash(client: Client, seed: Seed) -> None:
    text = await call_error(client, "update_tag", {"tag_id": seed.tag_id, "name": "craft"})
    assert_tool_error(text, "validation_failed", "name")


async def test_delete_tag(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path) as client:
        text = await call_ok(client, "delete_tag", {"tag_id": seed.other_tag_id})
        highlight = await call_ok(client, "get_highlight", {"highlight_id": seed.note_highlight_id})
    assert text.startswith(f"Deleted tag {seed.other_tag_id}")
    assert "craft" not in highlight


async def test_delete_tag_not_found(client: Client) -> None:
    text = await call_error(client, "delete_tag", {"tag_id": MISSING_ID})
    assert_tool_error(text, "not_found", f"Tag {MISSING_ID}")
