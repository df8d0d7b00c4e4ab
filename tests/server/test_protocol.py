"""The server as an MCP host sees it: the legacy handshake, read-only mode and toolsets,
annotations, argument errors, resources and prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client, MCPError
from mcp.types import TextContent, TextResourceContents
from server_testkit import Seed, assert_tool_error, call_error, call_ok, mcp_client

from screvi_mcp.server.resources import SKILL_URI

pytestmark = pytest.mark.asyncio(loop_scope="module")

READ_TOOLS = {
    "search_highlights",
    "list_highlights",
    "get_highlight",
    "get_random_highlights",
    "list_sources",
    "get_source",
    "list_articles",
    "read_article",
    "search_articles",
    "list_tags",
}
WRITE_TOOLS = {
    "create_highlight",
    "create_highlights_bulk",
    "update_highlight",
    "delete_highlight",
    "add_highlight_tags",
    "remove_highlight_tags",
    "create_source",
    "update_source",
    "delete_source",
    "save_article",
    "update_article",
    "add_article_tags",
    "remove_article_tags",
    "create_tag",
    "update_tag",
    "delete_tag",
}


@pytest.fixture
def client(shared_client: Client) -> Client:
    return shared_client


# Handshakes -------------------------------------------------------------------------------


async def test_legacy_handshake(library_path: Path, seed: Seed) -> None:
    async with mcp_client(library_path, mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        text = await call_ok(client, "get_highlight", {"highlight_id": seed.book_highlight_id})
    assert names == READ_TOOLS | WRITE_TOOLS
    assert "Nothing in life is as important" in text


async def test_server_identity_and_instructions(library_path: Path) -> None:
    async with mcp_client(library_path, mode="legacy") as client:
        server_info, instructions = client.server_info, client.instructions
    assert server_info is not None and server_info.name == "screvi"
    assert instructions is not None and "search_highlights" in instructions


# Read-only mode and toolsets --------------------------------------------------------------


async def test_read_only_lists_no_write_tool(library_path: Path) -> None:
    async with mcp_client(library_path, read_only=True) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        refused = await call_error(client, "create_tag", {"name": "nope"})
    assert names == READ_TOOLS
    assert_tool_error(refused, "unknown_tool", "create_tag", "read-only")


async def test_toolsets_limit_the_tools(library_path: Path) -> None:
    async with mcp_client(library_path, toolsets=("search", "tags")) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        refused = await call_error(client, "list_sources")
        read_only = await call_error(client, "save_article", {"url": "https://example.com/"})
    assert names == {"search_highlights", "list_tags", "create_tag", "update_tag", "delete_tag"}
    # A tool left out by --toolsets is not blamed on read-only mode.
    assert_tool_error(refused, "unknown_tool", "list_sources", "--toolsets search,tags")
    assert "read-only" not in refused
    assert "read-only" not in read_only and "articles" in read_only


async def test_read_only_toolsets(library_path: Path) -> None:
    async with mcp_client(library_path, read_only=True, toolsets=("articles",)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == {"list_articles", "read_article", "search_articles"}


# Annotations and schemas ------------------------------------------------------------------


async def test_every_tool_is_annotated(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert {tool.name for tool in tools} == READ_TOOLS | WRITE_TOOLS
    for tool in tools:
        hints = tool.annotations
        assert hints is not None, tool.name
        for hint in ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"):
            assert getattr(hints, hint) is not None, f"{tool.name}: {hint} is not set"
        assert hints.read_only_hint is (tool.name in READ_TOOLS), tool.name
        if hints.read_only_hint:
            assert hints.destructive_hint is False, tool.name
        assert tool.title and tool.description, tool.name


async def test_only_save_article_reaches_the_open_web(client: Client) -> None:
    tools = (await client.list_tools()).tools
    open_world = {
        tool.name for tool in tools if tool.annotations and tool.annotations.open_world_hint
    }
    assert open_world == {"save_article"}


async def test_schemas_carry_no_titles_or_null_unions(client: Client) -> None:
    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            assert not isinstance(node.get("title"), str), f"title left in {where}"
            assert {"type": "null"} not in node.get("anyOf", []), f"null union in {where}"
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}[{index}]")

    for tool in (await client.list_tools()).tools:
        walk(tool.input_schema, tool.name)


# Argument errors --------------------------------------------------------------------------


async def test_missing_argument_names_it(client: Client) -> None:
    text = await call_error(client, "get_highlight", {})
    assert_tool_error(text, "invalid_arguments", "highlight_id", "required")


async def test_several_bad_arguments_are_all_named(client: Client) -> None:
    text = await call_error(client, "list_highlights", {"page": 0, "per_page": 1000})
    assert_tool_error(text, "invalid_arguments", "page", "per_page")


async def test_bulk_item_errors_are_named_as_the_api_names_them(client: Client) -> None:
    items = [{"content": "fine"}, {"note": "no content"}, {"content": "x", "colour": "red"}]
    text = await call_error(client, "create_highlights_bulk", {"highlights": items})
    assert_tool_error(text, "invalid_arguments", "highlights[1].content", "highlights[2].colour")


async def test_pattern_errors_name_the_field(client: Client) -> None:
    text = await call_error(client, "update_tag", {"tag_id": "x", "color": "#zz"})
    assert_tool_error(text, "invalid_arguments", "color: String should match pattern")


async def test_a_crash_reveals_nothing(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    from screvi_mcp.client import ScreviClient

    async def crash(self: ScreviClient) -> None:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(ScreviClient, "list_tags", crash)
    text = await call_error(client, "list_tags")
    assert_tool_error(text, "internal_error")
    assert "secret" not in text


async def test_unknown_tool(client: Client) -> None:
    text = await call_error(client, "drop_library", {})
    assert_tool_error(text, "unknown_tool", "drop_library")
    assert "read-only" not in text  # nothing is hidden on this server: no false reason


# Resources --------------------------------------------------------------------------------


async def test_skill_resource_is_markdown(client: Client) -> None:
    listed = {str(resource.uri): resource for resource in (await client.list_resources()).resources}
    assert listed[SKILL_URI].mime_type == "text/markdown"
    result = await client.read_resource(SKILL_URI)
    [content] = result.contents
    assert isinstance(content, TextResourceContents)
    assert content.mime_type == "text/markdown"
    assert "search_highlights" in content.text or "# " in content.text
    assert content.text.lstrip().startswith(("---", "#"))


async def test_resource_templates_are_listed(client: Client) -> None:
    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    assert templates == {
        "screvi://highlights/{highlight_id}",
        "screvi://sources/{source_id}",
        "screvi://articles/{article_id}",
    }


async def test_highlight_resource(client: Client, seed: Seed) -> None:
    result = await client.read_resource(f"screvi://highlights/{seed.book_highlight_id}")
    [content] = result.contents
    assert isinstance(content, TextResourceContents)
    assert "Nothing in life is as important" in content.text
    assert "Thinking, Fast and Slow by Daniel Kahneman" in content.text


async def test_missing_highlight_resource_is_an_error(client: Client) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(MCPError) as raised:
        await client.read_resource(f"screvi://highlights/{missing}")
    message = str(raised.value)
    assert "[not_found]" in message and missing in message


async def test_source_and_article_resources(client: Client, seed: Seed) -> None:
    source = (await client.read_resource(f"screvi://sources/{seed.book_id}")).contents[0]
    article = (await client.read_resource(f"screvi://articles/{seed.article_id}")).contents[0]
    assert isinstance(source, TextResourceContents) and isinstance(article, TextResourceContents)
    assert "reliable way" in source.text
    assert seed.article_text[:100] in article.text
    assert "This is the end of the article." in article.text


# Prompts ----------------------------------------------------------------------------------


async def test_prompts_are_listed(client: Client) -> None:
    prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
    assert set(prompts) == {"answer_from_library", "review_topic", "triage_reading_list"}
    arguments = {arg.name: arg.required for arg in prompts["review_topic"].arguments or []}
    assert arguments == {"topic": True, "since": False}


async def test_prompt_with_arguments(client: Client) -> None:
    result = await client.get_prompt("review_topic", {"topic": "attention", "since": "2025-01-01"})
    [message] = result.messages
    assert isinstance(message.content, TextContent)
    assert message.content.text.startswith(
        "Review my highlights made since 2025-01-01 about: attention"
    )
    assert "search_highlights" in message.content.text


async def test_prompt_without_its_required_argument(client: Client) -> None:
    with pytest.raises(MCPError):
        await client.get_prompt("answer_from_library", {})
