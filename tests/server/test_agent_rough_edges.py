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
