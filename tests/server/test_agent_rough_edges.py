"""What an agent actually sends and what it needs back, found by driving the server as one.

Each test is a rough edge an agent hit: a next step that sends it round in circles, an
argument named as the REST API spells it instead of as the tool does, an id pasted with the
quotes around it, a chunk past the end of an article read as an empty success.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from server_testkit import (
    Seed,
    assert_tool_error,
    call_error,
    call_ok,
    insert_article,
    mcp_client,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def client(shared_client: Client) -> Client:
    return shared_client


async def test_deleting_a_saved_article_says_to_archive_it_not_to_cascade(
    library_path: Path,
) -> None:
    # The generic 409 advice ("call again with cascade=true") sent the agent into a loop:
    # cascade cannot delete an article either.
    async with mcp_client(library_path) as client:
        await call_ok(client, "list_tags")  # the library's start-up hooks have run
        article_id = insert_article(
            library_path,
            url="http://127.0.0.1:9/kept",
            title="Kept",
            parse_state="parsed",
            text="Body.",
        )
        plain = await call_error(client, "delete_source", {"source_id": article_id})
        cascaded = await call_error(
            client, "delete_source", {"source_id": article_id, "cascade": True}
        )
        still_there = await call_ok(client, "read_article", {"article_id": article_id})
    for text in (plain, cascaded):
        assert_tool_error(text, "conflict", article_id, "update_article", "archive")
        assert "cascade=true" not in text, text
        assert "PATCH" not in text, text  # REST wording means nothing to an agent
    assert "Body." in still_there


@pytest.mark.parametrize(
    ("tool", "argument", "list_tool"),
    [
        ("update_tag", "tag_id", "list_tags"),
        ("delete_tag", "tag_id", "list_tags"),
        ("get_source", "source_id", "list_sources"),
        ("read_article", "article_id", "list_articles"),
    ],
)
async def test_not_found_points_at_the_list_tool_that_has_the_ids(
    client: Client, tool: str, argument: str, list_tool: str
) -> None:
    # `update_tag(tag_id="ML")`: the agent gave a name; "search_highlights" cannot find a
    # tag id, list_tags can.
    arguments: dict[str, object] = {argument: "ML"}
    if tool == "update_tag":
        arguments["name"] = "machine-learning"
    text = await call_error(client, tool, arguments)
    assert_tool_error(text, "not_found", "ML", list_tool)


@pytest.mark.parametrize(
    "pasted",
    [
        '"{id}"',  # copied with the JSON quotes around it
        "'{id}'",
        "`{id}`",  # copied from a markdown code span
        "  {id}\n",
    ],
)
async def test_an_id_pasted_with_quotes_or_spaces_still_finds_the_item(
    client: Client, seed: Seed, pasted: str
) -> None:
    highlight = await call_ok(
        client, "get_highlight", {"highlight_id": pasted.format(id=seed.book_highlight_id)}
    )
    listed = await call_ok(client, "list_highlights", {"source_id": pasted.format(id=seed.book_id)})
    assert seed.book_highlight_id in highlight
    assert seed.book_id in listed


async def test_a_blank_query_names_the_query_argument(client: Client) -> None:
    # The REST parameter is `q`; the tool's argument is `query`.
    text = await call_error(client, "search_highlights", {"query": "   "})
    assert_tool_error(text, "invalid_parameter", "query")
    assert "q:" not in text, text


async def test_reading_past_the_end_of_an_article_says_where_it_ends(
    client: Client, seed: Seed
) -> None:
    # It answered "Characters 1000000–1000000 of 12000. This is the end" around an empty
    # body, as a success: an agent that overshot learnt nothing about where to go back to.
    text = await call_error(
        client, "read_article", {"article_id": seed.article_id, "offset": 1_000_000}
    )
    length = len(seed.article_text)
    assert_tool_error(text, "invalid_arguments", "offset", str(length))
    assert "offset=0" in text


async def test_a_page_past_the_end_names_the_last_page(client: Client) -> None:
    listed = await call_ok(client, "list_highlights", {"per_page": 1})
    pages = int(listed.rsplit("Page 1 of ", 1)[1].split(" ", 1)[0])
    assert pages > 1
    text = await call_ok(client, "list_highlights", {"per_page": 1, "page": pages + 5})
    assert f"the last page is {pages}" in text, text


@pytest.mark.parametrize("tool", ["create_tag", "update_tag"])
async def test_a_blank_tag_name_is_named_name_not_name_0(
    client: Client, seed: Seed, tool: str
) -> None:
    arguments = {"name": "   "} | ({"tag_id": seed.tag_id} if tool == "update_tag" else {})
    text = await call_error(client, tool, arguments)
    assert_tool_error(text, "validation_failed", "name: ")
    assert "name[0]" not in text, text


async def test_both_parents_reads_without_pydantic_noise(client: Client, seed: Seed) -> None:
    text = await call_error(
        client,
        "create_highlight",
        {"content": "x", "source_id": seed.book_id, "article_id": seed.article_id},
    )
    assert_tool_error(text, "validation_failed", "source_id or article_id, not both")
    assert "Value error" not in text, text


async def test_counts_of_one_read_in_the_singular() -> None:
    from screvi_mcp.server.render import counted

    assert counted(1, "highlights") == "1 highlight"
    assert counted(1, "matches") == "1 match"
    assert counted(1, "tags") == "1 tag"
    assert counted(0, "articles") == "0 articles"
    assert counted(2, "sources") == "2 sources"
